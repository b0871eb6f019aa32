//! Every integration test of `toolgate-tools` in one binary: one link instead of
//! one per file keeps a clean build's disk and time down. Each file is a
//! module; run one with `cargo test -p toolgate-tools --test all FILE::`.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "error_sources.rs"]
mod error_sources;
#[path = "file_edit.rs"]
mod file_edit;
#[path = "file_patch.rs"]
mod file_patch;
#[path = "file_read.rs"]
mod file_read;
#[path = "file_search.rs"]
mod file_search;
#[path = "file_write.rs"]
mod file_write;
#[path = "previews.rs"]
mod previews;
#[path = "proc_bash.rs"]
mod proc_bash;
#[path = "proc_bash_git.rs"]
mod proc_bash_git;
#[path = "proc_registry.rs"]
mod proc_registry;
#[path = "proc_session.rs"]
mod proc_session;
#[path = "skill_boundary.rs"]
mod skill_boundary;
#[path = "web_fetch.rs"]
mod web_fetch;
#[path = "web_search.rs"]
mod web_search;

// Helpers the modules share, compiled once.
mod file_support;
#[path = "proc_support/mod.rs"]
mod support;
#[path = "web_support/mod.rs"]
mod web_support;
