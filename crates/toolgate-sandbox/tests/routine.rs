//! Routine work succeeds inside the sandbox: a Rust crate builds and tests
//! offline, make, git branch work, pytest, npm test.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

use common::{Fixture, read, stdout};

fn assert_ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs with the real HOME (toolchains, caches) and the fake one's role
/// played by the spec's credentials list, which still names the fake home.
fn run_with_real_home(f: &Fixture, script: &str) -> std::process::Output {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    f.run(&format!(
        "export HOME={home:?}; unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR; {script}"
    ))
}

#[test]
fn cargo_build_and_test_offline() {
    let f = Fixture::new();
    f.write(
        "Cargo.toml",
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    f.write(
        "src/lib.rs",
        "pub fn add(a: u32, b: u32) -> u32 { a + b }\n#[test]\nfn adds() { assert_eq!(add(2, 2), 4); }\n",
    );
    let out = run_with_real_home(
        &f,
        "cd \"$WS\" && cargo build --offline && cargo test --offline 2>&1",
    );
    assert_ok(&out);
    assert!(
        stdout(&out).contains("test adds ... ok"),
        "{}",
        stdout(&out)
    );
    assert!(f.ws.join("target").is_dir());
}

#[test]
fn make_with_a_makefile() {
    let f = Fixture::new();
    f.write("in.txt", "hello\n");
    f.write(
        "Makefile",
        "out.txt: in.txt\n\ttr a-z A-Z < in.txt > out.txt\n\nclean:\n\trm -f out.txt\n",
    );
    let out = f.run("cd \"$WS\" && make && make -n clean");
    assert_ok(&out);
    assert_eq!(read(&f.ws.join("out.txt")), "HELLO\n");
}

fn git(dir: &Path, args: &[&str]) {
    let st = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .status()
        .unwrap();
    assert!(st.success(), "git {args:?}");
}

#[test]
fn git_branch_commit_stash_rebase() {
    let f = Fixture::new();
    f.write("a.txt", "one\n");
    git(&f.ws, &["init", "-q"]);
    git(&f.ws, &["add", "."]);
    git(&f.ws, &["commit", "-qm", "first"]);
    let out = f.run(
        "set -e; cd \"$WS\"; export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
         GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid; \
         git checkout -q -b topic; echo two >> a.txt; git add a.txt; git commit -qm second; \
         git checkout -q main; echo b > b.txt; git add b.txt; git commit -qm third; \
         echo wip >> b.txt; git stash -q; git stash pop -q; git checkout -q b.txt; \
         git checkout -q topic; git rebase -q main; git log --format=%s",
    );
    assert_ok(&out);
    assert_eq!(stdout(&out), "second\nthird\nfirst\n");
}

#[test]
fn pytest_on_a_tiny_package() {
    let venv_python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    if !venv_python.exists() {
        assert!(
            std::env::var("CI").is_err(),
            "pytest is missing: run scripts/setup-sandbox.sh"
        );
        eprintln!("SKIPPED: pytest not installed (run scripts/setup-sandbox.sh)");
        return;
    }
    let f = Fixture::new();
    f.write("pkg/__init__.py", "");
    f.write("pkg/calc.py", "def add(a, b):\n    return a + b\n");
    f.write(
        "tests/test_calc.py",
        "from pkg.calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    );
    // The venv lives in the checkout, which may be under /tmp (private inside
    // the sandbox): it is bound read-only, as a user would configure it.
    let mut spec = f.spec();
    spec.readable
        .push(Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv"));
    let out = f.run_spec(
        &spec,
        &format!("cd \"$WS\" && {} -m pytest -q 2>&1", venv_python.display()),
    );
    assert_ok(&out);
    assert!(stdout(&out).contains("1 passed"), "{}", stdout(&out));
}

#[test]
fn npm_test_without_dependencies() {
    let f = Fixture::new();
    f.write(
        "package.json",
        "{\"name\":\"tiny\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"node test.js\"}}\n",
    );
    f.write("test.js", "const assert = require('assert');\nassert.strictEqual(1 + 1, 2);\nconsole.log('node test ok');\n");
    let out = f.run("cd \"$WS\" && npm test 2>&1");
    assert_ok(&out);
    assert!(stdout(&out).contains("node test ok"), "{}", stdout(&out));
}
