//! Routine work succeeds inside the sandbox: a Rust crate builds and tests
//! offline, make, git branch work, pytest, npm test.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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

/// Runs with the real home directory, whose toolchains (`~/.cargo`,
/// `~/.rustup`) the sandbox shows read-only.
fn run_with_real_home(f: &Fixture, script: &str) -> std::process::Output {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let mut spec =
        toolgate_sandbox::SandboxSpec::for_location(vec![f.ws.clone()], Some(Path::new(&home)));
    spec.helper = f.spec().helper;
    f.run_spec(
        &spec,
        &format!("export HOME={home:?}; unset CARGO_TARGET_DIR CARGO_BUILD_TARGET_DIR; {script}"),
    )
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
    // Staged, as in mode auto: git's objects, refs and index land.
    let (out, staging) = f.run_staged_keeping(
        "set -e; cd \"$WS\"; export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
         GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid; \
         git checkout -q -b topic; echo two >> a.txt; git add a.txt; git commit -qm second; \
         git checkout -q main; echo b > b.txt; git add b.txt; git commit -qm third; \
         echo wip >> b.txt; git stash -q; git stash pop -q; git checkout -q b.txt; \
         git checkout -q topic; git rebase -q main; git log --format=%s",
    );
    assert_ok(&out);
    assert_eq!(stdout(&out), "second\nthird\nfirst\n");
    land_all(&staging);
    drop(staging);
    let log = Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(&f.ws)
        .output()
        .unwrap();
    assert_eq!(stdout(&log), "second\nthird\nfirst\n", "the history landed");
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
    // The venv's interpreter may live in the real home's toolchains
    // (pyenv), which the sandbox shows read-only.
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let mut spec =
        toolgate_sandbox::SandboxSpec::for_location(vec![f.ws.clone()], Some(Path::new(&home)));
    spec.helper = f.spec().helper;
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

/// Lands everything a staged run changed, as the gate does for plain
/// writes inside the location.
fn land_all(staging: &toolgate_sandbox::Staging) -> usize {
    let changes = staging.changes().unwrap();
    let all = changes.iter().map(|c| c.path.clone()).collect();
    staging
        .land(&changes, &all, Box::new(common::NoJournal))
        .unwrap();
    changes.len()
}

#[test]
fn git_add_all_and_commit_staged_commits_exactly_the_files_that_exist() {
    let f = Fixture::new();
    f.write("a.txt", "one\n");
    f.write("src/main.rs", "fn main() {}\n");
    git(&f.ws, &["init", "-q"]);
    git(&f.ws, &["add", "."]);
    git(&f.ws, &["commit", "-qm", "first"]);
    f.write("b.txt", "new\n");
    let (out, staging) = f.run_staged_keeping(
        "set -e; cd \"$WS\"; export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
         GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid; \
         ls -A; git status --porcelain; git add -A && git commit -qm second",
    );
    assert_ok(&out);
    // Inside, listing and status show exactly what exists outside.
    assert_eq!(stdout(&out), ".git\na.txt\nb.txt\nsrc\n?? b.txt\n");
    assert!(land_all(&staging) > 0);
    drop(staging);
    let files = Command::new("git")
        .args(["ls-tree", "-r", "--name-only", "HEAD"])
        .current_dir(&f.ws)
        .output()
        .unwrap();
    assert_eq!(stdout(&files), "a.txt\nb.txt\nsrc/main.rs\n");
    let status = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&f.ws)
        .output()
        .unwrap();
    assert_eq!(
        stdout(&status),
        "",
        "the landed commit is the real repository's"
    );
}

#[test]
fn a_staged_build_lands_its_outputs() {
    let f = Fixture::new();
    f.write("in.txt", "hello\n");
    f.write(
        "Makefile",
        "out/result.txt: in.txt\n\tmkdir -p out/deep\n\ttr a-z A-Z < in.txt > out/result.txt\n\ttouch out/deep/x\n",
    );
    let (out, staging) = f.run_staged_keeping("cd \"$WS\" && make");
    assert_ok(&out);
    assert!(!f.ws.join("out").exists(), "nothing lands before the gate");
    land_all(&staging);
    assert_eq!(read(&f.ws.join("out/result.txt")), "HELLO\n");
    assert!(f.ws.join("out/deep/x").is_file());
}

/// Runs `program` outside (it must succeed) and confined (it must fail to
/// start, exit code 127); what the confined run printed on stderr.
fn runs_outside_not_inside(f: &Fixture, program: &std::path::Path) -> String {
    assert!(Command::new(program).output().unwrap().status.success());
    let mut confined = f
        .spec()
        .command(&common::support(), program, Vec::<String>::new())
        .unwrap();
    let out = confined.command.output().unwrap();
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(127), "{err}");
    err
}

/// A program that runs outside but links into a place the sandbox hides (a
/// virtualenv's interpreter under the home directory) cannot run inside; the
/// error names where the link goes and what to make readable.
#[test]
fn a_program_linked_into_a_hidden_place_says_where_it_links() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let real = f.home.join("tools/bin/prog");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, "#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
    let link = f.ws.join("prog");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = runs_outside_not_inside(&f, &link);
    assert!(
        err.contains(&format!("links to {}", real.display())) && err.contains("readable"),
        "{err}"
    );
}

/// A program installed in a place the sandbox hides (a server's
/// `node_modules` outside the location, named by its absolute path) cannot
/// run inside; the error says it is not visible and what to make readable.
#[test]
fn a_program_in_a_hidden_place_says_it_is_not_visible() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let real = f.home.join("elsewhere/node_modules/.bin/server");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, "#!/bin/sh\necho ran\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = runs_outside_not_inside(&f, &real);
    assert!(
        err.contains("not visible in the sandbox") && err.contains("readable"),
        "{err}"
    );
}

/// A person edits a file (and makes another) while a long command that
/// also changes them runs: landing keeps the person's versions, marks those
/// changes as made outside, and lands the command's other changes.
#[test]
fn a_persons_edit_during_a_command_is_kept() {
    let f = Fixture::new();
    let notes = f.write("notes.txt", "v1\n");
    let mut spec = f.spec();
    spec.stage = Some(f.ws.parent().unwrap().join("stage"));
    let mut confined = spec
        .command(
            &common::support(),
            "bash",
            [
                "-c",
                "sleep 1; echo command >> \"$WS/notes.txt\"; echo command > \"$WS/new.txt\"; echo command > \"$WS/other.txt\"",
            ],
        )
        .unwrap();
    let mut child = confined.command.env("WS", &f.ws).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(&notes, "v1\nthe person's edit\n").unwrap();
    std::fs::write(f.ws.join("new.txt"), "the person's file\n").unwrap();
    assert!(child.wait().unwrap().success());
    let staging = confined.staging.take().unwrap();
    let changes = staging.changes().unwrap();
    let outside: Vec<String> = changes
        .iter()
        .filter(|c| c.changed_outside)
        .map(|c| c.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(outside, ["new.txt", "notes.txt"], "{changes:?}");
    common::land_all(&staging);
    assert_eq!(read(&notes), "v1\nthe person's edit\n");
    assert_eq!(read(&f.ws.join("new.txt")), "the person's file\n");
    assert_eq!(read(&f.ws.join("other.txt")), "command\n");
}
