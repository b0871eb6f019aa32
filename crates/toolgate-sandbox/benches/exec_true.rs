//! Wall time of running `true` confined against running it plainly:
//! `cargo bench -p toolgate-sandbox --bench exec_true`. Prints p50/p90 of
//! each and the difference at p50. The sandbox helper is this crate's
//! `toolgate-sandbox` binary (built by `cargo bench` before the bench runs).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: usize = 60;

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

fn time(mut make: impl FnMut() -> toolgate_sandbox::Confined) -> Vec<Duration> {
    (0..RUNS)
        .map(|_| {
            // Building the command (scanning the location, placeholders) is
            // part of the cost: timed too.
            let t = Instant::now();
            let mut confined = make();
            let cmd = &mut confined.command;
            cmd.stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            let st = cmd.status().expect("run");
            assert!(st.success());
            t.elapsed()
        })
        .collect()
}

fn main() {
    let support = toolgate_sandbox::detect();
    if !support.available {
        eprintln!("sandbox unavailable: {:?}", support.reasons);
        return;
    }
    let helper = PathBuf::from(env!("CARGO_BIN_EXE_toolgate-sandbox"));
    let ws = tempfile::tempdir().expect("tempdir");
    let mut spec = toolgate_sandbox::SandboxSpec::for_location(vec![ws.path().to_path_buf()], None);
    spec.helper = Some(helper);
    let plain: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            let st = Command::new("true")
                .stdin(Stdio::null())
                .status()
                .expect("run");
            assert!(st.success());
            t.elapsed()
        })
        .collect();
    let confined = time(|| {
        spec.command(&support, "true", Vec::<String>::new())
            .expect("spec")
    });
    let (p50a, p90a) = (percentile(plain.clone(), 0.5), percentile(plain, 0.9));
    let (p50b, p90b) = (percentile(confined.clone(), 0.5), percentile(confined, 0.9));
    println!("mechanism: {}", support.mechanism);
    println!("plain true:     p50 {p50a:?}  p90 {p90a:?}  ({RUNS} runs)");
    println!("sandboxed true: p50 {p50b:?}  p90 {p90b:?}  ({RUNS} runs)");
    println!("added at p50:   {:?}", p50b.saturating_sub(p50a));
}
