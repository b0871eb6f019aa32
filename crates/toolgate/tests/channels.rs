//! Approval channel order under `toolgate mcp`, with real channels: the Python
//! `mcp` SDK as the client (with and without the elicitation capability) and
//! the approval page answered over HTTP. The terminal is left out of every
//! order here, so the tests do not depend on whether a terminal is attached.
//!
//! Needs the SDK's venv (`bash scripts/setup-python-mcp.sh`); without it the
//! tests are skipped with a message, except in CI (`CI=true`).

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    /// A workspace, a fresh data dir, and a home whose user config is
    /// `config` (the channel order is the person's to choose: a project
    /// config that asks fewer channels only applies once trusted).
    fn new(config: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        for d in ["ws/.toolgate", "data", "home/.config/toolgate"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("home/.config/toolgate/config.toml"), config).unwrap();
        Setup { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("ws")
    }
}

use crate::support::installed::mcp_python as python;

/// Runs one scenario of tests/py/channels.py; panics with its output on failure.
fn scenario(setup: &Setup, mode: &str, name: &str) {
    let Some(python) = python() else { return };
    run_scenario(Command::new(python), setup, mode, name);
}

/// As [`scenario`], with extra arguments for `toolgate mcp`.
fn scenario_with_flags(setup: &Setup, flags: &[&str], name: &str) {
    let Some(python) = python() else { return };
    run_scenario_args(Command::new(python), setup, "legacy", name, flags);
}

/// As [`scenario_with_flags`], with the client and server in a new session
/// that has no controlling terminal (`setsid`), so `/dev/tty` cannot be opened.
fn scenario_without_tty(setup: &Setup, mode: &str, flags: &[&str], name: &str) {
    let Some(python) = python() else { return };
    let mut cmd = Command::new("setsid");
    cmd.arg(python);
    run_scenario_args(cmd, setup, mode, name, flags);
}

fn run_scenario(cmd: Command, setup: &Setup, mode: &str, name: &str) {
    run_scenario_args(cmd, setup, mode, name, &[]);
}

fn run_scenario_args(mut cmd: Command, setup: &Setup, mode: &str, name: &str, flags: &[&str]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/channels.py");
    // `--server-arg=X` so that a flag starting with `--` stays a value.
    let server_args: Vec<String> = flags.iter().map(|f| format!("--server-arg={f}")).collect();
    let out = cmd
        .arg(script)
        .args(&server_args)
        .args(["--toolgate", env!("CARGO_BIN_EXE_toolgate")])
        .arg("--root")
        .arg(setup.root())
        .args(["--mode", mode, name])
        .env("HOME", setup.dir.path().join("home"))
        .env("TOOLGATE_DATA_DIR", setup.dir.path().join("data"))
        .env(
            "TOOLGATE_MANAGED_CONFIG",
            setup.dir.path().join("no-managed.toml"),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name} ({mode}) failed\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_client_without_elicitation_passes_the_ask_to_the_page_at_once() {
    for mode in ["legacy", "2026-07-28"] {
        let setup = Setup::new("[approvals]\nchannels = [\"mcp\", \"web\"]\nescalate_after = 30\n");
        scenario(&setup, mode, "web-answers");
    }
}

#[test]
fn the_client_answers_first_and_the_page_is_never_asked() {
    for mode in ["legacy", "2026-07-28"] {
        let setup = Setup::new("[approvals]\nchannels = [\"mcp\", \"web\"]\nescalate_after = 30\n");
        scenario(&setup, mode, "client-first");
    }
}

#[test]
fn after_escalate_after_the_page_is_asked_too_and_its_answer_wins() {
    for mode in ["legacy", "2026-07-28"] {
        let setup = Setup::new("[approvals]\nchannels = [\"mcp\", \"web\"]\nescalate_after = 1\n");
        scenario(&setup, mode, "escalates-to-web");
    }
}

#[test]
fn a_channel_left_out_of_the_order_is_never_asked() {
    let setup = Setup::new("[approvals]\nchannels = [\"mcp\"]\n");
    scenario(&setup, "legacy", "only-mcp-denies");
}

#[test]
fn an_edited_order_applies_to_the_next_ask() {
    let setup = Setup::new("[approvals]\nchannels = [\"mcp\"]\n");
    scenario(&setup, "legacy", "order-reloads");
}

#[test]
fn the_flag_beats_the_config() {
    // The config would wait on the page; the flag leaves only the client,
    // which cannot be asked, so the ask is denied at once.
    let setup = Setup::new("[approvals]\nchannels = [\"web\"]\n");
    scenario_with_flags(&setup, &["--approval-channels", "mcp"], "only-mcp-denies");
}

fn mcp_with_stdin_closed(setup: &Setup) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["mcp", "--root"])
        .arg(setup.root())
        .env("HOME", setup.dir.path().join("home"))
        .env("TOOLGATE_DATA_DIR", setup.dir.path().join("data"))
        .env(
            "TOOLGATE_MANAGED_CONFIG",
            setup.dir.path().join("no-managed.toml"),
        )
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_bad_channel_name_in_a_project_config_is_reported_and_ignored() {
    let setup = Setup::new("");
    std::fs::write(
        setup.root().join(".toolgate/config.toml"),
        "\n[approvals]\nchannels = [\"mcp\", \"email\"]\n",
    )
    .unwrap();
    let out = mcp_with_stdin_closed(&setup);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The server starts (it ends only because stdin is closed).
    assert!(stderr.contains("approval page at"), "{stderr}");
    assert!(stderr.contains(".toolgate/config.toml:3:"), "{stderr}");
    assert!(stderr.contains("project config ignored"), "{stderr}");
}

