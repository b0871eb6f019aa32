//! Wall time of running `true` confined against running it plainly:
//! `cargo bench -p toolgate-sandbox --bench exec_true`. Prints p50/p90 of
//! each and the difference at p50, then where the time of a confined run
//! goes: building the command (the scan of the location for `.env` files
//! and hard links, placeholders) cold and from the scan cache, in an empty
//! location and in one of 3 000 files; compiling the seccomp filters (so
//! small that precompiling would not show); and detecting support fresh or
//! from the data directory's cache. The sandbox helper is this
//! crate's `toolgate-sandbox` binary (built by `cargo bench` before the
//! bench runs).

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 60;

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

fn report(what: &str, v: Vec<Duration>) -> Duration {
    let (p50, p90) = (percentile(v.clone(), 0.5), percentile(v.clone(), 0.9));
    println!(
        "{what:<44} p50 {p50:>10.3?}  p90 {p90:>10.3?}  ({} runs)",
        v.len()
    );
    p50
}

fn timed(runs: usize, mut f: impl FnMut()) -> Vec<Duration> {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect()
}

fn run(confined: &mut toolgate_sandbox::Confined) {
    let st = confined
        .command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run");
    assert!(st.success());
}

/// A location of `dirs` directories of `files` files each.
fn tree(root: &Path, dirs: usize, files: usize) {
    for d in 0..dirs {
        let dir = root.join(format!("src/m{d}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..files {
            std::fs::write(dir.join(format!("f{f}.rs")), "x").expect("write");
        }
    }
}

fn main() {
    // The first detection probes (bubblewrap runs twice); later calls in the
    // process are memoized.
    let t = Instant::now();
    let support = toolgate_sandbox::detect();
    let first_detect = t.elapsed();
    if !support.available {
        eprintln!("sandbox unavailable: {:?}", support.reasons);
        return;
    }
    let helper = PathBuf::from(env!("CARGO_BIN_EXE_toolgate-sandbox"));
    let ws = tempfile::tempdir().expect("tempdir");
    let mut spec = toolgate_sandbox::SandboxSpec::for_location(vec![ws.path().to_path_buf()], None);
    spec.helper = Some(helper.clone());
    println!("mechanism: {}", support.mechanism);
    let plain = report(
        "plain true",
        timed(RUNS, || {
            let st = Command::new("true")
                .stdin(Stdio::null())
                .status()
                .expect("run");
            assert!(st.success());
        }),
    );
    // Building the command (scanning the location, placeholders) is part of
    // the cost: timed too.
    let confined = report(
        "sandboxed true (build + run)",
        timed(RUNS, || {
            let mut c = spec
                .command(&support, "true", Vec::<String>::new())
                .expect("spec");
            run(&mut c);
        }),
    );
    println!(
        "{:<44} {:?}",
        "added at p50:",
        confined.saturating_sub(plain)
    );

    println!("--- where the time goes");
    report(
        "build the command, empty location",
        timed(RUNS, || {
            drop(spec.command(&support, "true", Vec::<String>::new()));
        }),
    );
    let big = tempfile::tempdir().expect("tempdir");
    tree(big.path(), 100, 30);
    // A directory changed in the last two seconds is read again on every
    // run (its stamp could hide a change made in the same clock tick): a
    // location at rest is older than that.
    std::thread::sleep(Duration::from_millis(2100));
    let mut big_spec =
        toolgate_sandbox::SandboxSpec::for_location(vec![big.path().to_path_buf()], None);
    big_spec.helper = Some(helper);
    // The first build reads every directory; later ones only the changed.
    let cold = timed(1, || {
        drop(big_spec.command(&support, "true", Vec::<String>::new()));
    });
    report("build the command, 3 000 files, first", cold);
    report(
        "build the command, 3 000 files, cached",
        timed(RUNS, || {
            drop(big_spec.command(&support, "true", Vec::<String>::new()));
        }),
    );
    report(
        "compile the seccomp filters",
        timed(RUNS, || {
            toolgate_sandbox::seccomp::filters().expect("filters");
        }),
    );
    println!(
        "{:<44} {first_detect:>14.3?}  (once per process)",
        "detect support (two bubblewrap runs)"
    );
    let cache = ws.path().join("support.json");
    toolgate_sandbox::detect_cached(&cache);
    report(
        "detect support from the cache",
        timed(RUNS, || {
            toolgate_sandbox::detect_cached(&cache);
        }),
    );
}
