//! `toolgate undo` as a user runs it: change sets landed by bash (staged in
//! the sandbox) and by `apply_patch`, listed and restored; a later edit
//! refuses the undo; bad input is named.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};
use support::cli_env::CliEnv as Env;
use toolgate_sandbox::test_util::scratch_parent;

fn env() -> Env {
    // Outside /tmp, which the sandbox replaces with a private one.
    Env::in_dir(&scratch_parent(Path::new(env!("CARGO_TARGET_TMPDIR"))).unwrap())
}

fn toolgate(e: &Env, args: &[&str]) -> Output {
    let out = e.command(args).output().unwrap();
    eprintln!(
        "--- toolgate {args:?}\nstatus {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

fn listed(e: &Env) -> Vec<Value> {
    let out = toolgate(e, &["undo", "--list", "--json"]);
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn undo_restores_a_change_set_landed_by_bash_in_the_sandbox() {
    let e = env();
    e.write(e.ws.join("a.txt"), "a before\n");
    e.write(e.ws.join("b.txt"), "b before\n");
    let status = toolgate(&e, &["sandbox", "status", "--json"]);
    let v: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert!(
        v["staging"].as_bool().unwrap(),
        "staging is not available here (run scripts/setup-sandbox.sh): {v}"
    );
    std::fs::write(
        e.ws.join("change.sh"),
        "echo 'a after' > a.txt; rm b.txt; mkdir -p out/deep && echo x > out/deep/y",
    )
    .unwrap();
    let input = json!({"command": "bash change.sh"}).to_string();
    let out = toolgate(&e, &["call", "bash", &input, "--mode", "auto"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(read(&e.ws.join("a.txt")), "a after\n");
    assert!(!e.ws.join("b.txt").exists());
    assert!(e.ws.join("out/deep/y").exists());

    let sets = listed(&e);
    assert_eq!(sets.len(), 1, "{sets:?}");
    assert_eq!(sets[0]["tool"], "bash");
    assert_eq!(sets[0]["state"], "landed");

    let out = toolgate(&e, &["undo"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(read(&e.ws.join("a.txt")), "a before\n");
    assert_eq!(read(&e.ws.join("b.txt")), "b before\n");
    assert!(!e.ws.join("out").exists());
    assert_eq!(listed(&e)[0]["state"], "undone");
    // Nothing is left to undo.
    let out = toolgate(&e, &["undo"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("nothing to undo"), "{}", text(&out));
}

fn patch(e: &Env) -> Output {
    let patch = "*** Begin Patch\n*** Add File: src/new.rs\n+fn new() {}\n*** Update File: src/a.rs\n@@\n-fn a() {}\n+fn b() {}\n*** Delete File: src/old.rs\n*** End Patch\n";
    let input = json!({ "patch": patch }).to_string();
    toolgate(
        e,
        &["call", "apply_patch", &input, "--mode", "accept-edits"],
    )
}

fn patched_env() -> Env {
    let e = env();
    e.write(e.ws.join("src/a.rs"), "fn a() {}\n");
    e.write(e.ws.join("src/old.rs"), "fn old() {}\n");
    let out = patch(&e);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(read(&e.ws.join("src/a.rs")), "fn b() {}\n");
    e
}

#[test]
fn undo_restores_an_apply_patch_change_set() {
    let e = patched_env();
    let sets = listed(&e);
    assert_eq!(sets.len(), 1, "{sets:?}");
    assert_eq!(sets[0]["tool"], "apply_patch");
    let id = sets[0]["id"].as_str().unwrap().to_string();
    let out = toolgate(&e, &["undo", "--list"]);
    assert!(text(&out).contains(&id) && text(&out).contains("src/a.rs"));

    let out = toolgate(&e, &["undo", &id]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(read(&e.ws.join("src/a.rs")), "fn a() {}\n");
    assert_eq!(read(&e.ws.join("src/old.rs")), "fn old() {}\n");
    assert!(!e.ws.join("src/new.rs").exists());
}

#[test]
fn undo_refuses_over_a_later_edit_and_names_the_file() {
    let e = patched_env();
    // The person edits the file after the patch landed.
    std::fs::write(e.ws.join("src/a.rs"), "fn mine() {}\n").unwrap();
    let out = toolgate(&e, &["undo"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("src/a.rs"), "{}", text(&out));
    assert!(text(&out).contains("changed after"), "{}", text(&out));
    // Nothing was restored: not the edited file, nor the others.
    assert_eq!(read(&e.ws.join("src/a.rs")), "fn mine() {}\n");
    assert!(e.ws.join("src/new.rs").exists());
    assert!(!e.ws.join("src/old.rs").exists());
}

#[test]
fn undo_with_bad_input_names_what_is_wrong() {
    let e = env();
    let out = toolgate(&e, &["undo", "no-such-checkpoint"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("no checkpoint no-such-checkpoint"),
        "{}",
        text(&out)
    );
    let out = toolgate(&e, &["undo", "../../etc"]);
    assert!(!out.status.success());
    let out = toolgate(&e, &["undo", "--list", "x"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("--list takes no checkpoint id"));
    let out = toolgate(&e, &["undo", "--list"]);
    assert!(text(&out).contains("no checkpoints"));
}
