//! Every integration test of `toolgate-policy` in one binary: one link instead of
//! one per file keeps a clean build's disk and time down. Each file is a
//! module; run one with `cargo test -p toolgate-policy --test all FILE::`.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "approval_settings.rs"]
mod approval_settings;
#[path = "boundary_attacks.rs"]
mod boundary_attacks;
#[path = "boundary_corpus.rs"]
mod boundary_corpus;
#[path = "bounded_intents.rs"]
mod bounded_intents;
#[path = "bounded_work.rs"]
mod bounded_work;
#[path = "channel_error_sources.rs"]
mod channel_error_sources;
#[path = "check_explain.rs"]
mod check_explain;
#[path = "config_runs_code.rs"]
mod config_runs_code;
#[path = "corpus.rs"]
mod corpus;
#[path = "corpus_attacks.rs"]
mod corpus_attacks;
#[path = "dir_watch_attacks.rs"]
mod dir_watch_attacks;
#[path = "env_allowlist_attacks.rs"]
mod env_allowlist_attacks;
#[path = "gate_approvals.rs"]
mod gate_approvals;
#[path = "git_same_line_writes.rs"]
mod git_same_line_writes;
#[path = "git_tracked_content.rs"]
mod git_tracked_content;
#[path = "in_order.rs"]
mod in_order;
#[path = "inherited_env_attacks.rs"]
mod inherited_env_attacks;
#[path = "mode_auto.rs"]
mod mode_auto;
#[path = "people.rs"]
mod people;
#[path = "policy_decisions.rs"]
mod policy_decisions;
#[path = "project_trust.rs"]
mod project_trust;
#[path = "prop_saved_patterns.rs"]
mod prop_saved_patterns;
#[path = "prop_shell.rs"]
mod prop_shell;
#[path = "prop_wrapping.rs"]
mod prop_wrapping;
#[path = "saved_pattern_attacks.rs"]
mod saved_pattern_attacks;
#[path = "secret_files.rs"]
mod secret_files;
#[path = "serve_settings.rs"]
mod serve_settings;
#[path = "shell_bad_input.rs"]
mod shell_bad_input;
#[path = "shell_grammar.rs"]
mod shell_grammar;
#[path = "shell_grammar_kinds.rs"]
mod shell_grammar_kinds;
#[path = "shell_requests.rs"]
mod shell_requests;
#[path = "shell_walker_attacks.rs"]
mod shell_walker_attacks;
#[path = "spec_refactor_attacks.rs"]
mod spec_refactor_attacks;
#[path = "verdict_dump.rs"]
mod verdict_dump;
#[path = "words_attacks.rs"]
mod words_attacks;

// Helpers the modules share, compiled once.
#[path = "corpus/fixture.rs"]
mod fixture;
#[path = "support/intent.rs"]
mod intent;
#[path = "support/saved.rs"]
mod saved;
