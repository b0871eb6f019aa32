//! bash: real processes, real process groups.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::{Env, group_members, read_pid, running};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolgate_core::{PrepareError, Risk, Tool, ToolError, handler};
use toolgate_tools::process_tools::{BashInput, BashOutput, BashTool, MEMORY_LIMIT_BYTES};

fn input(command: &str) -> BashInput {
    BashInput {
        command: command.into(),
        workdir: None,
        timeout_ms: None,
        description: None,
        unsandboxed: false,
        reason: None,
    }
}

async fn run(env: &Env, input: BashInput) -> Result<BashOutput, ToolError> {
    BashTool::new(&env.config).execute(input, env.ctx()).await
}

#[tokio::test]
async fn runs_in_the_root_and_merges_stdout_and_stderr() {
    let env = Env::new();
    let out = run(&env, input("pwd; echo out; echo err >&2; exit 3"))
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.signal, None);
    assert!(!out.timed_out && !out.background_terminated);
    let root = env.root().display().to_string();
    assert!(
        out.output.starts_with(&format!("{root}\n")),
        "{}",
        out.output
    );
    assert!(out.output.contains("out\n") && out.output.contains("err\n"));
    assert_eq!(out.output_bytes as usize, out.output.len());
    assert_eq!(out.workdir, root);
    assert!(out.spill_path.is_none());
}

/// The exit code is the tool's exit status, which core audits; a command ended
/// by a signal has none.
#[tokio::test]
async fn the_exit_code_is_reported_as_the_tools_exit_status() {
    let env = Env::new();
    let h = handler(BashTool::new(&env.config)).unwrap();
    for (command, status) in [("exit 3", Some(3)), ("kill -KILL $$", None)] {
        let prepared = h
            .prepare(&json!({ "command": command }), &env.location())
            .unwrap();
        let out = prepared.run(env.ctx()).await.unwrap();
        assert_eq!(out.exit_status, status, "{command}");
    }
}

