//! Every integration test of `toolgate-web` in one binary: one link instead of
//! one per file keeps a clean build's disk and time down. Each file is a
//! module; run one with `cargo test -p toolgate-web --test all FILE::`.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "browser.rs"]
mod browser;
#[path = "manifest.rs"]
mod manifest;
#[path = "people.rs"]
mod people;
#[path = "preview.rs"]
mod preview;
#[path = "web.rs"]
mod web;
