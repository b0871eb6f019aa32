//! CPU per call with OTLP export on against off: the same `read` calls
//! through the whole engine (`Toolgate::settle`, SQLite audit log), one
//! engine with `[telemetry]` pointing at a collector and one without. The
//! collector is a sink in its own process that takes each request and drops
//! it (a real backend's ingestion would compete for this machine's cores;
//! the end-to-end test checks the spans in Arize Phoenix). CPU is the
//! process's user + system time (getrusage, every thread: the exporter's too);
//! each block of calls ends by flushing the audit log, which flushes the
//! exporter too, so a block's export is counted in it.
//! Rounds alternate which runs first; the figure is the mean of the rounds'
//! on/off ratios with its 95 % confidence interval.
//!
//! Run: `cargo bench -p toolgate --bench otlp_overhead` (target: ≤ 5 % more
//! CPU; `BENCH_ROUNDS=N`, default 30; `BENCH_AA=1` exports from both sides).

// A failed setup step should stop a bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

const ROUNDS: usize = 30;
const CALLS_PER_BLOCK: usize = 300;

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

/// A collector that takes every request and does nothing with it: Python's
/// standard library, in its own process (so its CPU is not the bench's).
/// A real backend (Phoenix) ingesting spans on this 2-core machine takes a
/// core away from the calls being measured, which measures the backend.
const SINK: &str = r#"
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()
    def do_GET(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"#;

fn main() {
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ROUNDS);
    let base = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(base.path().join("ws")).unwrap();
    std::fs::write(base.path().join("ws/a.txt"), "hello\n".repeat(50)).unwrap();
    let port = free_port();
    let mut server = Command::new("python3")
        .args(["-c", SINK, &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !healthy(port) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the sink did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // `BENCH_AA=1`: both engines export, a check that the two sides of the
    // bench are alike (the figure should then be near zero).
    let off_port = std::env::var_os("BENCH_AA").map(|_| port);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let ratios = runtime.block_on(async {
        let with = engine(base.path(), "on", Some(port));
        let without = engine(base.path(), "off", off_port);
        let (cat_on, cat_off) = (with.catalogue().unwrap(), without.catalogue().unwrap());
        // Warm up both.
        block(&with, &cat_on).await;
        block(&without, &cat_off).await;
        let mut ratios = Vec::new();
        for round in 0..rounds {
            // Flushing the audit log at a block's end flushes the exporter
            // too, so the export of the block's spans is counted in it.
            let (on, off) = if round % 2 == 0 {
                let on = block(&with, &cat_on).await;
                (on, block(&without, &cat_off).await)
            } else {
                let off = block(&without, &cat_off).await;
                (block(&with, &cat_on).await, off)
            };
            ratios.push(on.as_secs_f64() / off.as_secs_f64());
        }
        ratios
    });
    let _ = server.kill();
    let _ = server.wait();
    let n = ratios.len() as f64;
    let mean = ratios.iter().sum::<f64>() / n;
    let sd = (ratios.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let half = 1.96 * sd / n.sqrt();
    let mut sorted = ratios.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "CPU per call, export on / off, {rounds} rounds of {CALLS_PER_BLOCK} calls each: mean {:+.1} % (95 % CI {:+.1} .. {:+.1} %), median {:+.1} %",
        (mean - 1.0) * 100.0,
        (mean - half - 1.0) * 100.0,
        (mean + half - 1.0) * 100.0,
        (sorted[sorted.len() / 2] - 1.0) * 100.0
    );
}
