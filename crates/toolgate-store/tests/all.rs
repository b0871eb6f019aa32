//! Every integration test of `toolgate-store` in one binary: one link instead of
//! one per file keeps a clean build's disk and time down. Each file is a
//! module; run one with `cargo test -p toolgate-store --test all FILE::`.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "approvals.rs"]
mod approvals;
#[path = "crash.rs"]
mod crash;
#[path = "error_sources.rs"]
mod error_sources;
#[path = "event_query.rs"]
mod event_query;
#[path = "formats.rs"]
mod formats;
#[path = "log.rs"]
mod log;
#[cfg(feature = "postgres")]
#[path = "pg.rs"]
mod pg;
#[path = "pipeline.rs"]
mod pipeline;
#[path = "spill.rs"]
mod spill;
#[path = "tail.rs"]
mod tail;
#[path = "tamper.rs"]
mod tamper;

// Helpers the modules share, compiled once.
mod common;
#[cfg(feature = "postgres")]
mod pg_server;
