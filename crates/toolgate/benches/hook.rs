//! Wall time of one hook process answering a Claude Code PreToolUse payload
//! for a 100-character command in a git repository — `toolgate-hook
//! claude-code` (what `toolgate hook install` sets up) and `toolgate hook
//! claude-code` — against processes that only start and exit (`true`, an
//! empty Rust program built here with `rustc -O`, and `toolgate --version`),
//! interleaved in the same run: `cargo bench --profile release -p toolgate
//! --bench hook`. Prints p50/p90 of each and the ratios at p50 (targets: p50
//! ≤ 2 ms, and ≤ 2× a start-and-exit process). The decision is recorded in
//! the audit log, as in real use. With `TOOLGATE_BENCH_HOOK_BEFORE=PATH`,
//! another build's `toolgate-hook` runs in the same rounds (a change against
//! the build before it). Each round runs the cases in a rotated order.
//!
//! On a loaded machine the wall time is mostly waiting for a core, so each
//! case's CPU time (user + system, from `wait4`) is printed too: it moves
//! far less with the load.

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
    // Whether it succeeded, and its CPU time (user + system). The child is
    // reaped by `wait4`, which `Child` does not see.
    #[allow(clippy::zombie_processes)]
    let run = |program: &str, args: &[&str], stdin: Option<&str>| -> (bool, Duration) {
        // Each build its own data directory: a log written by a newer build
        // may be refused by an older one (its schema version).
        let build = std::path::Path::new(program)
            .parent()
            .and_then(|p| p.file_name())
            .map_or_else(|| "system".into(), |n| n.to_string_lossy().into_owned());
        let mut child = Command::new(program)
            .args(args)
            .current_dir(&ws)
            .env("HOME", &home)
            .env(
                "TOOLGATE_DATA_DIR",
                base.path().join(format!("data-{build}")),
            )
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
        let pid = i32::try_from(child.id()).expect("pid");
        let mut status = 0;
        // SAFETY: a zeroed `rusage` is valid; `wait4` fills it and `status`.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is this process's child, not yet waited for.
        let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        let ok = waited == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        (ok, tv(usage.ru_utime) + tv(usage.ru_stime))
    };
    let toolgate = env!("CARGO_BIN_EXE_toolgate");
    let hook_only = env!("CARGO_BIN_EXE_toolgate-hook");
    // The smallest Rust program, built as a release build would be.
    let empty = base.path().join("empty");
    std::fs::write(base.path().join("empty.rs"), "fn main() {}\n").expect("write");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let built = Command::new(rustc)
        .args(["-O", "--edition", "2024", "-o"])
        .arg(&empty)
        .arg(base.path().join("empty.rs"))
        .status();
    assert!(built.is_ok_and(|s| s.success()), "rustc");
    // Every program timed is a fresh copy in this run's directory: how a
    // binary's pages came into the page cache (written by the linker, copied,
    // read back after being dropped) changes how many page faults starting
    // it takes, and moved a hook's CPU time by up to half between copies of
    // the same bytes on this project's machine.
    let fresh = |from: &str, dir: &str, name: &str| -> String {
        let to = base.path().join(dir);
        std::fs::create_dir_all(&to).expect("mkdir");
        let to = to.join(name);
        std::fs::copy(from, &to).expect("copy a timed program");
        to.to_str().expect("UTF-8 path").to_string()
    };
    let empty = fresh(empty.to_str().expect("UTF-8 path"), "now", "empty");
    let toolgate = &fresh(toolgate, "now", "toolgate");
    let hook_only = &fresh(hook_only, "now", "toolgate-hook");
    // Warm the page cache and create the data directory and audit log.
    for _ in 0..5 {
        assert!(run(toolgate, &["hook", "claude-code"], Some(&payload)).0);
        assert!(run(hook_only, &["claude-code"], Some(&payload)).0);
    }
    let mut cases: Vec<(&str, &str, &[&str], Option<&str>)> = vec![
        ("true", "true", &[], None),
        ("empty Rust program", &empty, &[], None),
        ("toolgate --version", toolgate, &["--version"], None),
        (
            "toolgate hook claude-code",
            toolgate,
            &["hook", "claude-code"],
            Some(&payload),
        ),
        (
            "toolgate-hook claude-code",
            hook_only,
            &["claude-code"],
            Some(&payload),
        ),
    ];
    // Another build's `toolgate-hook` (say, from the main branch), to compare
    // a change with what it changes in the same run.
    let before = std::env::var("TOOLGATE_BENCH_HOOK_BEFORE")
        .ok()
        .map(|path| fresh(&path, "before", "toolgate-hook"));
    if let Some(before) = &before {
        for _ in 0..5 {
            assert!(run(before, &["claude-code"], Some(&payload)).0, "{before}");
        }
        cases.push((
            "toolgate-hook (before)",
            before,
            &["claude-code"],
            Some(&payload),
        ));
    }
    // Round-robin, so that a change of load touches every case alike, each
    // round starting one case later (no case always follows the same one).
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(RUNS); cases.len()];
    let mut cpu: Vec<Vec<Duration>> = vec![Vec::with_capacity(RUNS); cases.len()];
    for round in 0..RUNS {
        for k in 0..cases.len() {
            let i = (round + k) % cases.len();
            let (_, program, args, stdin) = &cases[i];
            let t = Instant::now();
            let (ok, used) = run(program, args, *stdin);
            times[i].push(t.elapsed());
            assert!(ok, "{program} {args:?}");
            cpu[i].push(used);
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let p50: Vec<f64> = times
        .iter()
        .map(|v| ms(percentile(v.clone(), 0.5)))
        .collect();
    let cpu50: Vec<f64> = cpu.iter().map(|v| ms(percentile(v.clone(), 0.5))).collect();
    for (((name, ..), v), c) in cases.iter().zip(&times).zip(&cpu50) {
        println!(
            "{name:<28} p50 {:>7.3} ms  p90 {:>7.3} ms  cpu p50 {c:>7.3} ms",
            ms(percentile(v.clone(), 0.5)),
            ms(percentile(v.clone(), 0.9))
        );
    }
    let mut hooks = vec![("toolgate-hook", p50[4]), ("toolgate hook", p50[3])];
    if let Some(&h) = p50.get(5) {
        hooks.push(("toolgate-hook (before)", h));
    }
    for (name, h) in hooks {
        println!(
            "{name} p50 {h:.3} ms: {:.2}x `true`, {:.2}x the empty Rust program, {:.2}x `toolgate --version` (targets: <= 2 ms, <= 2x)",
            h / p50[0],
            h / p50[1],
            h / p50[2]
        );
    }
    let mut hook_cpu = vec![("toolgate-hook", cpu50[4]), ("toolgate hook", cpu50[3])];
    if let Some(&h) = cpu50.get(5) {
        hook_cpu.push(("toolgate-hook (before)", h));
    }
    for (name, h) in hook_cpu {
        println!(
            "{name} cpu p50 {h:.3} ms: {:.2}x the empty Rust program's {:.3} ms",
            h / cpu50[1],
            cpu50[1]
        );
    }
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average: {}", load.trim());
    }
}
