//! Every integration test of `toolgate-mcp` in one binary: one link instead of
//! one per file keeps a clean build's disk and time down. Each file is a
//! module; run one with `cargo test -p toolgate-mcp --test all FILE::`.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "catalogue_formats.rs"]
mod catalogue_formats;
#[path = "conformance_fixtures.rs"]
mod conformance_fixtures;
#[path = "http_pins.rs"]
mod http_pins;
#[path = "pins.rs"]
mod pins;
#[path = "tool_schemas.rs"]
mod tool_schemas;

// Helpers the modules share, compiled once.
#[path = "../../toolgate/tests/conformance_support/mod.rs"]
mod conformance_support;
