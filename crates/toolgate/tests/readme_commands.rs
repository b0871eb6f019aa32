//! The README's first command is what a new user types: it must name exactly one
//! binary of this workspace, or `cargo run` refuses with "could not determine
//! which binary to run" (the workspace has more than one binary).

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .unwrap()
}

/// The first line of the README's first `sh` block.
fn readme_run_command() -> String {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let block = readme
        .split("```sh\n")
        .nth(1)
        .expect("README has an sh block");
    let line = block.lines().next().unwrap();
    line.split('#').next().unwrap().trim().to_string()
}

#[test]
fn readme_run_command_names_exactly_one_binary() {
    let cmd = readme_run_command();
    let words: Vec<&str> = cmd.split_whitespace().collect();
    assert_eq!(&words[..2], &["cargo", "run"], "{cmd}");
    let args: Vec<&str> = words.split(|w| *w == "--").next().unwrap().to_vec();
    let package = args
        .iter()
        .position(|w| *w == "-p" || *w == "--package")
        .map(|i| args[i + 1]);
    let bin = args.iter().position(|w| *w == "--bin").map(|i| args[i + 1]);

    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut candidates = Vec::new();
    for p in meta["packages"].as_array().unwrap() {
        if package.is_some_and(|want| p["name"] != want) {
            continue;
        }
        // Without `--bin`, cargo runs the package's `default-run` when it has one.
        let wanted = bin.or_else(|| p["default_run"].as_str());
        for t in p["targets"].as_array().unwrap() {
            let is_bin = t["kind"].as_array().unwrap().iter().any(|k| k == "bin");
            if is_bin && wanted.is_none_or(|want| t["name"] == want) {
                candidates.push(t["name"].as_str().unwrap().to_string());
            }
        }
    }
    assert_eq!(
        candidates,
        vec!["toolgate".to_string()],
        "`{cmd}` must select the toolgate binary and only it"
    );
}
