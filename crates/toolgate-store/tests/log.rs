//! The event log against real SQLite files.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::HashSet;
use std::sync::Arc;

use common::{event, raw, write_events};
use toolgate_core::{EventKind, EventSink, SinkError};
use toolgate_store::{
    Durability, EventFilter, EventLog, EventReader, Problem, SqliteApprovals, StoreError,
    VerifyReport, verify,
};

#[tokio::test]
async fn append_then_query_round_trips_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    for n in 1..=9 {
        assert_eq!(log.submit(event(n)).await.unwrap(), n);
    }
    let all = log.query(&EventFilter::default()).unwrap();
    assert_eq!(all.len(), 9);
    for (i, stored) in all.iter().enumerate() {
        assert_eq!(stored.seq, i as u64 + 1);
        assert_eq!(stored.event, event(stored.seq));
    }
    assert_eq!(all[0].prev_hash, "0".repeat(64));
    for pair in all.windows(2) {
        assert_eq!(pair[1].prev_hash, pair[0].hash);
    }
    assert_eq!(log.last_seq().unwrap(), 9);

    // Session filter, after_seq (what --follow polls with), limit and tail.
    let s1 = log
        .query(&EventFilter {
            session: Some("s1".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(s1.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![1, 4, 7]);
    let after = log
        .query(&EventFilter {
            after_seq: Some(7),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(after.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![8, 9]);
    let first = log
        .query(&EventFilter {
            limit: Some(2),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(first.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![1, 2]);
    let tail = log
        .query(&EventFilter {
            limit: Some(2),
            tail: true,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(tail.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![8, 9]);
    let by_call = log
        .query(&EventFilter {
            call_id: Some("c5".into()),
            kind: Some(EventKind::ToolStarted),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(by_call.len(), 1);
    assert_eq!(by_call[0].seq, 5);
    let none = log
        .query(&EventFilter {
            kind: Some(EventKind::ToolFailed),
            ..Default::default()
        })
        .unwrap();
    assert!(none.is_empty());

    // StoredEvent is JSON for `toolgate log --json`, and reads back.
    let json = serde_json::to_value(&all[0]).unwrap();
    assert_eq!(json["seq"], 1);
    assert_eq!(json["kind"], "tool.started");
    assert_eq!(json["payload"]["extra"]["n"], 1);
    let back: toolgate_store::StoredEvent = serde_json::from_value(json).unwrap();
    assert_eq!(back, all[0]);

    assert_eq!(log.verify().unwrap(), VerifyReport::Ok { events: 9 });
    log.close().unwrap();
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 9 });
}

#[tokio::test]
async fn reopening_continues_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 3).await;
    let log = EventLog::open(&path, Durability::Full).unwrap();
    assert_eq!(log.submit(event(4)).await.unwrap(), 4);
    drop(log);
    assert_eq!(verify(&path).unwrap().to_string(), "ok: 4 events");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_submitters_share_group_commits_and_the_chain_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = Arc::new(EventLog::open(&path, Durability::Normal).unwrap());
    let mut tasks = Vec::new();
    for t in 0..64u64 {
        let log = Arc::clone(&log);
        tasks.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            for i in 0..25u64 {
                let n = t * 1000 + i;
                acked.push((log.submit(event(n)).await.unwrap(), n));
            }
            acked
        }));
    }
    let mut acked = Vec::new();
    for t in tasks {
        acked.extend(t.await.unwrap());
    }
    assert_eq!(acked.len(), 64 * 25);
    let seqs: HashSet<u64> = acked.iter().map(|(s, _)| *s).collect();
    assert_eq!(seqs.len(), acked.len(), "every ack has its own seq");
    let stored = log.query(&EventFilter::default()).unwrap();
    assert_eq!(stored.len(), acked.len());
    for (seq, n) in &acked {
        assert_eq!(stored[*seq as usize - 1].event, event(*n));
    }
    assert_eq!(log.verify().unwrap(), VerifyReport::Ok { events: 1600 });
    let stats = log.stats();
    assert_eq!(stats.events, 1600);
    assert!(stats.commits <= stats.events);
}

#[tokio::test]
async fn events_waiting_while_the_file_is_locked_commit_in_one_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    // Another process holds the write lock, so the writer waits and the queue fills.
    let blocker = raw(&path);
    blocker.execute_batch("BEGIN IMMEDIATE").unwrap();
    let acks: Vec<_> = (1..=500).map(|n| log.submit(event(n))).collect();
    std::thread::sleep(std::time::Duration::from_millis(200));
    blocker.execute_batch("COMMIT").unwrap();
    let mut seqs = Vec::new();
    for ack in acks {
        seqs.push(ack.await.unwrap());
    }
    assert_eq!(seqs, (1..=500).collect::<Vec<_>>());
    let stats = log.stats();
    assert_eq!(stats.events, 500);
    // The first event may have been taken before the lock; the rest wait together.
    assert!(stats.commits <= 2, "{stats:?}");
    assert!(log.verify().unwrap().is_ok());
}

#[tokio::test]
async fn two_logs_on_one_file_interleave_and_still_verify() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let a = Arc::new(EventLog::open(&path, Durability::Normal).unwrap());
    let b = Arc::new(EventLog::open(&path, Durability::Normal).unwrap());
    let mut handles = Vec::new();
    for (k, log) in [(0u64, a.clone()), (1, b.clone())] {
        handles.push(tokio::spawn(async move {
            let mut got = Vec::new();
            for i in 0..200u64 {
                let n = k * 10_000 + i;
                // Some awaited one by one, some submitted in bursts.
                if i % 10 == 0 {
                    let burst: Vec<_> = (0..5).map(|j| log.submit(event(n * 10 + j))).collect();
                    for (j, ack) in burst.into_iter().enumerate() {
                        got.push((ack.await.unwrap(), n * 10 + j as u64));
                    }
                } else {
                    got.push((log.submit(event(n)).await.unwrap(), n));
                }
            }
            got
        }));
    }
    let mut acked = Vec::new();
    for h in handles {
        acked.extend(h.await.unwrap());
    }
    drop((a, b));
    let reader = EventReader::open(&path).unwrap();
    let stored = reader.query(&EventFilter::default()).unwrap();
    assert_eq!(stored.len(), acked.len());
    for (seq, n) in acked {
        assert_eq!(stored[seq as usize - 1].event, event(n));
    }
    assert_eq!(
        verify(&path).unwrap(),
        VerifyReport::Ok {
            events: stored.len() as u64
        }
    );
}

#[tokio::test]
async fn unawaited_submissions_are_committed_before_drop_returns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    for n in 1..=50 {
        // What the pipeline's drop guard does: submit and never await.
        drop(log.submit(event(n)));
    }
    drop(log);
    let stored = EventReader::open(&path)
        .unwrap()
        .query(&EventFilter::default())
        .unwrap();
    assert_eq!(stored.len(), 50);
    assert_eq!(stored[49].event, event(50));
    assert!(verify(&path).unwrap().is_ok());
}

