//! Every integration test of `toolgate-http-guard` in one binary: one link instead of
//! one per file keeps a clean build's disk and time down. Each file is a
//! module; run one with `cargo test -p toolgate-http-guard --test all FILE::`.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "guard.rs"]
mod guard;
