//! Variables the user's environment already exports: a plain `X=value` in the
//! line reaches every later program, so it must be judged like `export X=…`.
//! The analyser reads the environment it runs in, so the attacks run in a
//! child process (this test binary, one test) with the variables exported.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use std::process::Command;

use fixture::{Fixture, assert_allowed, assert_asked};

/// Set in the child: it runs the attacks instead of spawning.
const CHILD_ENV: &str = "TOOLGATE_TEST_INHERITED_ENV_CHILD";

/// Variables a user may export, each of which changes what a read tool
/// reads or runs.
const EXPORTED: &[(&str, &str)] = &[
    ("PYTHONUSERBASE", "/home/u/.local"),
    ("MANOPT", "-a"),
    ("LESS", "-R"),
    ("MAGIC", "/usr/share/misc/magic"),
    ("TOOLGATE_TEST_INHERITED_X", "1"),
];

fn run_in_child(test: &str) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        fixture::harness_name(module_path!(), test).as_str(),
        "--exact",
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env(CHILD_ENV, "1");
    for (name, value) in EXPORTED {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "child failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// With `PYTHONUSERBASE` exported, `PYTHONUSERBASE=$PWD/ub; pip list` ran
/// the `.pth` file in `./ub/lib/python3.11/site-packages` (allowed as a read).
#[test]
fn assigning_an_inherited_variable_reaches_later_programs() {
    if std::env::var_os(CHILD_ENV).is_none() {
        run_in_child("assigning_an_inherited_variable_reaches_later_programs");
        return;
    }
    let fx = Fixture::new();
    for command in [
        "PYTHONUSERBASE=$PWD/ub; pip list",
        "PYTHONUSERBASE=./ub && pip freeze",
        "read PYTHONUSERBASE <<<ub; pip list",
        "for PYTHONUSERBASE in ub; do pip list; done",
        "printf -v PYTHONUSERBASE %s ub; pip list",
        "((PYTHONUSERBASE=1)); pip list",
        "declare PYTHONUSERBASE=ub; pip list",
        "unset PYTHONUSERBASE; pip list",
        "unset PATH; ls",
        "MAGIC=~/.ssh/id_rsa; file README.md",
        "MANOPT='-P touch\\ pwned'; ls",
        "LESS='+!touch pwned'; cat README.md",
        "TOOLGATE_TEST_INHERITED_X=2; ls",
    ] {
        assert_asked(&fx, command);
    }
    // Names the environment does not hold, and known-harmless ones, stay read.
    for command in [
        "x=1; echo $x",
        "TOOLGATE_TEST_NOT_INHERITED=1; ls",
        "LANG=C; sort README.md",
        "TERM=dumb; ls",
    ] {
        assert_allowed(&fx, command);
    }
}

/// `X=./ub; export X; pip list` (no variable in the environment) ran
/// `./ub`'s `.pth`; `unset PATH; ls` ran `./ls` (bash then searches `.`).
#[test]
fn exporting_or_unsetting_a_name_reaches_later_programs() {
    let fx = Fixture::new();
    for command in [
        "PYTHONUSERBASE=$PWD/ub; export PYTHONUSERBASE; pip list",
        "PYTHONUSERBASE=$PWD/ub; export -- PYTHONUSERBASE; pip list",
        "export PYTHONUSERBASE; PYTHONUSERBASE=$PWD/ub; pip list",
        "command export PYTHONUSERBASE; PYTHONUSERBASE=ub; pip list",
        "unset PATH; ls",
        "unset -v PATH; ls",
    ] {
        assert_asked(&fx, command);
    }
    for command in ["LANG=C; export LANG; ls", "x=1; echo $x"] {
        assert_allowed(&fx, command);
    }
}