#[tokio::test]
async fn flush_waits_for_queued_events() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    for n in 1..=20 {
        drop(log.submit(event(n)));
    }
    log.flush().unwrap();
    assert_eq!(EventReader::open(&path).unwrap().last_seq().unwrap(), 20);
}

#[tokio::test]
async fn a_line_forged_into_the_tail_stops_every_append_and_verify_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 2).await;
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    assert_eq!(log.submit(event(3)).await.unwrap(), 3);
    // Someone wrote a line behind the log's back.
    let tail = dir.path().join("events.db.tail");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&tail)
        .unwrap();
    std::io::Write::write_all(&mut file, b"4\tnot an event\n").unwrap();
    let (a, b) = tokio::join!(log.submit(event(4)), log.submit(event(5)));
    for err in [a.unwrap_err(), b.unwrap_err()] {
        assert!(
            matches!(err, SinkError::Storage(ref m) if m.contains("damaged at byte") && m.contains("log verify")),
            "{err}"
        );
    }
    // Nothing was written after the forged line.
    assert_eq!(log.stats().events, 1);
    assert!(
        std::fs::read_to_string(&tail)
            .unwrap()
            .ends_with("not an event\n")
    );
    drop(log);
    assert!(
        matches!(verify(&path).unwrap(), VerifyReport::Broken { seq: 4, problem: Problem::Edited, ref detail } if detail.contains("not an event")),
        "{:?}",
        verify(&path)
    );
}

