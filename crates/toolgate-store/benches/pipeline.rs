//! The full settle pipeline (`toolgate_core::Engine::settle`) with this crate's
//! stores: a trivial tool (the shared echo), a gate that allows everything, the
//! `SpillStore` and the `EventLog` (Durability::Normal) in a tempdir.
//!
//! - `per_call/event_log` vs `per_call/discard_sink`: the cost of one allowed
//!   call, and what the durable log adds (4 awaited events per call).
//! - `concurrent/{8,64}`: calls/s with that many calls in flight on a
//!   multi-thread runtime.
//!
//! - `hashing/format_{1,2}`: what the submitter and the committer do for one
//!   typical event payload in each hash-chain format (canonical forms to store
//!   and to hash, then the hash); `format_2_with_a_float` is a payload that
//!   needs the RFC 8785 canonicaliser.
//!
//! After the criterion groups, a plain loop prints the per-call p50/p99 with
//! the log, measured call by call.
//!
//! Run: `cargo bench -p toolgate-store --bench pipeline`

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate_core::test_util::{DiscardSink, Echo, ScriptedGate, call};
use toolgate_core::{CallRequest, Catalogue, Engine, EventSink, Location, Registry, ToolSet};
use toolgate_store::canonical::{
    GENESIS_HASH, HashInput, LogFormat, format1, stored_and_hashed_payload,
};
use toolgate_store::{Durability, EventLog, SpillStore};

struct Setup {
    engine: Engine,
    catalogue: Catalogue,
    location: Arc<Location>,
    _registration: toolgate_core::Registration,
    _dir: tempfile::TempDir,
}

fn setup(log: bool) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let sink: Arc<dyn EventSink> = if log {
        Arc::new(EventLog::open(dir.path().join("events.db"), Durability::Normal).unwrap())
    } else {
        Arc::new(DiscardSink)
    };
    let tools = ToolSet::new(Registry::new(), Registry::new());
    let registration = tools.process().register("echo", Echo::plain()).unwrap();
    let engine = Engine::new(
        tools,
        ScriptedGate::allow_all(),
        sink,
        Arc::new(SpillStore::new(dir.path())),
    );
    let catalogue = engine.materialize();
    let location = Arc::new(Location::new(dir.path()).unwrap());
    Setup {
        engine,
        catalogue,
        location,
        _registration: registration,
        _dir: dir,
    }
}

fn echo_call(n: u64) -> CallRequest {
    call("echo", json!({"text": "hello"}), &format!("call-{n}"))
}

async fn one(s: &Setup, n: u64) {
    s.engine
        .settle(
            &s.catalogue,
            echo_call(n),
            Arc::clone(&s.location),
            CancellationToken::new(),
        )
        .await
        .unwrap();
}

fn per_call(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("per_call");
    for (name, log) in [("event_log", true), ("discard_sink", false)] {
        let s = setup(log);
        let mut n = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                n += 1;
                rt.block_on(one(&s, n));
            })
        });
    }
    group.finish();
}

fn concurrent(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("concurrent");
    group.throughput(Throughput::Elements(1));
    for in_flight in [8u64, 64] {
        let s = Arc::new(setup(true));
        group.bench_function(format!("{in_flight}_in_flight"), |b| {
            b.iter_custom(|iters| {
                let s = Arc::clone(&s);
                rt.block_on(async move {
                    let start = Instant::now();
                    let per_task = iters.div_ceil(in_flight);
                    let tasks: Vec<_> = (0..in_flight)
                        .map(|t| {
                            let s = Arc::clone(&s);
                            tokio::spawn(async move {
                                for i in 0..per_task {
                                    one(&s, t * 1_000_000_000 + i).await;
                                }
                            })
                        })
                        .collect();
                    for t in tasks {
                        t.await.unwrap();
                    }
                    // Normalise to exactly `iters` calls.
                    start
                        .elapsed()
                        .mul_f64(iters as f64 / (per_task * in_flight) as f64)
                })
            })
        });
    }
    group.finish();
}

fn hashing(c: &mut Criterion) {
    let payload = json!({
        "action": "read", "actor": "policy", "args": {"path": "notes.txt", "limit": 20},
        "reason": "read `/ws/notes.txt` (read): no rule matched; reads are allowed by default",
        "resource": "/ws/notes.txt", "riskAtDecision": "read", "sourcedFrom": "default",
        "suggestedDecision": "allow", "tool": "read", "toolCallId": "call-1a232053fbf-4fd2-0"
    });
    // The same with one float, which format 2 must hand to the canonicaliser.
    let mut with_float = payload.clone();
    with_float["args"]["ratio"] = json!(0.5);
    let mut group = c.benchmark_group("hashing");
    group.throughput(Throughput::Elements(1));
    let cases: [(&str, LogFormat, &serde_json::Value); 3] = [
        ("format_1", LogFormat::V1, &payload),
        ("format_2", LogFormat::V2, &payload),
        ("format_2_with_a_float", LogFormat::V2, &with_float),
    ];
    for (name, format, payload) in cases {
        group.bench_function(name, |b| {
            b.iter(|| {
                // What the submitter and the committer do for one event.
                let payload = std::hint::black_box(payload);
                let (stored, hashed) = match format {
                    LogFormat::V1 => {
                        let stored = format1::canonical_json(payload);
                        (stored.clone(), stored)
                    }
                    LogFormat::V2 => stored_and_hashed_payload(payload),
                };
                let input = HashInput {
                    seq: 42,
                    ts_ms: 1_700_000_000_000,
                    kind: "permission.requested",
                    session_id: "bench",
                    call_id: "call-1a232053fbf-4fd2-0",
                    payload_canonical: &hashed,
                };
                (stored, format.hash(&input, GENESIS_HASH))
            })
        });
    }
    group.finish();
}

/// Call-by-call percentiles, which criterion's per-sample means do not show.
fn percentiles(_: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (name, log) in [("event_log", true), ("discard_sink", false)] {
        let s = setup(log);
        let mut times: Vec<Duration> = Vec::with_capacity(20_000);
        let mut cpu_start = Duration::ZERO;
        let mut wall_start = Instant::now();
        for n in 0..22_000 {
            if n == 2_000 {
                cpu_start = process_cpu_time();
                wall_start = Instant::now();
            }
            let start = Instant::now();
            rt.block_on(one(&s, n));
            if n >= 2_000 {
                times.push(start.elapsed());
            }
        }
        let cpu = process_cpu_time().saturating_sub(cpu_start);
        let wall = wall_start.elapsed();
        times.sort();
        let p = |q: f64| times[((times.len() as f64 - 1.0) * q) as usize];
        println!(
            "per-call {name}: p50 {:?}  p90 {:?}  p99 {:?}  mean {:?}  CPU (all threads) {:?}/call  ({} calls)",
            p(0.5),
            p(0.9),
            p(0.99),
            wall / times.len() as u32,
            cpu / times.len() as u32,
            times.len()
        );
    }
}

/// User + system CPU time of this process (all threads), from /proc: unlike
/// wall time it does not grow when other processes compete for the cores.
fn process_cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // Linux reports in USER_HZ, which is 100 on every mainstream configuration.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = per_call, concurrent, hashing, percentiles
}
criterion_main!(benches);
