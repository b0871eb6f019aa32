//! One table, two enforcers: for every entry of the path facts, the sandbox
//! refuses what the policy refuses. Every protected entry is written by a
//! confined command in mode `auto` (with a location that also holds the home
//! directory, so the home's entries are inside it too) and none lands; every
//! credential entry, in the home directory and in the location and in upper
//! case, is read by a confined command and its content never shows.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::json;
use support::cli_env::CliEnv as Env;
use toolgate_paths::credential::{SECRET_DIRS, SECRET_PAIRS, sample_secret_names};
use toolgate_paths::protected::{Anchor, PROTECTED};
use toolgate_sandbox::test_util::scratch_parent;

const CANARY: &str = "CANARY-path-facts";

fn env() -> Env {
    Env::in_dir(&scratch_parent(Path::new(env!("CARGO_TARGET_TMPDIR"))).unwrap())
}

/// Runs `script` as `bash drive.sh` in mode `auto` with the base (home and
/// workspace) as the location; returns what the call printed.
fn drive(e: &Env, script: &str) -> String {
    std::fs::write(e.base.join("drive.sh"), script).unwrap();
    let input = json!({"command": "bash drive.sh"}).to_string();
    let out = e
        .command(&[
            "call",
            "bash",
            &input,
            "--mode",
            "auto",
            "--root",
            e.base.to_str().unwrap(),
        ])
        .current_dir(&e.base)
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn join(base: &Path, names: &[&str]) -> PathBuf {
    names.iter().fold(base.to_path_buf(), |p, n| p.join(n))
}

#[test]
fn every_protected_entry_written_inside_the_sandbox_is_refused_as_the_policy_refuses_it() {
    let e = env();
    let mut targets = Vec::new();
    for entry in PROTECTED {
        let at = match entry.anchor {
            Anchor::Anywhere => join(&e.ws.join("deep/er"), entry.names),
            Anchor::Home => join(&e.home, entry.names),
            Anchor::Root => continue,
        };
        targets.push(if entry.beneath { at.join("x") } else { at });
    }
    let script: String = targets
        .iter()
        .map(|t| {
            format!(
                "mkdir -p '{}' && echo evil > '{}'\n",
                t.parent().unwrap().display(),
                t.display()
            )
        })
        .collect();
    let text = drive(&e, &script);
    let mut landed = Vec::new();
    for t in &targets {
        if t.exists() {
            landed.push(t.display().to_string());
        }
    }
    assert!(landed.is_empty(), "landed: {landed:#?}\n{text}");
    assert!(
        text.contains("did not land"),
        "the refused paths are reported: {text}"
    );
}

#[test]
fn every_credential_entry_is_unreadable_inside_the_sandbox_in_home_and_location_in_any_case() {
    let e = env();
    let mut files = Vec::new();
    for base in [&e.home, &e.ws.join("app")] {
        // A name of every kind the table holds: the files, one per ending
        // (`x.pem`) and per shape (`service-accountx.json`).
        for name in sample_secret_names() {
            files.push(base.join(&name));
            files.push(base.join("upper").join(name.to_uppercase()));
        }
        for (dir, _) in SECRET_DIRS {
            files.push(base.join(dir).join("secret"));
        }
        for (dir, entry, _) in SECRET_PAIRS {
            let entry = if *entry == "*" { "any" } else { entry };
            files.push(base.join(dir).join(entry));
        }
    }
    for f in &files {
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        // A name may be both a directory of one entry and a file of another.
        if !f.is_dir() {
            std::fs::write(f, format!("{CANARY} {}\n", f.display())).unwrap();
        }
    }
    let cats: String = files
        .iter()
        .map(|f| format!("cat '{}' 2>/dev/null\n", f.display()))
        .collect();
    // The pattern is written so that it does not match the script itself.
    let text = drive(
        &e,
        &format!("{cats}grep -r 'CANARY-path-fact[s]' . 2>/dev/null\necho end\n"),
    );
    assert!(text.contains("end"), "the reads ran: {text}");
    let shown: Vec<&str> = text.lines().filter(|l| l.contains(CANARY)).collect();
    assert!(shown.is_empty(), "credentials read: {shown:#?}");
}
