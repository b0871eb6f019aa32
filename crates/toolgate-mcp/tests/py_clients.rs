//! The MCP server driven by a real client: the Python `mcp` SDK (installed by
//! `scripts/setup-python-mcp.sh`), over stdio and streamable HTTP, with the
//! 2025-11-25 handshake (`legacy`) and the 2026-07-28 per-request protocol.
//!
//! A custom harness (`harness = false`): the same binary is also the stdio
//! server the Python client spawns (`TOOLGATE_MCP_TEST_ROLE=stdio-server`).
//! Without the venv the suite is skipped with a message, except in CI
//! (`CI=true`), where that is a failure.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;
use toolgate_mcp::{HttpOptions, StdioOptions, bind_http, generate_token};

const ROLE: &str = "TOOLGATE_MCP_TEST_ROLE";
const ROOT: &str = "TOOLGATE_MCP_TEST_ROOT";
const DATA: &str = "TOOLGATE_MCP_TEST_DATA";
const PY_TIMEOUT: Duration = Duration::from_secs(120);

fn main() -> ExitCode {
    if std::env::var(ROLE).as_deref() == Ok("stdio-server") {
        return stdio_server();
    }
    let python = venv_python();
    if !python.exists() {
        let setup = "bash scripts/setup-python-mcp.sh";
        if std::env::var("CI").as_deref() == Ok("true") {
            eprintln!(
                "the Python MCP SDK is missing at {} (run `{setup}`)",
                python.display()
            );
            println!("0 passed, 1 failed");
            return ExitCode::FAILURE;
        }
        println!(
            "skipping the Python MCP client tests: {} is missing; run `{setup}`",
            python.display()
        );
        return ExitCode::SUCCESS;
    }
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut passed = 0;
    let mut failed = Vec::new();
    for (name, test) in tests() {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let started = Instant::now();
        let ctx = Ctx::new(python.clone());
        match runtime.block_on(test(ctx)) {
            Ok(()) => {
                passed += 1;
                println!(
                    "test {name} ... ok ({:.1}s)",
                    started.elapsed().as_secs_f64()
                );
            }
            Err(e) => {
                println!("test {name} ... FAILED\n{e}");
                failed.push(name);
            }
        }
    }
    println!();
    if !failed.is_empty() {
        println!("failures: {}", failed.join(", "));
    }
    println!("{passed} passed, {} failed", failed.len());
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The stdio server the Python client spawns.
fn stdio_server() -> ExitCode {
    let paths = common::Paths {
        root: PathBuf::from(std::env::var(ROOT).expect("root")),
        data: PathBuf::from(std::env::var(DATA).expect("data dir")),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let test = runtime.block_on(async { common::test_server(&paths) });
    let options = StdioOptions {
        max_message_bytes: 8 * 1024 * 1024,
    };
    match runtime.block_on(toolgate_mcp::serve_stdio(&test.server, options)) {
        Ok(()) => {
            if let Err(e) = test.log.flush() {
                eprintln!("stdio server: flushing the audit log: {e}");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("stdio server: {e}");
            ExitCode::FAILURE
        }
    }
}

fn venv_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python")
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(name)
}

type TestFn = fn(Ctx) -> BoxFuture<'static, Result<(), String>>;

/// One test's workspace, event log and client.
struct Ctx {
    python: PathBuf,
    dir: tempfile::TempDir,
}

impl Ctx {
    fn new(python: PathBuf) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("ws")).expect("workspace");
        std::fs::create_dir(dir.path().join("data")).expect("data dir");
        std::fs::write(
            dir.path().join("ws/hello.txt"),
            "hello from the workspace\n",
        )
        .expect("file");
        std::fs::create_dir(dir.path().join("ws/secret")).expect("secret dir");
        std::fs::write(dir.path().join("ws/secret/key.txt"), "k").expect("secret file");
        Ctx { python, dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    fn paths(&self) -> common::Paths {
        common::Paths {
            root: self.root(),
            data: self.dir.path().join("data"),
        }
    }

    fn events(&self) -> Vec<Value> {
        common::read_events(&self.paths().audit_db())
    }

    fn command(&self, script_name: &str) -> Command {
        let mut cmd = Command::new(&self.python);
        cmd.arg(script(script_name))
            .env(ROLE, "stdio-server")
            .env(ROOT, self.root())
            .env(DATA, self.paths().data)
            .kill_on_drop(true);
        cmd
    }

    /// Runs the SDK client over stdio; the server is this binary.
    async fn stdio(&self, mode: &str, scenario: &str) -> Result<String, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let mut cmd = self.command("client.py");
        cmd.arg("--stdio").arg(exe).args(["--mode", mode, scenario]);
        run(cmd).await
    }

    /// Runs the SDK client over HTTP against `url`.
    async fn http(
        &self,
        url: &str,
        token: &str,
        mode: &str,
        scenario: &str,
    ) -> Result<String, String> {
        let mut cmd = self.command("client.py");
        cmd.args(["--url", url, "--token", token, "--mode", mode, scenario]);
        run(cmd).await
    }

    /// Starts an in-process HTTP server; returns its URL, token and stopper.
    async fn serve_http(&self) -> Result<(String, String, CancellationToken), String> {
        let test = common::test_server(&self.paths());
        let token = generate_token().map_err(|e| e.to_string())?;
        let shutdown = CancellationToken::new();
        let bound = bind_http(
            &test.server,
            HttpOptions::loopback(0, token.clone()),
            shutdown.clone(),
        )
        .await
        .map_err(|e| e.to_string())?;
        let addr = bound.local_addr().map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            let served = bound.serve().await;
            drop(test);
            served
        });
        Ok((format!("http://{addr}/mcp"), token, shutdown))
    }
}