#[tokio::test]
async fn command_not_found_is_exit_127_with_bash_message() {
    let env = Env::new();
    let out = run(&env, input("definitely-not-a-command-xyz --flag"))
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(127));
    assert!(
        out.output
            .contains("definitely-not-a-command-xyz: command not found"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn workdir_relative_to_root() {
    let env = Env::new();
    std::fs::create_dir_all(env.root.path().join("sub/dir")).unwrap();
    let mut i = input("pwd");
    i.workdir = Some("sub/dir".into());
    let out = run(&env, i).await.unwrap();
    assert_eq!(
        out.output.trim(),
        env.root().join("sub/dir").display().to_string()
    );
}

#[tokio::test]
async fn bad_workdirs_are_clear_errors() {
    let env = Env::new();
    std::fs::write(env.root.path().join("file.txt"), "x").unwrap();
    let mut i = input("pwd");
    i.workdir = Some("missing".into());
    let err = run(&env, i.clone()).await.unwrap_err().to_string();
    assert!(
        err.contains("does not exist") && err.contains("missing"),
        "{err}"
    );
    i.workdir = Some("file.txt".into());
    let err = run(&env, i.clone()).await.unwrap_err().to_string();
    assert!(err.contains("is not a directory"), "{err}");
    i.workdir = Some("a\0b".into());
    let err = run(&env, i).await.unwrap_err().to_string();
    assert!(err.contains("NUL"), "{err}");
}

#[tokio::test]
async fn schema_and_intent() {
    let env = Env::new();
    let h = handler(BashTool::new(&env.config)).unwrap();
    let loc = env.location();
    std::fs::create_dir(env.root.path().join("w")).unwrap();

    let call = h
        .prepare(
            &json!({"command": "git status", "workdir": "w", "description": "status"}),
            &loc,
        )
        .unwrap();
    assert_eq!(call.requests.len(), 1);
    let r = &call.requests[0];
    assert_eq!(
        (r.action.as_str(), r.resource.as_str(), r.risk),
        ("bash", "git status", Risk::Execute)
    );
    assert_eq!(
        r.cwd.as_deref(),
        Some(env.root().join("w").to_str().unwrap())
    );

    let default = h.prepare(&json!({"command": "ls"}), &loc).unwrap();
    assert_eq!(
        default.requests[0].cwd.as_deref(),
        Some(env.root().to_str().unwrap())
    );

    match h.prepare(&json!({"command": "ls", "cwd": "/"}), &loc) {
        Err(PrepareError::InvalidInput { message, .. }) => {
            assert!(message.contains("cwd"), "{message}")
        }
        other => panic!("unknown field accepted: {other:?}"),
    }
    match h.prepare(&json!({"workdir": "w"}), &loc) {
        Err(PrepareError::InvalidInput { message, .. }) => {
            assert!(message.contains("command"), "{message}")
        }
        other => panic!("missing command accepted: {other:?}"),
    }
    for bad in [0, 600_001] {
        match h.prepare(&json!({"command": "ls", "timeout_ms": bad}), &loc) {
            Err(PrepareError::Intent(e)) => {
                assert!(e.to_string().contains("between 1 and 600000"), "{e}")
            }
            other => panic!("timeout {bad} accepted: {other:?}"),
        }
    }
    assert!(matches!(
        h.prepare(&json!({"command": "   "}), &loc),
        Err(PrepareError::Intent(_))
    ));
}

#[tokio::test]
async fn timeout_kills_the_whole_group_including_background_grandchild() {
    let env = Env::new();
    let dir = env.root();
    let mut i = input("echo $$ > pgid; sleep 300 & echo $! > bgpid; echo started; sleep 300");
    i.timeout_ms = Some(500);
    let started = Instant::now();
    let out = run(&env, i).await.unwrap();
    assert!(out.timed_out);
    assert!(
        started.elapsed() < Duration::from_secs(10), // far below the 300 s sleeps
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.exit_code, None);
    assert_eq!(out.signal_name.as_deref(), Some("SIGTERM"));
    assert!(out.output.contains("started"));
    let pgid = read_pid(&dir.join("pgid"));
    let bg = read_pid(&dir.join("bgpid"));
    assert!(!running(bg), "background sleep {bg} survived");
    assert!(
        group_members(pgid).is_empty(),
        "group {pgid} still has {:?}",
        group_members(pgid)
    );
}

#[tokio::test]
async fn sigterm_ignored_escalates_to_sigkill_after_grace() {
    let env = Env::new();
    let dir = env.root();
    // Ignored signals stay ignored across exec, so the sleeps ignore TERM too.
    let mut i = input("trap '' TERM; echo $$ > pgid; sleep 300 & echo $! > bgpid; sleep 300");
    i.timeout_ms = Some(300);
    let started = Instant::now();
    let out = run(&env, i).await.unwrap();
    let took = started.elapsed();
    assert!(out.timed_out);
    assert_eq!(out.signal_name.as_deref(), Some("SIGKILL"));
    assert!(
        took >= Duration::from_millis(3300),
        "killed too early: {took:?}"
    );
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert!(!running(read_pid(&dir.join("bgpid"))));
    assert!(group_members(read_pid(&dir.join("pgid"))).is_empty());
}

// read_pid blocks, so the spawned call needs a worker of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_terminates_the_group() {
    let env = Env::new();
    let dir = env.root();
    let cancel = CancellationToken::new();
    let tool = BashTool::new(&env.config);
    let ctx = env.ctx_with(cancel.clone(), "s");
    let task = tokio::spawn(async move {
        tool.execute(
            input("echo $$ > pgid; sleep 300 & echo $! > bgpid; sleep 300"),
            ctx,
        )
        .await
    });
    let bg = read_pid(&dir.join("bgpid"));
    assert!(running(bg));
    let started = Instant::now();
    cancel.cancel();
    let result = task.await.unwrap();
    assert!(matches!(result, Err(ToolError::Cancelled)), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(10)); // not the 300 s sleep
    assert!(!running(bg));
    assert!(group_members(read_pid(&dir.join("pgid"))).is_empty());
}

// read_pid blocks, so the spawned call needs a worker of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_call_kills_the_group() {
    let env = Env::new();
    let dir = env.root();
    let tool = BashTool::new(&env.config);
    let ctx = env.ctx();
    let task = tokio::spawn(async move {
        tool.execute(
            input("echo $$ > pgid; sleep 300 & echo $! > bgpid; sleep 300"),
            ctx,
        )
        .await
    });
    let bg = read_pid(&dir.join("bgpid"));
    let pgid = read_pid(&dir.join("pgid"));
    task.abort();
    let _ = task.await;
    let until = Instant::now() + Duration::from_secs(10);
    while !group_members(pgid).is_empty() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!running(bg));
    assert!(group_members(pgid).is_empty());
}

#[tokio::test]
async fn background_jobs_are_terminated_when_the_command_exits() {
    let env = Env::new();
    let dir = env.root();
    // One job holds the output pipe, one does not.
    let command = "sleep 300 & echo $! > held; nohup sleep 300 >/dev/null 2>&1 & echo $! > detached; echo done";
    let started = Instant::now();
    let out = run(&env, input(command)).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10), // far below the 300 s sleeps
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.exit_code, Some(0));
    assert!(out.background_terminated);
    assert!(out.output.contains("done"));
    assert!(!running(read_pid(&dir.join("held"))));
    assert!(!running(read_pid(&dir.join("detached"))));
}

#[tokio::test]
async fn no_terminal_and_stdin_closed() {
    let env = Env::new();
    let out = run(
        &env,
        input("cat; [ -t 0 ] && echo tty0; [ -t 1 ] && echo tty1; cat /dev/tty; echo rc=$?"),
    )
    .await
    .unwrap();
    assert!(
        !out.output.contains("tty0") && !out.output.contains("tty1"),
        "{}",
        out.output
    );
    assert!(out.output.contains("rc=1"), "{}", out.output);
    assert!(out.output.contains("/dev/tty"), "{}", out.output);
}

