//! 100 MB of bash output keeps this process's memory bounded. A binary of its
//! own with one test, so no other test's allocations count.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "proc_support/mod.rs"]
mod support;

use support::Env;
use toolgate_core::Tool;
use toolgate_tools::process_tools::{BashInput, BashTool};

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn hundred_megabytes_of_output_stay_out_of_memory() {
    let env = Env::new();
    let tool = BashTool::new(&env.config);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let input = |command: &str| BashInput {
        command: command.into(),
        workdir: None,
        timeout_ms: None,
        description: None,
        unsandboxed: false,
        reason: None,
    };
    // Warm up the runtime, its blocking pool and the spill path.
    rt.block_on(tool.execute(input("head -c 3000000 /dev/zero"), env.ctx()))
        .unwrap();
    // Reset the peak to the current size (Linux clear_refs), else use the peak.
    let before = if std::fs::write("/proc/self/clear_refs", "5").is_ok() {
        status_kib("VmRSS:")
    } else {
        status_kib("VmHWM:")
    };
    let out = rt
        .block_on(tool.execute(
            input("head -c 100000000 /dev/zero | tr '\\0' 'z'"),
            env.ctx(),
        ))
        .unwrap();
    let growth = status_kib("VmHWM:").saturating_sub(before);
    assert_eq!(out.output_bytes, 100_000_000);
    let spill = out.spill_path.unwrap();
    assert_eq!(std::fs::metadata(&spill).unwrap().len(), 100_000_000);
    eprintln!("peak memory growth over 100 MB of output: {growth} KiB");
    assert!(growth < 16 * 1024, "peak memory grew by {growth} KiB");
}
