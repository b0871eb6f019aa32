//! Calls per second through the full settle pipeline (`Engine::settle`: a
//! trivial tool, a gate that allows everything, 4 awaited events per call)
//! with the audit log in SQLite (`EventLog`, Durability::Normal, one file)
//! against PostgreSQL (`PgEventLog`, one database), for one writer and for
//! four. Each writer is an engine with a log instance of its own (its own
//! connections) on a thread with its own runtime, as separate processes
//! would be, with 4 calls in flight; the four share one file or one database.
//! PostgreSQL runs in both append modes (`AppendMode::Adaptive`, the
//! default, and `AppendMode::Locked`). Each run makes databases of its own
//! and drops them.
//!
//! Needs the server of `scripts/setup-postgres.sh` (`TOOLGATE_TEST_PG_URL`,
//! `TOOLGATE_TEST_PG_PASSWORD_FILE`, or the env file it writes); each run
//! makes a database of its own.
//!
//! Run: `cargo bench -p toolgate-store --features postgres --bench pg_vs_sqlite`

// A failed setup step should stop a bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use toolgate_core::test_util::{Echo, ScriptedGate, call};
use toolgate_core::{Engine, EventSink, Location, Registry, ToolSet};
use toolgate_store::{AppendMode, Durability, EventLog, PgConfig, PgEventLog, SpillStore};

const CALLS_PER_WRITER: usize = 2_000;
const IN_FLIGHT: usize = 4;

fn server() -> (String, String) {
    let (url, pw_file) = match (
        std::env::var("TOOLGATE_TEST_PG_URL"),
        std::env::var("TOOLGATE_TEST_PG_PASSWORD_FILE"),
    ) {
        (Ok(u), Ok(p)) => (u, PathBuf::from(p)),
        _ => {
            let tmp =
                std::env::var_os("TMPDIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
            let text = std::fs::read_to_string(tmp.join("toolgate-pg/env"))
                .expect("no PostgreSQL server: run `bash scripts/setup-postgres.sh`");
            let get = |key: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(&format!("export {key}=")))
                    .map(|v| v.trim_matches('\'').to_string())
                    .unwrap()
            };
            (
                get("TOOLGATE_TEST_PG_URL"),
                get("TOOLGATE_TEST_PG_PASSWORD_FILE").into(),
            )
        }
    };
    let password = std::fs::read_to_string(pw_file).unwrap().trim().to_string();
    (url, password)
}

/// Runs `sql` as the superuser, on a thread of its own.
fn admin(url: &str, password: &str, sql: String) {
    let (url, password) = (url.to_string(), password.to_string());
    std::thread::spawn(move || {
        let mut config: postgres::Config = url.parse().unwrap();
        config.password(&password);
        let mut client = config.connect(postgres::NoTls).unwrap();
        client.batch_execute(&sql).unwrap();
    })
    .join()
    .unwrap();
}

/// A new database for this run: its URL.
fn fresh_database(url: &str, password: &str, name: &str) -> String {
    let (url, password, name) = (url.to_string(), password.to_string(), name.to_string());
    std::thread::spawn(move || {
        let mut config: postgres::Config = url.parse().unwrap();
        config.password(&password);
        let mut client = config.connect(postgres::NoTls).unwrap();
        client
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
            .unwrap();
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        format!("{}/{name}", url.rsplit_once('/').unwrap().0)
    })
    .join()
    .unwrap()
}

#[derive(Clone)]
enum Store {
    Sqlite(PathBuf),
    Postgres(Box<PgConfig>, AppendMode),
}

impl Store {
    fn open(&self) -> Arc<dyn EventSink> {
        match self {
            Store::Sqlite(path) => Arc::new(EventLog::open(path, Durability::Normal).unwrap()),
            Store::Postgres(config, mode) => {
                Arc::new(PgEventLog::open_with((**config).clone(), *mode).unwrap())
            }
        }
    }
}

/// One writer: its own engine and log, `CALLS_PER_WRITER` calls, `IN_FLIGHT`
/// at a time.
fn writer(store: Store, dir: PathBuf) -> Duration {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let tools = ToolSet::new(Registry::new(), Registry::new());
        let _registration = tools.process().register("echo", Echo::plain()).unwrap();
        let engine = Engine::new(
            tools,
            ScriptedGate::allow_all(),
            store.open(),
            Arc::new(SpillStore::new(&dir)),
        );
        let catalogue = engine.materialize();
        let location = Arc::new(Location::new(&dir).unwrap());
        // Warm up: connect, create the tables.
        engine
            .settle(
                &catalogue,
                call("echo", serde_json::json!({"text": "w"}), "warm"),
                location.clone(),
                CancellationToken::new(),
            )
            .await
            .unwrap();
        let start = Instant::now();
        let mut waves = Vec::new();
        for lane in 0..IN_FLIGHT {
            let (engine, catalogue, location) =
                (engine.clone(), catalogue.clone(), location.clone());
            waves.push(async move {
                for n in 0..CALLS_PER_WRITER / IN_FLIGHT {
                    let id = format!("{lane}-{n}");
                    let input = serde_json::json!({"text": id});
                    engine
                        .settle(
                            &catalogue,
                            call("echo", input, &id),
                            location.clone(),
                            CancellationToken::new(),
                        )
                        .await
                        .unwrap();
                }
            });
        }
        futures::future::join_all(waves).await;
        start.elapsed()
    })
}

/// Calls per second of `writers` writers on `store`.
fn measure(store: &Store, writers: usize, dir: &std::path::Path) -> f64 {
    let start = Instant::now();
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let store = store.clone();
            let dir = dir.join(format!("w{w}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::thread::spawn(move || writer(store, dir))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    (writers * CALLS_PER_WRITER) as f64 / start.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Rounds of every variant, interleaved, so that a busy moment of the
/// machine falls on all of them; the median of each is printed.
const ROUNDS: usize = 3;

fn main() {
    // `cargo bench` passes `--bench`; nothing else is read.
    let (url, password) = server();
    for writers in [1, 4] {
        let mut results: Vec<(&str, Vec<f64>)> = vec![
            ("sqlite", Vec::new()),
            ("postgres (adaptive)", Vec::new()),
            ("postgres (locked)", Vec::new()),
        ];
        for round in 0..ROUNDS {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("events.db");
            // Made before the writers start: four first opens of one new
            // file at once can find it locked while it switches to WAL.
            EventLog::open(&file, Durability::Normal)
                .unwrap()
                .close()
                .unwrap();
            let sqlite = Store::Sqlite(file);
            results[0].1.push(measure(&sqlite, writers, dir.path()));
            for (i, mode) in [(1, AppendMode::Adaptive), (2, AppendMode::Locked)] {
                let db = fresh_database(
                    &url,
                    &password,
                    &format!("tg_bench_{}_{writers}_{round}_{i}", std::process::id()),
                );
                let config = PgConfig::parse(&db, Some(password.clone())).unwrap();
                let pg = Store::Postgres(Box::new(config), mode);
                results[i].1.push(measure(&pg, writers, dir.path()));
                let name = db.rsplit_once('/').unwrap().1;
                admin(
                    &url,
                    &password,
                    format!("DROP DATABASE {name} WITH (FORCE)"),
                );
            }
        }
        for (label, rates) in results {
            let shown: Vec<String> = rates.iter().map(|r| format!("{r:.0}")).collect();
            println!(
                "{label:<20} {writers} writer(s): {:>7.0} calls/s median of {ROUNDS} ({})",
                median(rates),
                shown.join(", ")
            );
        }
    }
}