#[tokio::test]
async fn invalid_utf8_output_is_replaced_not_an_error() {
    let env = Env::new();
    let out = run(&env, input(r"printf 'a\xff\xfeb'")).await.unwrap();
    assert_eq!(out.output, "a\u{fffd}\u{fffd}b");
    assert_eq!(out.output_bytes, 4);
}

#[tokio::test]
async fn progress_reports_output_while_running() {
    let env = Env::new();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let ctx = env.ctx().with_progress(tx);
    let tool = BashTool::new(&env.config);
    let out = tool
        .execute(
            input("for i in 1 2 3; do echo line$i; sleep 0.4; done"),
            ctx,
        )
        .await
        .unwrap();
    assert_eq!(out.output, "line1\nline2\nline3\n");
    let mut reports = Vec::new();
    while let Ok(p) = rx.try_recv() {
        reports.push(p);
    }
    assert!(reports.len() >= 2, "{reports:?}");
    assert_eq!(reports[0].message, "line1");
    assert!(reports.iter().any(|p| p.message == "line3"), "{reports:?}");
    assert!(reports.windows(2).all(|w| w[0].progress <= w[1].progress));
}

#[tokio::test]
async fn hundred_megabytes_spill_to_disk_in_full() {
    let env = Env::new();
    let total: u64 = 100_000_000;
    let out = run(
        &env,
        input(&format!(
            "head -c {total} /dev/zero | tr '\\0' 'a'; echo -n END"
        )),
    )
    .await
    .unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.output_bytes, total + 3);
    assert_eq!(out.output.len(), MEMORY_LIMIT_BYTES);
    assert!(out.output.bytes().all(|b| b == b'a'));
    let tail = out.output_tail.as_deref().unwrap();
    assert!(
        tail.ends_with("aaaEND") && tail.len() == 64 * 1024,
        "{}",
        tail.len()
    );
    let path = std::path::PathBuf::from(out.spill_path.unwrap());
    assert!(
        path.starts_with(env.data.path().join("tool-output")),
        "{}",
        path.display()
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), total + 3);
    // Check every byte without holding 100 MB at once.
    use std::io::Read;
    let mut f = std::fs::File::open(&path).unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let mut seen = 0u64;
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        for (i, b) in buf[..n].iter().enumerate() {
            let at = seen + i as u64;
            let want = if at < total {
                b'a'
            } else {
                b"END"[(at - total) as usize]
            };
            assert_eq!(*b, want, "byte {at}");
        }
        seen += n as u64;
    }
    assert_eq!(seen, total + 3);
}

#[tokio::test]
async fn spill_failure_fails_the_call() {
    let mut env = Env::new();
    let file = env.data.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    env.config.data_dir = file;
    let err = run(
        &env,
        input(&format!("head -c {} /dev/zero", MEMORY_LIMIT_BYTES + 10)),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("spill"), "{err}");
}

#[tokio::test]
async fn projection_shows_output_and_status() {
    let env = Env::new();
    let tool = BashTool::new(&env.config);
    let out = run(&env, input("echo hi; exit 2")).await.unwrap();
    let text = tool.project(&out)[0].as_text().unwrap().to_string();
    assert_eq!(text, "hi\n(exit code 2)");
}

/// A sandbox whose profile file is missing: it refuses every command with the
/// I/O error that stopped it.
#[derive(Debug)]
struct MissingProfile(std::path::PathBuf);

impl toolgate_tools::process_tools::CommandSandbox for MissingProfile {
    fn confine(
        &self,
        _request: &toolgate_tools::process_tools::ConfineRequest<'_>,
    ) -> Result<Option<toolgate_tools::process_tools::ConfinedCommand>, toolgate_core::Failure>
    {
        let profile = std::fs::read(&self.0)
            .map_err(|e| toolgate_core::Failure::caused("cannot read the sandbox profile", e))?;
        panic!("the profile exists: {} bytes", profile.len());
    }
}

#[tokio::test]
async fn a_refusing_sandbox_keeps_its_io_error_and_nothing_runs() {
    let mut env = Env::new();
    let profile = env.root().join("no-profile");
    env.config.sandbox = Some(std::sync::Arc::new(MissingProfile(profile)));
    let marker = env.root().join("ran");
    let command = format!("touch {}", marker.display());
    let err = run(&env, input(&command)).await.unwrap_err();
    assert!(matches!(err, ToolError::Caused(_)), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("cannot read the sandbox profile: "),
        "{err}"
    );
    assert_eq!(
        support::io_cause_kind(&err),
        Some(std::io::ErrorKind::NotFound),
        "{err}"
    );
    assert!(!marker.exists());
}
