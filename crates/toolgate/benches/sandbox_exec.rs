//! Wall time of `toolgate sandbox exec -- true` against `true`, in the same
//! run: `cargo bench -p toolgate --bench sandbox_exec`. The two run
//! interleaved (see `interleave`); prints the median of what the sandbox
//! (with toolgate's start, config loading and the cached detection of the
//! data directory) adds per round, with quartiles (target: under 10 ms).
//! With `TOOLGATE_BENCH_BEFORE=/path/to/toolgate` an older build runs in
//! the same rounds too. The location is at rest and has no config of its own.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::Duration;

mod interleave;

const RUNS: usize = 80;

fn main() {
    let base = tempfile::tempdir().expect("temp dir");
    let ws = base.path().join("ws");
    let home = base.path().join("home");
    std::fs::create_dir_all(ws.join("src")).expect("mkdir");
    std::fs::create_dir_all(&home).expect("mkdir");
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").expect("write");
    let home = match std::env::var_os("TOOLGATE_BENCH_REAL_HOME").filter(|v| v == "1") {
        Some(_) => std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME")),
        None => home,
    };
    // Each build keeps its own data directory: the caches kept there
    // between runs are trusted only by the build that wrote them, so two
    // builds sharing one would each throw the other's away every round.
    let run = |program: &str, args: &[&str]| -> bool {
        let data = base
            .path()
            .join(format!("data{}", program.replace('/', "_")));
        Command::new(program)
            .args(args)
            .current_dir(&ws)
            .env("HOME", &home)
            .env("TOOLGATE_DATA_DIR", data)
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
    let toolgates = interleave::toolgates();
    for (_, program) in &toolgates {
        assert!(run(program, &["sandbox", "exec", "--", "true"]));
    }
    let mut names = vec!["true"];
    names.extend(toolgates.iter().map(|(n, _)| n.as_str()));
    let series = interleave::rounds(
        &names,
        RUNS,
        |_, _| {},
        |variant, _| match variant {
            0 => run("true", &[]),
            v => run(&toolgates[v - 1].1, &["sandbox", "exec", "--", "true"]),
        },
    );
    interleave::report("toolgate sandbox exec -- true", &series);
}
