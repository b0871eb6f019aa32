//! Crash test: a process appending events is killed with SIGKILL mid-stream;
//! after reopening, the chain verifies and every acknowledged event is there.
//!
//! The test re-executes its own binary with `CRASH_CHILD_LOG` set; the child
//! runs `crash_child_appends_until_killed`, which appends forever from several
//! tasks and prints `acked SEQ N` after each ack.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use common::event;
use toolgate_core::EventSink;
use toolgate_store::{Durability, EventFilter, EventLog, VerifyReport};

const CHILD_ENV: &str = "CRASH_CHILD_LOG";
/// Enough that the child's tail passes its fold size several times, so the
/// kill may land in a fold as well as in an append.
const ACKS_BEFORE_KILL: usize = 2_000;

/// Only does something in the child process (when `CRASH_CHILD_LOG` is set).
#[test]
fn crash_child_appends_until_killed() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let log = Arc::new(EventLog::open(&path, Durability::Normal).unwrap());
        let mut tasks = Vec::new();
        for t in 0..4u64 {
            let log = Arc::clone(&log);
            tasks.push(tokio::spawn(async move {
                for i in 0.. {
                    let n = t * 1_000_000 + i;
                    let seq = log.submit(event(n)).await.unwrap();
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "acked {seq} {n}").unwrap();
                    out.flush().unwrap();
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
}

/// `test` as the harness names it: below this file's module when the file is
/// one module of the crate's `tests/all.rs`.
fn harness_name(test: &str) -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::{test}"),
        None => test.to_string(),
    }
}

#[tokio::test]
async fn acked_events_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            harness_name("crash_child_appends_until_killed").as_str(),
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut acked = BTreeMap::new();
    let mut lines = BufReader::new(stdout).lines();
    while acked.len() < ACKS_BEFORE_KILL {
        let line = lines.next().expect("child exited early").unwrap();
        if let Some(rest) = line.strip_prefix("acked ") {
            let (seq, n) = rest.split_once(' ').unwrap();
            acked.insert(seq.parse::<u64>().unwrap(), n.parse::<u64>().unwrap());
        }
    }
    // std's kill is SIGKILL on Unix: no destructors, no flush.
    child.kill().unwrap();
    // Acks printed between our last read and the kill count too.
    for line in lines.map_while(Result::ok) {
        if let Some(rest) = line.strip_prefix("acked ") {
            if let Some((seq, n)) = rest.split_once(' ') {
                if let (Ok(seq), Ok(n)) = (seq.parse::<u64>(), n.parse::<u64>()) {
                    acked.insert(seq, n);
                }
            }
        }
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "the child was killed, not finished");

    let log = EventLog::open(&path, Durability::Normal).unwrap();
    let report = log.verify().unwrap();
    let VerifyReport::Ok { events } = report else {
        panic!("log broken after crash: {report}");
    };
    assert!(events as usize >= acked.len());
    let stored = log.query(&EventFilter::default()).unwrap();
    for (seq, n) in &acked {
        assert_eq!(stored[*seq as usize - 1].seq, *seq);
        assert_eq!(stored[*seq as usize - 1].event, event(*n), "seq {seq}");
    }
    // The log keeps working after the crash.
    let next = log.submit(event(42)).await.unwrap();
    assert_eq!(next, events + 1);
    log.close().unwrap();
    assert_eq!(
        toolgate_store::verify(&path).unwrap(),
        VerifyReport::Ok { events: next }
    );
}
