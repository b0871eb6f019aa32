//! What staging and judging add to commands that write, against the same
//! command unconfined, in the same run: `cargo bench -p toolgate --bench
//! staging`. Three commands: one that writes 10 000 small files (a build's
//! target directory), one that writes a single 100 MB file, and `true`.
//! Each runs as `toolgate sandbox exec -- …` (confined, writes staged in an
//! overlay, every changed path judged by the policy, the accepted ones
//! landed as one checkpoint) and directly, interleaved round by round, the
//! file systems synced before each run (see `interleave`). Prints the
//! median of what confining adds per round and of the ratio, with
//! quartiles. Targets: 10 000 files ≤ 1.15×, 100 MB ≤ +50 ms, `true` ≤ +10
//! ms. With `TOOLGATE_BENCH_BEFORE=/path/to/toolgate` an older build runs in
//! the same rounds too.
//!
//! The 10 000 files are written by a compiled program (this bench's own
//! executable, copied into the workspace and started with
//! [`WRITE_FILES`]), as a compiler writes them: a shell loop's own time,
//! which swings with the machine's load, would be most of what is timed.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod interleave;

use std::process::{Command, Stdio};
use std::time::Duration;

/// The first argument that makes this executable the writer of small files:
/// `WRITE_FILES DIR` writes `DIR/{a,b,c,d}/f0.o … f2499.o`, 2 bytes each.
const WRITE_FILES: &str = "--write-10000-files";

/// Writes 10 000 small files under `dir`, in four directories.
fn write_files(dir: &std::path::Path) -> std::io::Result<()> {
    for d in ["a", "b", "c", "d"] {
        let sub = dir.join(d);
        std::fs::create_dir_all(&sub)?;
        for i in 0..2500 {
            std::fs::write(sub.join(format!("f{i}.o")), b"x\n")?;
        }
    }
    Ok(())
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

/// Times `command` (with `{}` in its arguments replaced by a fresh output
/// name per run) run plainly and confined (by each of
/// [`interleave::toolgates`]), interleaved, `rounds` times each. Before each
/// run, untimed, the previous output is removed and the file systems are
/// synced, so that no run pays for the writeback of another's data.
fn compare(w: &World, what: &str, command: &[&str], rounds: usize) -> Vec<f64> {
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
            let argv: Vec<String> = command.iter().map(|a| a.replace("{}", &out)).collect();
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let ok = match variant {
                0 => w.run(argv[0], &argv[1..]),
                v => {
                    let mut confined = vec!["sandbox", "exec", "--"];
                    confined.extend(&argv);
                    w.run(&toolgates[v - 1].1, &confined)
                }
            };
            assert!(
                command == ["true"] || w.ws.join(&out).exists(),
                "{what}: {out} was not written (landed)"
            );
            ok
        },
    );
    interleave::report(what, &series)
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    if args.next().is_some_and(|a| a == WRITE_FILES) {
        let dir = args.next().expect("a directory to write in");
        std::process::exit(match write_files(std::path::Path::new(&dir)) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("{e}");
                1
            }
        });
    }
    let w = World::new();
    // The writer, where a confined command sees it too (the workspace).
    let writer = w.ws.join("write-files");
    std::fs::copy(std::env::current_exe().expect("this bench"), &writer).expect("copy the writer");
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
    compare(&w, "true", &["true"], 40);
    compare(
        &w,
        "write 10 000 small files",
        &[writer.to_str().expect("a UTF-8 path"), WRITE_FILES, "{}"],
        20,
    );
    compare(
        &w,
        "write one 100 MB file",
        &["sh", "-c", "head -c 104857600 /dev/zero > {}"],
        20,
    );
}
