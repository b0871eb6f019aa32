//! Every integration test of `toolgate-sandbox` in one binary: one link instead of
//! one per file keeps a clean build's disk and time down. Each file is a
//! module; run one with `cargo test -p toolgate-sandbox --test all FILE::`.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "escape.rs"]
mod escape;
#[path = "live.rs"]
mod live;
#[path = "protected_links.rs"]
mod protected_links;
#[path = "proxy.rs"]
mod proxy;
#[path = "routine.rs"]
mod routine;

// Helpers the modules share, compiled once.
mod common;
