//! Every integration test of `toolgate-core` in one binary: one link instead of
//! one per file keeps a clean build's disk and time down. Each file is a
//! module; run one with `cargo test -p toolgate-core --test all FILE::`.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "bound.rs"]
mod bound;
#[path = "decide_off_loop.rs"]
mod decide_off_loop;
#[path = "location.rs"]
mod location;
#[path = "output_check.rs"]
mod output_check;
#[path = "pipeline.rs"]
mod pipeline;
#[path = "registry.rs"]
mod registry;
