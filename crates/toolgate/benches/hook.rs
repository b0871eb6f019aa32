//! Wall time of one `toolgate hook claude-code` process answering a
//! PreToolUse payload for a 100-character command in a git repository,
//! against a process that only starts and exits (`true`, and `toolgate
//! --version`), in the same run: `cargo bench -p toolgate --bench hook`.
//! Prints p50/p90 of each and the ratio at p50 (targets: p50 ≤ 2 ms, and ≤ 2×
//! a start-and-exit process). The decision is recorded in the audit log, as
//! in real use.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 200;

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let base = tempfile::tempdir().expect("temp dir");
    let ws = base.path().join("ws");
    let home = base.path().join("home");
    std::fs::create_dir_all(ws.join("src")).expect("mkdir");
    std::fs::create_dir_all(&home).expect("mkdir");
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").expect("write");
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ws)
        .status();
    assert!(git.is_ok_and(|s| s.success()), "git init");
    // 100 characters, read-only: allowed outright.
    let command = "git log --oneline --decorate -n 20 -- src/main.rs && git status --short && grep -rn main src | head";
    let command = &command[..100.min(command.len())];
    let payload = serde_json::json!({
        "session_id": "bench", "transcript_path": "/dev/null", "cwd": ws,
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command, "description": "bench"}, "tool_use_id": "toolu_bench",
    })
    .to_string();
    let run = |program: &str, args: &[&str], stdin: Option<&str>| -> bool {
        let mut child = Command::new(program)
            .args(args)
            .current_dir(&ws)
            .env("HOME", &home)
            .env("TOOLGATE_DATA_DIR", base.path().join("data"))
            .env("TOOLGATE_MANAGED_CONFIG", home.join("none.toml"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(text.as_bytes())
                .expect("write payload");
        }
        child.wait().is_ok_and(|s| s.success())
    };
    let toolgate = env!("CARGO_BIN_EXE_toolgate");
    // Warm the page cache and create the data directory and audit log.
    for _ in 0..5 {
        assert!(
            run(toolgate, &["hook", "claude-code"], Some(&payload)),
            "hook"
        );
    }
    let time = |program: &str, args: &[&str], stdin: Option<&str>| -> Vec<Duration> {
        (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                assert!(run(program, args, stdin), "{program} {args:?}");
                t.elapsed()
            })
            .collect()
    };
    let plain = time("true", &[], None);
    let version = time(toolgate, &["--version"], None);
    let hook = time(toolgate, &["hook", "claude-code"], Some(&payload));
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    for (name, v) in [
        ("true", &plain),
        ("toolgate --version", &version),
        ("toolgate hook claude-code", &hook),
    ] {
        println!(
            "{name:<28} p50 {:>7.3} ms  p90 {:>7.3} ms",
            ms(percentile(v.clone(), 0.5)),
            ms(percentile(v.clone(), 0.9))
        );
    }
    let h = ms(percentile(hook, 0.5));
    println!(
        "hook p50 {h:.3} ms: {:.2}x `true`, {:.2}x `toolgate --version` (targets: <= 2 ms, <= 2x)",
        h / ms(percentile(plain, 0.5)),
        h / ms(percentile(version, 0.5))
    );
}
