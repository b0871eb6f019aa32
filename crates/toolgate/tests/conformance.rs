//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`,
//! installed with Node.js 22 by `scripts/setup-conformance.sh`) against the real
//! `toolgate serve`, over streamable HTTP on loopback.
//!
//! Every server scenario of the suite is either run here or listed in
//! [`NOT_APPLICABLE`] with the reason; a suite version with a scenario in
//! neither list fails [`every_suite_scenario_is_run_or_excluded_with_a_reason`].
//!
//! The suite cannot send a bearer token, so the server runs with `--no-auth`,
//! which `serve` accepts only on loopback.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// The scenarios that apply to a server with toolgate's tools: they need no
/// fixture tool, prompt or resource of the suite's reference server.
const APPLICABLE: &[&str] = &[
    "server-initialize",
    "ping",
    "tools-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "server-sse-polling",
];

/// Checks that may end in a WARNING, with why. `server-sse-polling` calls the
/// fixture tool `test_reconnection` (which toolgate does not have and answers
/// as an unknown tool) and then checks that the tool's result arrives on a
/// resumed stream; its other checks (priming event, retry field) must pass.
const ALLOWED_WARNINGS: &[(&str, &str, &str)] = &[(
    "server-sse-polling",
    "server-sse-disconnect-resume",
    "needs the suite's test_reconnection fixture tool",
)];

/// Server scenarios that don't apply, and why. Those that only need a fixture
/// tool of a kind toolgate can serve run in toolgate-mcp's
/// `tests/conformance_fixtures.rs`, against those tools registered behind the
/// real gate.
const NOT_APPLICABLE: &[(&str, &str)] = &[
    (
        "logging-set-level",
        "toolgate declares no `logging` capability (the suite expects it to)",
    ),
    (
        "completion-complete",
        "completion is for prompt and resource-template arguments; toolgate has neither",
    ),
    (
        "tools-call-simple-text",
        "calls the fixture tool test_simple_text (run against toolgate-mcp in its tests/conformance_fixtures.rs)",
    ),
    (
        "tools-call-image",
        "calls the fixture tool test_image_content (run against toolgate-mcp in its tests/conformance_fixtures.rs)",
    ),
    (
        "tools-call-audio",
        "calls the fixture tool test_audio_content; toolgate's tools return only text and image content",
    ),
    (
        "tools-call-embedded-resource",
        "calls the fixture tool test_embedded_resource; toolgate's tools return only text and image content",
    ),
    (
        "tools-call-mixed-content",
        "calls the fixture tool test_multiple_content_types (text, image and an embedded resource, which toolgate's content has not)",
    ),
    (
        "tools-call-with-logging",
        "calls the fixture tool test_tool_with_logging and needs the logging capability",
    ),
    (
        "tools-call-error",
        "calls the fixture tool test_error_handling (run against toolgate-mcp in its tests/conformance_fixtures.rs)",
    ),
    (
        "tools-call-with-progress",
        "calls the fixture tool test_tool_with_progress (run against toolgate-mcp in its tests/conformance_fixtures.rs)",
    ),
    (
        "tools-call-sampling",
        "calls the fixture tool test_sampling; toolgate never asks for sampling",
    ),
    (
        "tools-call-elicitation",
        "calls the fixture tool test_elicitation (toolgate elicits only approvals)",
    ),
    (
        "json-schema-2020-12",
        "looks for the fixture tool json_schema_2020_12_tool (run against toolgate-mcp in its tests/conformance_fixtures.rs)",
    ),
    (
        "elicitation-sep1034-defaults",
        "calls the fixture tool test_elicitation_sep1034_defaults",
    ),
    (
        "elicitation-sep1330-enums",
        "calls the fixture tool test_elicitation_sep1330_enums",
    ),
    ("resources-list", "toolgate serves no resources"),
    ("resources-read-text", "toolgate serves no resources"),
    ("resources-read-binary", "toolgate serves no resources"),
    ("resources-templates-read", "toolgate serves no resources"),
    ("resources-subscribe", "toolgate serves no resources"),
    ("resources-unsubscribe", "toolgate serves no resources"),
    ("prompts-list", "toolgate serves no prompts"),
    ("prompts-get-simple", "toolgate serves no prompts"),
    ("prompts-get-with-args", "toolgate serves no prompts"),
    (
        "prompts-get-embedded-resource",
        "toolgate serves no prompts",
    ),
    ("prompts-get-with-image", "toolgate serves no prompts"),
];

use crate::conformance_support;
use crate::support;
use conformance_support::{Suite, checks, text};
use support::cli_env::CliEnv;

/// The suite's CLI, run in `cwd`.
fn suite_command(suite: &Suite, cwd: &Path) -> Command {
    let mut cmd = Command::new(&suite.node);
    cmd.arg(&suite.cli).current_dir(cwd).stdin(Stdio::null());
    cmd
}

