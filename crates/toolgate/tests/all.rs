//! Every integration test of `toolgate` in one binary: one link instead of
//! one per file keeps a clean build's disk and time down. Each file is a
//! module; run one with `cargo test -p toolgate --test all FILE::`.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "agents_e2e.rs"]
mod agents_e2e;
#[path = "builder.rs"]
mod builder;
#[path = "channels.rs"]
mod channels;
#[path = "cli.rs"]
mod cli;
#[path = "conformance.rs"]
mod conformance;
#[path = "gateway.rs"]
mod gateway;
#[path = "hook.rs"]
mod hook;
#[path = "hook_asks.rs"]
mod hook_asks;
#[path = "intent_oracle.rs"]
mod intent_oracle;
#[path = "mcp_parallel_calls.rs"]
mod mcp_parallel_calls;
#[path = "mcp_slow_decision.rs"]
mod mcp_slow_decision;
#[path = "mode_auto.rs"]
mod mode_auto;
#[path = "one_answer.rs"]
mod one_answer;
#[path = "path_facts_sandbox.rs"]
mod path_facts_sandbox;
#[path = "readme_commands.rs"]
mod readme_commands;
#[path = "resource_kind.rs"]
mod resource_kind;
#[path = "sandbox_cli.rs"]
mod sandbox_cli;
#[path = "sandbox_escape.rs"]
mod sandbox_escape;
#[path = "serve_token.rs"]
mod serve_token;
#[path = "staged_asks.rs"]
mod staged_asks;
#[path = "team_store.rs"]
mod team_store;
#[path = "telemetry.rs"]
mod telemetry;
#[path = "undo_cli.rs"]
mod undo_cli;

// Helpers the modules share, compiled once.
mod conformance_support;
mod support;
// The PostgreSQL server of the team-store tests (shared with toolgate-store's).
#[path = "../../toolgate-store/tests/pg_server.rs"]
mod pg_server;