#[tokio::test]
async fn a_row_forged_into_the_database_stops_the_fold_and_verify_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 2).await;
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    // Someone appended a row to the database behind the log's back.
    raw(&path)
        .execute_batch(
            "INSERT INTO events SELECT 3, ts_ms, kind, session_id, call_id, payload, hash, hash FROM events WHERE seq = 2",
        )
        .unwrap();
    // The log's own event 3 is durable in the tail all the same.
    assert_eq!(log.submit(event(3)).await.unwrap(), 3);
    log.close().unwrap();
    // The fold on close refused to move it behind the forged row.
    let tail = std::fs::read_to_string(dir.path().join("events.db.tail")).unwrap();
    assert_eq!(tail.lines().count(), 2, "{tail}");
    assert!(
        matches!(
            verify(&path).unwrap(),
            VerifyReport::Broken {
                seq: 3,
                problem: Problem::Inserted,
                ..
            }
        ),
        "{:?}",
        verify(&path)
    );
}

fn sidecars(path: &std::path::Path) -> Vec<String> {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n != &name && n.starts_with(&name))
        .collect()
}

#[test]
fn garbage_is_not_a_log_and_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let garbage: Vec<u8> = (0..10_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&path, &garbage).unwrap();
    let err = EventLog::open(&path, Durability::Normal).unwrap_err();
    assert!(matches!(err, StoreError::NotOurs { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("is not a toolgate event log"), "{message}");
    assert!(message.contains("not a SQLite database"), "{message}");
    assert!(verify(&path).is_err());
    assert!(EventReader::open(&path).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
    assert!(sidecars(&path).is_empty(), "{:?}", sidecars(&path));
}

#[test]
fn another_programs_database_is_not_a_log_and_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    {
        let c = raw(&path);
        c.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me');")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = EventLog::open(&path, Durability::Normal).unwrap_err();
    assert!(
        err.to_string()
            .contains("another program's SQLite database"),
        "{err}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // A toolgate state database is not an event log either, and vice versa.
    let state = dir.path().join("state.db");
    drop(SqliteApprovals::open(&state).unwrap());
    let err = EventLog::open(&state, Durability::Normal).unwrap_err();
    assert!(err.to_string().contains("application id"), "{err}");
    let log_path = dir.path().join("events.db");
    drop(EventLog::open(&log_path, Durability::Normal).unwrap());
    let err = SqliteApprovals::open(&log_path).unwrap_err();
    assert!(
        err.to_string().contains("is not a toolgate state database"),
        "{err}"
    );
}

#[test]
fn reading_a_missing_log_is_an_error_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.db");
    let err = verify(&path).unwrap_err();
    assert!(matches!(err, StoreError::Missing(_)), "{err:?}");
    assert!(err.to_string().contains("no event log at"), "{err}");
    assert!(!path.exists());
}

#[test]
fn a_truncated_log_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(write_events(&path, 200));
    // Keep the SQLite header, drop most pages.
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 8192);
    std::fs::write(&path, &bytes[..4096 + 100]).unwrap();
    let before = std::fs::read(&path).unwrap();
    let result = verify(&path);
    assert!(result.is_err(), "{result:?}");
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains("corrupt") || err.contains("malformed"),
        "{err}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_log_from_a_newer_toolgate_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    drop(EventLog::open(&path, Durability::Normal).unwrap());
    raw(&path)
        .execute_batch("PRAGMA user_version = 99")
        .unwrap();
    let err = EventLog::open(&path, Durability::Normal).unwrap_err();
    assert!(
        matches!(err, StoreError::NewerSchema { found: 99, .. }),
        "{err:?}"
    );
}