/// The server scenarios this version of the suite has.
fn server_scenarios(suite: &Suite, cwd: &Path) -> Vec<String> {
    let out = suite_command(suite, cwd)
        .args(["list", "--server"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_owned())
        .collect()
}

/// `toolgate serve --no-auth` on a free loopback port, in a fresh workspace and
/// data directory; killed on drop.
struct Server {
    child: Child,
    url: String,
    _env: CliEnv,
}

impl Server {
    fn start() -> Server {
        let e = CliEnv::new();
        e.write(e.ws.join("a.txt"), "hello\n");
        let mut child = e
            .command(&["serve", "--listen", "127.0.0.1:0", "--no-auth", "--root"])
            .arg(&e.ws)
            .env_remove("TOOLGATE_SERVE_TOKEN")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read stderr until serve prints its endpoint; keep draining it after.
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut seen = Vec::new();
        let url = loop {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(line) => {
                    if let Some(rest) = line.split("MCP endpoint ").nth(1) {
                        break rest.trim().to_owned();
                    }
                    seen.push(line);
                }
                Err(e) => {
                    let _ = child.kill();
                    panic!("toolgate serve printed no endpoint ({e}): {seen:#?}");
                }
            }
        };
        Server {
            child,
            url,
            _env: e,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What is wrong with one scenario's run, if anything: a non-zero exit, a
/// FAILURE, a WARNING that is not allowed, or a schema the client's validator
/// warned about.
fn problems(scenario: &str, out: &Output, checks: &[Value]) -> Vec<String> {
    let mut found = Vec::new();
    if !out.status.success() {
        found.push(format!("{scenario}: the suite exited with {}", out.status));
    }
    if checks.is_empty() {
        found.push(format!("{scenario}: no checks ran"));
    }
    // The suite's client validates the advertised schemas (Ajv, in the
    // TypeScript SDK) and warns about what it cannot read.
    for line in text(out).lines().filter(|l| l.contains("unknown format")) {
        found.push(format!("{scenario}: the client's schema validator: {line}"));
    }
    for c in checks {
        let id = c["id"].as_str().unwrap_or_default();
        let allowed = ALLOWED_WARNINGS
            .iter()
            .any(|(s, a, _)| *s == scenario && *a == id);
        match c["status"].as_str() {
            Some("FAILURE") => found.push(format!("{scenario}: {id} FAILED: {c}")),
            Some("WARNING") if !allowed => found.push(format!("{scenario}: {id} WARNING: {c}")),
            _ => {}
        }
    }
    found
}

#[test]
fn toolgate_serve_passes_every_applicable_conformance_scenario() {
    let Some(suite) = Suite::find() else { return };
    let server = Server::start();
    let work = tempfile::tempdir().unwrap();
    // The scenarios are independent clients: run them at once.
    let runs: Vec<(&str, PathBuf, Child)> = APPLICABLE
        .iter()
        .map(|scenario| {
            let out_dir = work.path().join(scenario);
            let child = suite_command(&suite, work.path())
                .args(["server", "--url", &server.url, "--scenario", scenario, "-o"])
                .arg(&out_dir)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (*scenario, out_dir, child)
        })
        .collect();
    let mut failures = Vec::new();
    for (scenario, out_dir, child) in runs {
        let out = child.wait_with_output().unwrap();
        let found = problems(scenario, &out, &checks(&out_dir, scenario));
        if !found.is_empty() {
            failures.push(format!(
                "{}\n--- suite output:\n{}",
                found.join("\n"),
                text(&out)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "conformance failures against {}:\n{}",
        server.url,
        failures.join("\n\n")
    );
}

#[test]
fn every_suite_scenario_is_run_or_excluded_with_a_reason() {
    let Some(suite) = Suite::find() else { return };
    let work = tempfile::tempdir().unwrap();
    let listed = server_scenarios(&suite, work.path());
    assert!(
        listed.len() >= APPLICABLE.len(),
        "too few scenarios: {listed:?}"
    );
    let known = |s: &str| APPLICABLE.contains(&s) || NOT_APPLICABLE.iter().any(|(n, _)| *n == s);
    let unknown: Vec<&String> = listed.iter().filter(|s| !known(s)).collect();
    assert!(
        unknown.is_empty(),
        "the suite has server scenarios this test neither runs nor excludes: {unknown:?}"
    );
    let gone: Vec<&str> = APPLICABLE
        .iter()
        .copied()
        .chain(NOT_APPLICABLE.iter().map(|(n, _)| *n))
        .filter(|s| !listed.iter().any(|l| l == s))
        .collect();
    assert!(
        gone.is_empty(),
        "scenarios named here that the suite no longer has: {gone:?}"
    );
}