async fn run(mut cmd: Command) -> Result<String, String> {
    let output = tokio::time::timeout(PY_TIMEOUT, cmd.output())
        .await
        .map_err(|_| format!("client timed out after {PY_TIMEOUT:?}"))?
        .map_err(|e| format!("cannot run python: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    if output.status.success() {
        Ok(stdout)
    } else {
        Err(format!(
            "client exited with {}\nstdout:\n{stdout}\nstderr:\n{}",
            output.status,
            tail(&String::from_utf8_lossy(&output.stderr), 4000)
        ))
    }
}

fn tail(s: &str, n: usize) -> &str {
    let start = s.len().saturating_sub(n);
    let start = (start..s.len())
        .find(|i| s.is_char_boundary(*i))
        .unwrap_or(s.len());
    &s[start..]
}

fn ensure(condition: bool, message: impl FnOnce() -> String) -> Result<(), String> {
    if condition { Ok(()) } else { Err(message()) }
}

fn kind(e: &Value) -> &str {
    e["kind"].as_str().unwrap_or("")
}

/// The session events, and that each names the Python client.
fn sessions(events: &[Value]) -> Result<Vec<&Value>, String> {
    let started: Vec<&Value> = events
        .iter()
        .filter(|e| kind(e) == "session.started")
        .collect();
    for s in &started {
        let extra = &s["payload"]["extra"];
        ensure(
            extra["client_name"] == "toolgate-py-test" && extra["client_version"] == "9.8.7",
            || format!("session.started without the client's identity: {s}"),
        )?;
    }
    ensure(!started.is_empty(), || {
        "no session.started event".to_string()
    })?;
    Ok(started)
}

/// Waits until `tool.failed` with reason `cancelled` is logged for `tool`.
async fn wait_cancelled(ctx: &Ctx, tool: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let events = ctx.events();
        if events.iter().any(|e| {
            kind(e) == "tool.failed"
                && e["payload"]["tool"] == tool
                && e["payload"]["reason"] == "cancelled"
        }) {
            return Ok(());
        }
        if Instant::now() > deadline {
            let kinds: Vec<String> = events
                .iter()
                .map(|e| {
                    format!(
                        "{} {} {}",
                        kind(e),
                        e["payload"]["tool"],
                        e["payload"]["reason"]
                    )
                })
                .collect();
            return Err(format!(
                "no tool.failed(cancelled) for {tool}; log: {kinds:#?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn tests() -> Vec<(&'static str, TestFn)> {
    vec![
        ("stdio_legacy_catalogue_and_calls", |ctx| {
            Box::pin(stdio_catalogue_and_calls(ctx, "legacy"))
        }),
        ("stdio_2026_catalogue_and_calls", |ctx| {
            Box::pin(stdio_catalogue_and_calls(ctx, "2026-07-28"))
        }),
        ("http_legacy_catalogue_and_calls", |ctx| {
            Box::pin(http_catalogue_and_calls(ctx, "legacy"))
        }),
        ("http_2026_catalogue_and_calls", |ctx| {
            Box::pin(http_catalogue_and_calls(ctx, "2026-07-28"))
        }),
        ("stdio_elicitation_approves_and_rejects", |ctx| {
            Box::pin(stdio_elicitation(ctx, "legacy"))
        }),
        ("stdio_2026_input_required_approves_and_rejects", |ctx| {
            Box::pin(stdio_elicitation(ctx, "2026-07-28"))
        }),
        ("http_elicitation_approves_and_rejects", |ctx| {
            Box::pin(http_elicitation(ctx, "legacy"))
        }),
        ("http_2026_input_required_approves_and_rejects", |ctx| {
            Box::pin(http_elicitation(ctx, "2026-07-28"))
        }),
        ("stdio_2026_ask_without_elicitation_is_denied", |ctx| {
            Box::pin(stdio_no_elicitation(ctx, "2026-07-28"))
        }),
        ("stdio_cancel_records_tool_failed", |ctx| {
            Box::pin(stdio_cancel(ctx))
        }),
        ("http_cancel_records_tool_failed", |ctx| {
            Box::pin(http_cancel(ctx))
        }),
        ("stdio_disconnect_mid_call_cancels_and_exits", |ctx| {
            Box::pin(stdio_disconnect(ctx))
        }),
        (
            "http_disconnect_mid_call_cancels_and_serves_others",
            |ctx| Box::pin(http_disconnect(ctx)),
        ),
        ("stdio_raw_bad_input", |ctx| Box::pin(stdio_raw(ctx))),
        ("http_raw_bad_input_auth_and_rebinding", |ctx| {
            Box::pin(http_raw(ctx))
        }),
    ]
}

async fn stdio_catalogue_and_calls(ctx: Ctx, mode: &'static str) -> Result<(), String> {
    ctx.stdio(mode, "catalogue").await?;
    ctx.stdio(mode, "calls").await?;
    let events = ctx.events();
    ensure(sessions(&events)?.len() == 2, || {
        "one session per connection".into()
    })?;
    check_call_events(&events)
}

async fn http_catalogue_and_calls(ctx: Ctx, mode: &'static str) -> Result<(), String> {
    let (url, token, stop) = ctx.serve_http().await?;
    let result = async {
        ctx.http(&url, &token, mode, "catalogue").await?;
        ctx.http(&url, &token, mode, "calls").await?;
        let events = ctx.events();
        sessions(&events)?;
        check_call_events(&events)
    }
    .await;
    stop.cancel();
    result
}

/// The audit trail of the `calls` scenario.
fn check_call_events(events: &[Value]) -> Result<(), String> {
    let completed = |tool: &str| {
        events
            .iter()
            .any(|e| kind(e) == "tool.completed" && e["payload"]["tool"] == tool)
    };
    ensure(completed("echo") && completed("slow"), || {
        "echo and slow completed".into()
    })?;
    let denied = events.iter().any(|e| {
        kind(e) == "permission.resolved"
            && e["payload"]["tool"] == "forbidden"
            && e["payload"]["decision"] == "deny"
    });
    ensure(denied, || "the deny of forbidden is logged".into())?;
    ensure(
        !events
            .iter()
            .any(|e| kind(e) == "tool.started" && e["payload"]["tool"] == "forbidden"),
        || "forbidden never started".into(),
    )?;
    let invalid = events
        .iter()
        .filter(|e| kind(e) == "tool.failed" && e["payload"]["reason"] == "invalid_input")
        .count();
    ensure(invalid >= 3, || {
        format!("three invalid inputs logged, got {invalid}")
    })
}

async fn stdio_elicitation(ctx: Ctx, mode: &'static str) -> Result<(), String> {
    ctx.stdio(mode, "elicit-once").await?;
    ensure(ctx.root().join("marker.txt").exists(), || {
        "approved tool ran".into()
    })?;
    std::fs::remove_file(ctx.root().join("marker.txt")).map_err(|e| e.to_string())?;
    ctx.stdio(mode, "elicit-reject").await?;
    ensure(!ctx.root().join("marker.txt").exists(), || {
        "rejected tool did not run".into()
    })?;
    check_elicitation_events(&ctx.events(), mode == "legacy")
}

async fn http_elicitation(ctx: Ctx, mode: &'static str) -> Result<(), String> {
    let (url, token, stop) = ctx.serve_http().await?;
    let result = async {
        ctx.http(&url, &token, mode, "elicit-once").await?;
        ensure(ctx.root().join("marker.txt").exists(), || {
            "approved tool ran".into()
        })?;
        std::fs::remove_file(ctx.root().join("marker.txt")).map_err(|e| e.to_string())?;
        ctx.http(&url, &token, mode, "elicit-reject").await?;
        ensure(!ctx.root().join("marker.txt").exists(), || {
            "rejected tool did not run".into()
        })?;
        ctx.http(&url, &token, mode, "no-elicitation").await?;
        check_elicitation_events(&ctx.events(), mode == "legacy")
    }
    .await;
    stop.cancel();
    result
}

/// The audit trail of an approval and a rejection; `initialize` sessions also
/// record that the client can answer forms.
fn check_elicitation_events(events: &[Value], handshake: bool) -> Result<(), String> {
    let resolved: Vec<&Value> = events
        .iter()
        .filter(|e| kind(e) == "permission.resolved" && e["payload"]["tool"] == "guarded")
        .collect();
    ensure(
        resolved
            .iter()
            .any(|e| e["payload"]["decision"] == "allow" && e["payload"]["actor"] == "user"),
        || format!("an allow by the user is logged: {resolved:#?}"),
    )?;
    ensure(
        resolved
            .iter()
            .any(|e| e["payload"]["decision"] == "deny" && e["payload"]["actor"] == "user"),
        || format!("a reject by the user is logged: {resolved:#?}"),
    )?;
    let approved_session = sessions(events)?
        .iter()
        .any(|s| s["payload"]["extra"]["elicitation"] == true);
    ensure(!handshake || approved_session, || {
        "the session records the elicitation capability".into()
    })
}

async fn stdio_no_elicitation(ctx: Ctx, mode: &'static str) -> Result<(), String> {
    ctx.stdio(mode, "no-elicitation").await?;
    ensure(!ctx.root().join("marker.txt").exists(), || {
        "unapproved tool did not run".into()
    })
}

async fn stdio_cancel(ctx: Ctx) -> Result<(), String> {
    ctx.stdio("legacy", "cancel").await?;
    wait_cancelled(&ctx, "slow").await
}

async fn http_cancel(ctx: Ctx) -> Result<(), String> {
    let (url, token, stop) = ctx.serve_http().await?;
    let result = async {
        ctx.http(&url, &token, "legacy", "cancel").await?;
        wait_cancelled(&ctx, "slow").await
    }
    .await;
    stop.cancel();
    result
}

async fn stdio_disconnect(ctx: Ctx) -> Result<(), String> {
    let out = ctx.stdio("legacy", "disconnect").await?;
    ensure(out.contains("CALL RUNNING"), || {
        format!("the call was running: {out}")
    })?;
    wait_cancelled(&ctx, "slow").await
}

async fn http_disconnect(ctx: Ctx) -> Result<(), String> {
    let (url, token, stop) = ctx.serve_http().await?;
    let result = async {
        let out = ctx.http(&url, &token, "legacy", "disconnect").await?;
        ensure(out.contains("CALL RUNNING"), || {
            format!("the call was running: {out}")
        })?;
        wait_cancelled(&ctx, "slow").await?;
        // Another client is served as before.
        ctx.http(&url, &token, "legacy", "calls").await.map(|_| ())
    }
    .await;
    stop.cancel();
    result
}

async fn stdio_raw(ctx: Ctx) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = ctx.command("raw.py");
    cmd.arg("stdio").arg(exe);
    run(cmd).await?;
    let events = ctx.events();
    // The oversized call is refused before the gate: no event of any kind
    // carries its arguments (a call's args live on its first
    // permission.requested, so this also shows it was never judged or run).
    ensure(
        !events.iter().any(|e| {
            e["payload"]["args"]["text"]
                .as_str()
                .is_some_and(|t| t.len() > 1000)
        }),
        || "the 50 MB call reached the gate".into(),
    )
}

async fn http_raw(ctx: Ctx) -> Result<(), String> {
    let (url, token, stop) = ctx.serve_http().await?;
    let mut cmd = ctx.command("raw.py");
    cmd.args(["http", &url, &token]);
    let result = run(cmd).await.map(|_| ());
    stop.cancel();
    result
}
