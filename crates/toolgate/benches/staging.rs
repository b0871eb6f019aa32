//! What staging and judging add to commands that write, against the same
//! command unconfined, in the same run: `cargo bench -p toolgate --bench
//! staging`. Three commands: one that writes 10 000 small files (a build's
//! target directory), one that writes a single 100 MB file, and `true`.
//! Each runs as `toolgate sandbox exec -- sh -c …` (confined, writes staged
//! in an overlay, every changed path judged by the policy, the accepted
//! ones landed as one checkpoint) and as `sh -c …` directly, interleaved
//! round by round, the file systems synced before each run (see
//! `interleave`). Prints the median of what confining adds per round and
//! of the ratio, with quartiles. Targets: 10 000 files ≤ 1.15×, 100 MB ≤
//! +50 ms, `true` ≤ +10 ms. With `TOOLGATE_BENCH_BEFORE=/path/to/toolgate`
//! an older build runs in the same rounds too.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod interleave;

use std::process::{Command, Stdio};
use std::time::Duration;

struct World {
    _base: tempfile::TempDir,
    ws: std::path::PathBuf,
    home: std::path::PathBuf,
    data: std::path::PathBuf,
}

impl World {
    fn new() -> World {
        let base = tempfile::tempdir().expect("temp dir");
        let root = base.path().canonicalize().expect("canonical");
        let ws = root.join("ws");
        let home = root.join("home");
        std::fs::create_dir_all(ws.join("src")).expect("mkdir");
        std::fs::create_dir_all(&home).expect("mkdir");
        World {
            data: root.join("data"),
            _base: base,
            ws,
            home,
        }
    }

    fn run(&self, program: &str, args: &[&str]) -> bool {
        Command::new(program)
            .args(args)
            .current_dir(&self.ws)
            .env("HOME", &self.home)
            .env("TOOLGATE_DATA_DIR", &self.data)
            .env("TOOLGATE_MANAGED_CONFIG", self.home.join("none.toml"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Removes every run's output (`out-*`).
    fn clean_outputs(&self) {
        for e in std::fs::read_dir(&self.ws).expect("read ws").flatten() {
            if e.file_name().to_string_lossy().starts_with("out-") {
                let p = e.path();
                let _ = std::fs::remove_dir_all(&p);
                let _ = std::fs::remove_file(&p);
            }
        }
    }
}

/// Times `script` (with `{}` replaced by a fresh output name per run) run
/// plainly and confined (by each of [`interleave::toolgates`]), interleaved,
/// `rounds` times each. Before each run, untimed, the previous output is
/// removed and the file systems are synced, so that no run pays for the
/// writeback of another's data.
fn compare(w: &World, what: &str, script: &str, rounds: usize) -> Vec<f64> {
    let toolgates = interleave::toolgates();
    let mut names = vec!["unconfined"];
    names.extend(toolgates.iter().map(|(n, _)| n.as_str()));
    let name = |variant: usize, round: usize| format!("out-{round}-{variant}");
    let series = interleave::rounds(
        &names,
        rounds,
        |_, _| {
            w.clean_outputs();
            // SAFETY: sync takes no arguments and cannot fail.
            unsafe { libc::sync() };
        },
        |variant, round| {
            let out = name(variant, round);
            let body = script.replace("{}", &out);
            let ok = match variant {
                0 => w.run("sh", &["-c", &body]),
                v => w.run(
                    &toolgates[v - 1].1,
                    &["sandbox", "exec", "--", "sh", "-c", &body],
                ),
            };
            assert!(
                body == "true" || w.ws.join(&out).exists(),
                "{what}: {out} was not written (landed)"
            );
            ok
        },
    );
    interleave::report(what, &series)
}

fn main() {
    let w = World::new();
    let toolgate = env!("CARGO_BIN_EXE_toolgate");
    if !w.run(toolgate, &["sandbox", "status"]) {
        eprintln!("sandbox unavailable: `toolgate sandbox status` says so");
        return;
    }
    // Warm: the detection cache, the page cache.
    for (_, program) in interleave::toolgates() {
        assert!(w.run(&program, &["sandbox", "exec", "--", "true"]));
    }
    std::thread::sleep(Duration::from_millis(2100));
    compare(&w, "true", "true", 40);
    compare(
        &w,
        "write 10 000 small files",
        "mkdir -p {}/a {}/b {}/c {}/d && for d in a b c d; do i=0; while [ $i -lt 2500 ]; do echo x > {}/$d/f$i.o; i=$((i+1)); done; done",
        12,
    );
    compare(
        &w,
        "write one 100 MB file",
        "head -c 104857600 /dev/zero > {}",
        20,
    );
}