#[test]
fn a_bad_channel_name_stops_the_server_naming_file_line_and_the_channels() {
    let setup = Setup::new("\n[approvals]\nchannels = [\"mcp\", \"email\"]\n");
    let out = mcp_with_stdin_closed(&setup);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(".config/toolgate/config.toml:3:"),
        "{stderr}"
    );
    assert!(
        stderr.contains("unknown approval channel \"email\""),
        "{stderr}"
    );
    assert!(stderr.contains("mcp, web and terminal"), "{stderr}");
}

#[test]
fn a_bad_approval_channels_flag_is_a_usage_error() {
    for (flag, wanted) in [
        ("mcp,pager", "unknown approval channel \"pager\""),
        ("web,web", "listed twice"),
        ("", "unknown approval channel \"\""),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["mcp", "--approval-channels", flag])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
        assert!(stderr.contains(wanted), "{flag}: {stderr}");
    }
}

#[test]
fn question_goes_to_the_client_as_a_form_and_its_answers_come_back() {
    for mode in ["legacy", "2026-07-28"] {
        for name in [
            "question-by-elicitation",
            "question-in-own-words",
            "question-declined",
            "question-bad-answer",
        ] {
            // A client's unusable answer fails its channel, so the next one
            // (the page) would be asked and wait for a person: leave only the
            // client to see the error.
            let config = if name == "question-bad-answer" {
                "[approvals]\nchannels = [\"mcp\"]\n"
            } else {
                ""
            };
            let setup = Setup::new(config);
            scenario(&setup, mode, name);
        }
    }
}

#[test]
fn question_under_serve_goes_to_the_http_client() {
    for mode in ["legacy", "2026-07-28"] {
        let setup = Setup::new("");
        scenario(&setup, mode, "question-over-http");
    }
}

#[test]
fn question_with_no_channel_that_can_ask_is_a_clear_tool_error() {
    // No terminal: the client runs in a new session without a controlling tty;
    // the page is off.
    let setup = Setup::new("");
    scenario_without_tty(&setup, "legacy", &["--no-web"], "question-no-channel");
}

#[test]
fn question_from_a_client_without_elicitation_is_answered_on_the_page() {
    // The default order (mcp, web, terminal) without a terminal: the client
    // cannot be asked, so the page is.
    for mode in ["legacy", "2026-07-28"] {
        let setup = Setup::new("");
        scenario_without_tty(&setup, mode, &[], "question-on-web");
    }
    let setup = Setup::new("[approvals]\nchannels = [\"mcp\", \"web\"]\n");
    scenario(&setup, "legacy", "question-declined-on-web");
}