#[test]
fn a_log_in_a_missing_directory_is_a_clear_error() {
    let err =
        EventLog::open("/nonexistent-dir-toolgate/x/events.db", Durability::Normal).unwrap_err();
    assert!(
        err.to_string()
            .contains("/nonexistent-dir-toolgate/x/events.db"),
        "{err}"
    );
}

#[tokio::test]
async fn the_wal_is_checkpointed_and_reused_instead_of_growing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    let events = 10_000;
    for n in 1..=events {
        log.submit(event(n)).await.unwrap();
    }
    let wal = std::fs::metadata(dir.path().join("events.db-wal"))
        .unwrap()
        .len();
    // The events reach the database in folds of about 256 KiB of tail (a few
    // MiB in all here); the fold thread checkpoints once the WAL passes
    // 4 MiB, and the WAL starts over at the next fold.
    assert!(
        wal < 8 * 1024 * 1024,
        "WAL is {wal} bytes after {events} events"
    );
    assert!(log.verify().unwrap().is_ok());
    log.close().unwrap();
    let wal = std::fs::metadata(dir.path().join("events.db-wal")).map_or(0, |m| m.len());
    assert!(wal < 8 * 1024 * 1024, "WAL is {wal} bytes after closing");
}

/// Logs made before the page size went from 1 KiB to 4 KiB keep their pages:
/// they take events, verify, and are checkpointed as before.
#[tokio::test]
async fn a_log_with_the_earlier_one_kib_pages_keeps_working() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 3).await;
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = DELETE; PRAGMA page_size = 1024; VACUUM; PRAGMA journal_mode = WAL;",
        )
        .unwrap();
        let size: i64 = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        assert_eq!(size, 1024);
    }
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    for n in 4..=3000 {
        assert_eq!(log.submit(event(n)).await.unwrap(), n);
    }
    drop(log);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let size: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    assert_eq!(size, 1024, "an existing log's page size is never changed");
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 3000 });
}

/// A new log is made with 4 KiB pages (fewer WAL frames per commit).
#[test]
fn a_new_log_has_four_kib_pages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    drop(EventLog::open(&path, Durability::Normal).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let size: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    assert_eq!(size, 4096);
}

/// Short processes (`toolgate hook`) append with `append_once`: each is the
/// first connection to the WAL and forgets how far the last checkpoint got.
/// The WAL must stay small all the same (every later process reads it whole
/// when it opens the log), and the chain whole.
#[test]
fn short_processes_keep_the_wal_small_and_the_chain_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let wal = dir.path().join("events.db-wal");
    let mut largest = 0;
    for n in 1..=600 {
        let last = toolgate_store::append_once(&path, Durability::Normal, vec![event(n)]).unwrap();
        assert_eq!(last, n);
        largest = largest.max(std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0));
    }
    assert!(
        largest <= 320 * 1024,
        "the WAL grew to {largest} bytes over 600 short appends"
    );
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 600 });
}

/// The hook program appends with `append_before_exit`, which leaves its
/// connection for the process's exit: the events are committed when it
/// returns (another connection reads them and the chain verifies), and the
/// open connection holds no lock that keeps another process from appending.
#[test]
fn appending_before_exit_commits_and_blocks_no_later_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    for n in 1..=3 {
        let last =
            toolgate_store::append_before_exit(&path, Durability::Normal, vec![event(n)]).unwrap();
        assert_eq!(last, n);
    }
    // A long-running log appends behind the three connections left open.
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    futures::executor::block_on(log.submit(event(4))).unwrap();
    log.close().unwrap();
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 4 });
    let last = toolgate_store::append_once(&path, Durability::Normal, vec![event(5)]).unwrap();
    assert_eq!(last, 5);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 5 });
}
