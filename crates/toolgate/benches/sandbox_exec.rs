//! Wall time of `toolgate sandbox exec -- true` against `true`, in the same
//! run: `cargo bench -p toolgate --bench sandbox_exec`. Prints p50/p90 of
//! each and what the sandbox (with toolgate's start, config loading and the
//! cached detection of the data directory) adds at p50 (target: under
//! 10 ms). The location is at rest and has no config of its own.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 60;

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
    let run = |program: &str, args: &[&str]| -> bool {
        Command::new(program)
            .args(args)
            .current_dir(&ws)
            .env("HOME", &home)
            .env("TOOLGATE_DATA_DIR", base.path().join("data"))
            .env("TOOLGATE_MANAGED_CONFIG", home.join("none.toml"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let toolgate = env!("CARGO_BIN_EXE_toolgate");
    if !run(toolgate, &["sandbox", "status"]) {
        eprintln!("sandbox unavailable: `toolgate sandbox status` says so");
        return;
    }
    // Warm: the detection cache, the page cache.
    assert!(run(toolgate, &["sandbox", "exec", "--", "true"]));
    std::thread::sleep(Duration::from_millis(2100));
    let time = |program: &str, args: &[&str]| -> Vec<Duration> {
        (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                assert!(run(program, args), "{program} {args:?}");
                t.elapsed()
            })
            .collect()
    };
    let plain = time("true", &[]);
    let confined = time(toolgate, &["sandbox", "exec", "--", "true"]);
    let (a50, a90) = (percentile(plain.clone(), 0.5), percentile(plain, 0.9));
    let (b50, b90) = (percentile(confined.clone(), 0.5), percentile(confined, 0.9));
    println!("true:                           p50 {a50:?}  p90 {a90:?}  ({RUNS} runs)");
    println!("toolgate sandbox exec -- true:  p50 {b50:?}  p90 {b90:?}  ({RUNS} runs)");
    println!("added at p50: {:?}", b50.saturating_sub(a50));
}
