//! CPU per call with OTLP export on against off: the same `read` calls
//! through the whole engine (`Toolgate::settle`, SQLite audit log), one
//! engine with `[telemetry]` pointing at a real OTLP backend (Arize Phoenix,
//! `bash scripts/setup-phoenix.sh`, started here) and one without. CPU is the
//! process's user + system time (getrusage, every thread: the exporter's too),
//! and each block of calls ends by flushing the log and the exporter, so the
//! export of a block is counted in it. Blocks alternate, on then off, to
//! spread the machine's noise over both.
//!
//! Run: `cargo bench -p toolgate --bench otlp_overhead` (target: ≤ 5 % more CPU).

// A failed setup step should stop a bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

const BLOCKS: usize = 8;
const CALLS_PER_BLOCK: usize = 500;

fn cpu() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    assert_eq!(rc, 0);
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn healthy(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = write!(s, "GET /healthz HTTP/1.0\r\n\r\n");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.starts_with("HTTP/1.1 200") || out.starts_with("HTTP/1.0 200")
}

fn engine(base: &Path, name: &str, telemetry: Option<u16>) -> toolgate::Toolgate {
    let home = base.join(name);
    std::fs::create_dir_all(&home).unwrap();
    let config = home.join("config.toml");
    let text = match telemetry {
        Some(port) => format!("[telemetry]\nendpoint = \"http://127.0.0.1:{port}\"\n"),
        None => String::new(),
    };
    std::fs::write(&config, text).unwrap();
    toolgate::Builder::new()
        .location(base.join("ws"))
        .data_dir(home.join("data"))
        .user_config(Some(config))
        .managed_config(None)
        .build()
        .unwrap()
}

async fn block(t: &toolgate::Toolgate, catalogue: &toolgate::Catalogue) -> Duration {
    let before = cpu();
    for _ in 0..CALLS_PER_BLOCK {
        t.settle(catalogue, "read", json!({"path": "a.txt"}))
            .await
            .unwrap();
    }
    let log = std::sync::Arc::clone(t.start().unwrap().audit_log());
    // Flushing blocks: off the runtime's thread.
    tokio::task::spawn_blocking(move || log.flush().unwrap())
        .await
        .unwrap();
    cpu() - before
}

fn main() {
    let phoenix: PathBuf =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".phoenix-venv/bin/phoenix");
    assert!(
        phoenix.exists(),
        "run `bash scripts/setup-phoenix.sh` first (the OTLP backend)"
    );
    let base = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(base.path().join("ws")).unwrap();
    std::fs::write(base.path().join("ws/a.txt"), "hello\n".repeat(50)).unwrap();
    let port = free_port();
    let mut server = Command::new(phoenix)
        .arg("serve")
        .env("PHOENIX_PORT", port.to_string())
        .env("PHOENIX_GRPC_PORT", free_port().to_string())
        .env("PHOENIX_HOST", "127.0.0.1")
        .env("PHOENIX_WORKING_DIR", base.path().join("phoenix"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !healthy(port) {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "Phoenix did not start"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (on, off) = runtime.block_on(async {
        let with = engine(base.path(), "on", Some(port));
        let without = engine(base.path(), "off", None);
        let (cat_on, cat_off) = (with.catalogue().unwrap(), without.catalogue().unwrap());
        // Warm up both.
        block(&with, &cat_on).await;
        block(&without, &cat_off).await;
        let (mut on, mut off) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..BLOCKS {
            on += block(&with, &cat_on).await;
            off += block(&without, &cat_off).await;
        }
        (on, off)
    });
    let _ = server.kill();
    let _ = server.wait();
    let calls = (BLOCKS * CALLS_PER_BLOCK) as f64;
    let per = |d: Duration| d.as_secs_f64() * 1e6 / calls;
    println!(
        "CPU per call: export off {:.1} µs, export on {:.1} µs: {:+.1} % ({} calls each)",
        per(off),
        per(on),
        (per(on) / per(off) - 1.0) * 100.0,
        calls
    );
}
