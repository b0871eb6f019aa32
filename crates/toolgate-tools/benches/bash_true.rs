//! Wall time of the bash tool running `true`, unconfined and in the
//! sandbox, in the same run: `cargo bench -p toolgate-tools --bench
//! bash_true`. Prints p50/p90 of each and what the sandbox adds at p50
//! (target: under 10 ms). The location is at rest (older than the scan
//! cache's two-second window), as between an agent's calls.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use toolgate_core::{CallIdentity, Location, Tool, ToolContext};
use toolgate_tools::process_tools::{BashInput, BashTool, CommandSandbox, ProcessToolsConfig};

const RUNS: usize = 60;

fn percentile(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    toolgate_sandbox::run_if_requested();
    let Some(sandbox) = support::Sandbox::detect() else {
        return;
    };
    let data = tempfile::tempdir().expect("temp dir");
    let root = tempfile::tempdir().expect("temp dir");
    // A small project: a few directories and files for the scan.
    for d in 0..20 {
        let dir = root.path().join(format!("src/m{d}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        for f in 0..20 {
            std::fs::write(dir.join(format!("f{f}.rs")), "x").expect("write");
        }
    }
    std::thread::sleep(Duration::from_millis(2100));
    let location = Arc::new(Location::new(root.path()).expect("location"));
    let plain_tool = BashTool::new(&ProcessToolsConfig {
        data_dir: data.path().to_path_buf(),
        ..ProcessToolsConfig::default()
    });
    let confined_tool = BashTool::new(&ProcessToolsConfig {
        data_dir: data.path().to_path_buf(),
        sandbox: Some(Arc::new(sandbox) as Arc<dyn CommandSandbox>),
        ..ProcessToolsConfig::default()
    });
    let ctx = || {
        ToolContext::new(
            CallIdentity {
                session_id: "bench".into(),
                call_id: "bench".into(),
                ..CallIdentity::default()
            },
            Arc::clone(&location),
            CancellationToken::new(),
        )
    };
    let input = || BashInput {
        command: "true".into(),
        workdir: None,
        timeout_ms: Some(60_000),
        description: None,
        unsandboxed: false,
        reason: None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let time = |tool: &BashTool, sandboxed: bool| -> Vec<Duration> {
        // One warm-up run (and the scan cache's first walk).
        let out = runtime.block_on(tool.execute(input(), ctx())).expect("run");
        assert_eq!(out.sandboxed, sandboxed);
        (0..RUNS)
            .map(|_| {
                let t = Instant::now();
                let out = runtime.block_on(tool.execute(input(), ctx())).expect("run");
                assert_eq!(out.exit_code, Some(0));
                t.elapsed()
            })
            .collect()
    };
    let plain = time(&plain_tool, false);
    let confined = time(&confined_tool, true);
    let (a50, a90) = (percentile(plain.clone(), 0.5), percentile(plain, 0.9));
    let (b50, b90) = (percentile(confined.clone(), 0.5), percentile(confined, 0.9));
    println!("bash tool, true, unsandboxed: p50 {a50:?}  p90 {a90:?}  ({RUNS} runs)");
    println!("bash tool, true, sandboxed:   p50 {b50:?}  p90 {b90:?}  ({RUNS} runs)");
    println!("added at p50: {:?}", b50.saturating_sub(a50));
}
