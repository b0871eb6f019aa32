//! What staging and judging add to commands that write, against the same
//! command unconfined, in the same run: `cargo bench -p toolgate --bench
//! staging`. Three commands: one that writes 10 000 small files (a build's
//! target directory), one that writes a single 100 MB file, and `true`.
//! Each runs as `toolgate sandbox exec -- sh -c …` (confined, writes staged
//! in an overlay, every changed path judged by the policy, the accepted
//! ones landed as one checkpoint) and as `sh -c …` directly. Prints p50 of
//! each, the difference and the ratio. Targets: 10 000 files ≤ 1.15×,
//! 100 MB ≤ +50 ms, `true` ≤ +10 ms.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

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

    fn clean(&self, name: &str) {
        let p = self.ws.join(name);
        let _ = std::fs::remove_dir_all(&p);
        let _ = std::fs::remove_file(&p);
    }
}

/// Times `script` (with `{}` replaced by a fresh output name per run) run
/// plainly and confined, alternating, `runs` times each.
fn compare(w: &World, what: &str, script: &str, runs: usize) -> (Duration, Duration) {
    let toolgate = env!("CARGO_BIN_EXE_toolgate");
    let mut plain = Vec::new();
    let mut staged = Vec::new();
    for i in 0..runs {
        for confined in [false, true] {
            let name = format!("out-{i}-{confined}");
            let body = script.replace("{}", &name);
            let t = Instant::now();
            let ok = if confined {
                w.run(toolgate, &["sandbox", "exec", "--", "sh", "-c", &body])
            } else {
                w.run("sh", &["-c", &body])
            };
            let took = t.elapsed();
            assert!(ok, "{what} ({confined}) failed");
            assert!(
                body == "true" || w.ws.join(&name).exists(),
                "{what}: {name} was not written (landed)"
            );
            w.clean(&name);
            if confined {
                staged.push(took);
            } else {
                plain.push(took);
            }
        }
    }
    let (a, b) = (percentile(plain, 0.5), percentile(staged, 0.5));
    println!(
        "{what:<34} plain p50 {a:>10.2?}  staged p50 {b:>10.2?}  added {:>10.2?}  ratio {:.2}x  ({runs} runs each)",
        b.saturating_sub(a),
        b.as_secs_f64() / a.as_secs_f64()
    );
    (a, b)
}

fn main() {
    let w = World::new();
    let toolgate = env!("CARGO_BIN_EXE_toolgate");
    if !w.run(toolgate, &["sandbox", "status"]) {
        eprintln!("sandbox unavailable: `toolgate sandbox status` says so");
        return;
    }
    // Warm: the detection cache, the page cache.
    assert!(w.run(toolgate, &["sandbox", "exec", "--", "true"]));
    std::thread::sleep(Duration::from_millis(2100));
    let _ = Path::new("");
    compare(&w, "true", "true", 40);
    compare(
        &w,
        "write 10 000 small files",
        "mkdir -p {}/a {}/b {}/c {}/d && for d in a b c d; do i=0; while [ $i -lt 2500 ]; do echo x > {}/$d/f$i.o; i=$((i+1)); done; done",
        10,
    );
    compare(
        &w,
        "write one 100 MB file",
        "head -c 104857600 /dev/zero > {}",
        10,
    );
}
