//! Peak memory of the bash tool while a command prints 1 GiB, unconfined
//! and in the sandbox.
//!
//! Run: `cargo bench -p toolgate-tools --bench bash_memory`.
//! Prints the growth of this process's peak RSS (VmHWM in /proc/self/status)
//! across one bash call running `head -c 1G /dev/zero | tr '\0' 'a'`, and the
//! throughput, first unconfined, then confined by the machine's sandbox
//! (skipped, and said, where there is none). Exits non-zero when a growth is
//! 16 MiB or more.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use toolgate_core::{CallIdentity, Location, Tool, ToolContext};
use toolgate_tools::process_tools::{BashInput, BashTool, CommandSandbox, ProcessToolsConfig};

const LIMIT_KIB: u64 = 16 * 1024;

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("field in /proc/self/status")
}

/// Resets VmHWM to the current RSS (Linux: write 5 to clear_refs).
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn main() {
    // Inside the sandbox this process is the helper.
    toolgate_sandbox::run_if_requested();
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing
    // useful either way, so always run.
    let mut failed = !measure("unsandboxed", None);
    match support::Sandbox::detect() {
        Some(sb) => failed |= !measure("sandboxed", Some(Arc::new(sb))),
        None => println!("sandboxed: skipped, the machine cannot sandbox"),
    }
    if failed {
        std::process::exit(1);
    }
}

/// One 1 GiB run; whether the growth stayed under the limit.
fn measure(label: &str, sandbox: Option<Arc<dyn CommandSandbox>>) -> bool {
    let data = tempfile::tempdir().expect("temp dir");
    let root = tempfile::tempdir().expect("temp dir");
    let config = ProcessToolsConfig {
        data_dir: data.path().to_path_buf(),
        sandbox,
        ..ProcessToolsConfig::default()
    };
    let sandboxed = config.sandbox.is_some();
    let tool = BashTool::new(&config);
    let location = Arc::new(Location::new(root.path()).expect("location"));
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
    let input = |command: &str| BashInput {
        command: command.into(),
        workdir: None,
        timeout_ms: Some(600_000),
        description: None,
        unsandboxed: false,
        reason: None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");

    // Warm up: runtime threads, the blocking pool and a small spill.
    runtime
        .block_on(tool.execute(input("head -c 3M /dev/zero"), ctx()))
        .expect("warm-up");

    let command = r"head -c 1G /dev/zero | tr '\0' 'a'";
    let reset = reset_peak();
    let before = if reset {
        status_kib("VmRSS:")
    } else {
        status_kib("VmHWM:")
    };
    let started = Instant::now();
    let out = runtime
        .block_on(tool.execute(input(command), ctx()))
        .expect("bash run");
    let elapsed = started.elapsed();
    let after = status_kib("VmHWM:");
    assert_eq!(out.output_bytes, 1 << 30, "all output captured");
    assert_eq!(out.sandboxed, sandboxed);
    let spill = out.spill_path.expect("spilled");
    let spilled = std::fs::metadata(&spill).expect("spill file").len();
    assert_eq!(spilled, 1 << 30, "spill file holds everything");
    let _ = std::fs::remove_file(&spill);

    let growth = after.saturating_sub(before);
    println!("{label}: command: {command}");
    println!(
        "peak RSS before: {before} KiB, peak during: {after} KiB, growth: {growth} KiB ({:.1} MiB); \
         baseline {}",
        growth as f64 / 1024.0,
        if reset {
            "VmRSS after clear_refs reset"
        } else {
            "VmHWM (no reset)"
        }
    );
    println!(
        "1 GiB in {:.2} s ({:.0} MiB/s), spill file {spilled} bytes",
        elapsed.as_secs_f64(),
        1024.0 / elapsed.as_secs_f64()
    );
    if growth >= LIMIT_KIB {
        eprintln!("FAIL ({label}): peak memory growth {growth} KiB is not under {LIMIT_KIB} KiB");
        return false;
    }
    println!("OK ({label}): growth under 16 MiB");
    true
}
