//! The log's tail (`<log>.tail`): events are appended there and folded into
//! the database in batches. Readers and `verify` see both, whatever state a
//! writer, a fold or a crash left them in.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use common::{event, raw, write_events};
use toolgate_core::{Event, EventSink};
use toolgate_store::{
    Durability, EventFilter, EventLog, EventReader, Problem, VerifyReport, append_once, verify,
};

fn tail_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".tail");
    PathBuf::from(name)
}

fn rows_in_database(path: &Path) -> i64 {
    raw(path)
        .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
        .unwrap()
}

fn all_events(path: &Path) -> Vec<u64> {
    EventReader::open(path)
        .unwrap()
        .query(&EventFilter::default())
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect()
}

#[tokio::test]
async fn events_in_the_tail_are_read_and_verified_before_any_fold() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    for n in 1..=5 {
        assert_eq!(log.submit(event(n)).await.unwrap(), n);
    }
    // Nothing is in the database yet: all five wait in the tail.
    assert_eq!(rows_in_database(&path), 0);
    let read = EventReader::open(&path)
        .unwrap()
        .query(&EventFilter::default())
        .unwrap();
    assert_eq!(read.len(), 5);
    for (n, stored) in (1..=5).zip(&read) {
        assert_eq!(stored.event, event(n), "every field as submitted");
    }
    assert_eq!(log.last_seq().unwrap(), 5);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 5 });
    // A filter on a column applies to the tail's events too.
    let session = EventFilter {
        session: Some("s1".into()),
        ..EventFilter::default()
    };
    let in_s1: Vec<u64> = log.query(&session).unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(in_s1, [1, 4]);
    log.close().unwrap();
    // Closing folds: the database holds them, the tail only its start line.
    assert_eq!(rows_in_database(&path), 5);
    assert_eq!(
        std::fs::read_to_string(tail_of(&path))
            .unwrap()
            .lines()
            .count(),
        1
    );
    assert_eq!(all_events(&path), [1, 2, 3, 4, 5]);
}

#[tokio::test]
async fn awkward_session_and_call_ids_round_trip_through_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let mut awkward = event(1);
    awkward.session_id = "tab\there\nnewline \"quoted\" \\ é \u{202e}".into();
    awkward.call_id = "\t\n\r\u{0}".into();
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    log.submit(awkward.clone()).await.unwrap();
    let read = log.query(&EventFilter::default()).unwrap();
    assert_eq!(read[0].event, awkward);
    // One line for the start and one for the event: nothing split a line.
    let tail = std::fs::read_to_string(tail_of(&path)).unwrap();
    assert_eq!(tail.lines().count(), 2, "{tail:?}");
    log.close().unwrap();
    assert_eq!(all_events(&path), [1]);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 1 });
}

#[tokio::test]
async fn a_torn_last_line_is_ignored_by_readers_and_cut_by_the_next_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 2).await;
    append_once(&path, Durability::Normal, vec![event(3)]).unwrap();
    // A writer killed mid-line left half an event.
    let tail = tail_of(&path);
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&tail)
        .unwrap();
    std::io::Write::write_all(&mut file, b"4\t1700000000004\ttool.sta").unwrap();
    assert_eq!(all_events(&path), [1, 2, 3]);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 3 });
    // The next writer cuts it off and continues the chain.
    assert_eq!(
        append_once(&path, Durability::Normal, vec![event(4)]).unwrap(),
        4
    );
    let text = std::fs::read_to_string(&tail).unwrap();
    assert_eq!(text.lines().count(), 3, "start, 3 and 4 only: {text}");
    assert_eq!(all_events(&path), [1, 2, 3, 4]);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 4 });
}

#[test]
fn short_processes_fold_the_tail_once_it_is_large() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let mut largest = 0;
    for n in 1..=1200 {
        assert_eq!(
            append_once(&path, Durability::Normal, vec![event(n)]).unwrap(),
            n
        );
        largest = largest.max(std::fs::metadata(tail_of(&path)).unwrap().len());
    }
    assert!(
        largest <= 260 * 1024,
        "the tail grew to {largest} bytes over 1,200 short appends"
    );
    assert!(rows_in_database(&path) > 0, "no fold happened");
    assert_eq!(all_events(&path), (1..=1200).collect::<Vec<_>>());
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 1200 });
}

#[tokio::test]
async fn a_long_lived_log_folds_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    for n in 1..=1500 {
        log.submit(event(n)).await.unwrap();
    }
    // The fold thread runs on its own; wait for it a little.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while rows_in_database(&path) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(rows_in_database(&path) > 0, "the fold thread never folded");
    assert!(std::fs::metadata(tail_of(&path)).unwrap().len() < 1024 * 1024);
    assert_eq!(log.last_seq().unwrap(), 1500);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 1500 });
    log.close().unwrap();
    assert_eq!(rows_in_database(&path), 1500);
}

/// The fold thread checkpoints the WAL once it has grown past its
/// checkpoint size since the last one, not after every fold: the WAL file
/// kept the largest size it ever had, so once past that size it said so
/// after every fold, and every fold paid a checkpoint (two `fsync`s and
/// the copy of its pages).
#[tokio::test]
async fn the_wal_is_checkpointed_every_few_folds_not_after_each() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    let padding = "x".repeat(2000);
    // About 24 MiB of events: some 90 folds of the tail's 256 KiB.
    for n in 1..=12_000u64 {
        let mut e = event(n);
        e.payload.preview = Some(padding.clone());
        log.submit(e).await.unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while log.stats().folds < 40 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let stats = log.stats();
    assert!(stats.folds >= 40, "{stats:?}");
    assert!(
        stats.checkpoints >= 2,
        "the WAL was never checkpointed: {stats:?}"
    );
    assert!(
        stats.checkpoints * 4 <= stats.folds,
        "a checkpoint after almost every fold: {stats:?}"
    );
    log.close().unwrap();
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 12_000 });
}

#[tokio::test]
async fn a_writer_holding_a_replaced_tail_opens_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let a = EventLog::open(&path, Durability::Normal).unwrap();
    let b = EventLog::open(&path, Durability::Normal).unwrap();
    assert_eq!(a.submit(event(1)).await.unwrap(), 1);
    assert_eq!(b.submit(event(2)).await.unwrap(), 2);
    // Closing `a` folds and puts a fresh tail in place; `b` still has the old file open.
    a.close().unwrap();
    assert_eq!(rows_in_database(&path), 2);
    assert_eq!(b.submit(event(3)).await.unwrap(), 3);
    assert_eq!(
        append_once(&path, Durability::Normal, vec![event(4)]).unwrap(),
        4
    );
    assert_eq!(b.submit(event(5)).await.unwrap(), 5);
    assert_eq!(all_events(&path), [1, 2, 3, 4, 5]);
    b.close().unwrap();
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 5 });
}

#[tokio::test]
async fn a_fold_cut_short_after_its_commit_shows_each_event_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 3).await;
    append_once(&path, Durability::Normal, vec![event(4), event(5)]).unwrap();
    // The fold commits 4 and 5 to the database, then "crashes" before the
    // fresh tail is in place: the old tail, still holding 4 and 5, stays.
    let tail = tail_of(&path);
    let before = std::fs::read(&tail).unwrap();
    EventLog::open(&path, Durability::Normal)
        .unwrap()
        .close()
        .unwrap();
    assert_eq!(rows_in_database(&path), 5);
    std::fs::write(&tail, &before).unwrap();
    assert_eq!(all_events(&path), [1, 2, 3, 4, 5]);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 5 });
    // Appending continues after the tail's last event, and the next fold
    // skips what the database already has.
    assert_eq!(
        append_once(&path, Durability::Normal, vec![event(6)]).unwrap(),
        6
    );
    EventLog::open(&path, Durability::Normal)
        .unwrap()
        .close()
        .unwrap();
    assert_eq!(rows_in_database(&path), 6);
    assert_eq!(all_events(&path), [1, 2, 3, 4, 5, 6]);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 6 });
}

#[tokio::test]
async fn an_empty_tail_starts_again_from_the_database_head() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 3).await;
    // A fresh tail lost in a crash before its start line reached the disk.
    std::fs::write(tail_of(&path), b"").unwrap();
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 3 });
    assert_eq!(
        append_once(&path, Durability::Normal, vec![event(4)]).unwrap(),
        4
    );
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 4 });
    // And a missing one likewise.
    EventLog::open(&path, Durability::Normal)
        .unwrap()
        .close()
        .unwrap();
    std::fs::remove_file(tail_of(&path)).unwrap();
    assert_eq!(
        append_once(&path, Durability::Normal, vec![event(5)]).unwrap(),
        5
    );
    assert_eq!(all_events(&path), [1, 2, 3, 4, 5]);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 5 });
}

#[tokio::test]
async fn full_durability_appends_syncs_and_folds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = EventLog::open(&path, Durability::Full).unwrap();
    let acks: Vec<_> = (1..=20).map(|n| log.submit(event(n))).collect();
    let mut seqs = HashSet::new();
    for ack in acks {
        assert!(seqs.insert(ack.await.unwrap()));
    }
    assert_eq!(seqs.len(), 20);
    log.close().unwrap();
    assert_eq!(rows_in_database(&path), 20);
    assert_eq!(
        append_once(&path, Durability::Full, vec![event(21)]).unwrap(),
        21
    );
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 21 });
}

/// Threads stand in for processes: each `append_once` opens the tail on its
/// own, and locks on separately opened files exclude each other as between
/// processes. Enough events that several folds happen under contention.
#[test]
fn concurrent_short_appenders_and_folds_keep_one_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                (0..300u64)
                    .map(|i| {
                        append_once(&path, Durability::Normal, vec![event(t * 1000 + i)]).unwrap()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut seqs = HashSet::new();
    for t in threads {
        for seq in t.join().unwrap() {
            assert!(seqs.insert(seq), "seq {seq} given twice");
        }
    }
    assert_eq!(seqs.len(), 1200);
    assert!(rows_in_database(&path) > 0, "no fold happened");
    assert_eq!(all_events(&path), (1..=1200).collect::<Vec<_>>());
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 1200 });
}

/// Rewrites line `line` (0 is the start line) of the tail with `edit`.
fn edit_tail_line(path: &Path, line: usize, edit: impl FnOnce(&str) -> String) {
    let tail = tail_of(path);
    let text = std::fs::read_to_string(&tail).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[line] = edit(&lines[line]);
    std::fs::write(&tail, lines.join("\n") + "\n").unwrap();
}

fn broken(path: &Path) -> (u64, Problem, String) {
    match verify(path).unwrap() {
        VerifyReport::Broken {
            seq,
            problem,
            detail,
        } => (seq, problem, detail),
        ok => panic!("not broken: {ok:?}"),
    }
}

async fn log_with_a_tail(path: &Path) {
    write_events(path, 3).await;
    let events: Vec<Event> = (4..=6).map(event).collect();
    append_once(path, Durability::Normal, events).unwrap();
}

#[tokio::test]
async fn an_edited_payload_in_the_tail_is_reported_as_edited_at_its_seq() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    log_with_a_tail(&path).await;
    edit_tail_line(&path, 2, |l| l.replace("/ws/5.txt", "/ws/x.txt"));
    let (seq, problem, _) = broken(&path);
    assert_eq!((seq, problem), (5, Problem::Edited));
}

#[tokio::test]
async fn an_event_deleted_from_the_tail_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    log_with_a_tail(&path).await;
    edit_tail_line(&path, 1, |_| String::new());
    // The emptied line is not an event.
    let (seq, problem, detail) = broken(&path);
    assert_eq!((seq, problem), (4, Problem::Edited), "{detail}");
    // Dropping the line altogether leaves a gap.
    let tail = tail_of(&path);
    let text = std::fs::read_to_string(&tail).unwrap();
    let kept: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    std::fs::write(&tail, kept.join("\n") + "\n").unwrap();
    let (seq, problem, detail) = broken(&path);
    assert_eq!((seq, problem), (4, Problem::Missing), "{detail}");
}

#[tokio::test]
async fn a_damaged_start_line_stops_appends_and_verify_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    log_with_a_tail(&path).await;
    edit_tail_line(&path, 0, |l| {
        l.replace("toolgate-log-tail/1", "something-else")
    });
    let err = append_once(&path, Durability::Normal, vec![event(7)]).unwrap_err();
    assert!(err.to_string().contains("damaged at byte 0"), "{err}");
    let (seq, problem, detail) = broken(&path);
    assert_eq!((seq, problem), (4, Problem::Edited), "{detail}");
    assert!(detail.contains("damaged at byte 0"), "{detail}");
    // A query says so too, rather than showing part of the log.
    let err = EventReader::open(&path)
        .unwrap()
        .query(&EventFilter::default())
        .unwrap_err();
    assert!(err.to_string().contains("toolgate log verify"), "{err}");
}

#[tokio::test]
async fn a_database_restored_from_an_older_copy_shows_the_gap() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 3).await;
    let old = std::fs::read(&path).unwrap();
    // Three more events folded into the database, then one in the tail.
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    for n in 4..=6 {
        log.submit(event(n)).await.unwrap();
    }
    log.close().unwrap();
    append_once(&path, Durability::Normal, vec![event(7)]).unwrap();
    // The database goes back to its copy with three events.
    std::fs::write(&path, old).unwrap();
    let _ = std::fs::remove_file(dir.path().join("events.db-wal"));
    let _ = std::fs::remove_file(dir.path().join("events.db-shm"));
    let (seq, problem, detail) = broken(&path);
    assert_eq!((seq, problem), (4, Problem::Missing), "{detail}");
}

#[tokio::test]
async fn one_reader_follows_the_log_across_folds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 1).await;
    let reader = EventReader::open(&path).unwrap();
    let mut next = 2;
    for round in 0..4 {
        for _ in 0..3 {
            append_once(&path, Durability::Normal, vec![event(next)]).unwrap();
            next += 1;
        }
        let seen: Vec<u64> = reader
            .query(&EventFilter::default())
            .unwrap()
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seen, (1..next).collect::<Vec<_>>(), "round {round}");
        // A fold replaces the tail; the next round's reads start a new file.
        EventLog::open(&path, Durability::Normal)
            .unwrap()
            .close()
            .unwrap();
        assert_eq!(reader.last_seq().unwrap(), next - 1);
    }
    assert_eq!(
        reader.verify().unwrap(),
        VerifyReport::Ok { events: next - 1 }
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_tail_replaced_by_a_symlink_is_refused_and_its_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 2).await;
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"keep me\n").unwrap();
    std::fs::remove_file(tail_of(&path)).unwrap();
    std::os::unix::fs::symlink(&victim, tail_of(&path)).unwrap();
    let err = append_once(&path, Durability::Normal, vec![event(3)]).unwrap_err();
    assert!(err.to_string().contains("tail"), "{err}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me\n");
}

#[cfg(unix)]
#[tokio::test]
async fn a_fold_never_writes_through_a_link_left_at_its_fresh_tail_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 2).await;
    append_once(&path, Durability::Normal, vec![event(3)]).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"keep me\n").unwrap();
    let fresh = dir
        .path()
        .join(format!("events.db.tail.new-{}", std::process::id()));
    std::os::unix::fs::symlink(&victim, &fresh).unwrap();
    EventLog::open(&path, Durability::Normal)
        .unwrap()
        .close()
        .unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me\n");
    assert!(
        !std::fs::symlink_metadata(tail_of(&path))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(all_events(&path), [1, 2, 3]);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 3 });
}

/// A short process that finds the tail past its fold size while another
/// process holds the database's write lock neither waits nor fails: its
/// events are in the tail, and the fold is left for later.
#[test]
fn a_short_process_never_waits_for_the_database_to_fold() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let mut n = 1;
    // Just under the fold size (256 KiB); the twenty appends below pass it.
    while std::fs::metadata(tail_of(&path)).map_or(0, |m| m.len()) < 255 * 1024 {
        append_once(&path, Durability::Normal, vec![event(n)]).unwrap();
        n += 1;
    }
    let holder = raw(&path);
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let started = std::time::Instant::now();
    for _ in 0..20 {
        assert_eq!(
            append_once(&path, Durability::Normal, vec![event(n)]).unwrap(),
            n
        );
        n += 1;
    }
    assert!(std::fs::metadata(tail_of(&path)).unwrap().len() > 256 * 1024);
    // Far below the 30 s busy timeout a waiting fold would have paid.
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(rows_in_database(&path), 0, "no fold got the write lock");
    holder.execute_batch("ROLLBACK").unwrap();
    append_once(&path, Durability::Normal, vec![event(n)]).unwrap();
    assert!(rows_in_database(&path) > 0, "the next process folded");
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: n });
}

/// 65 MiB without a line end (a sparse file: nothing is written to disk):
/// refused by writers, readers and verify alike rather than read into memory.
#[tokio::test]
async fn a_tail_grown_huge_behind_the_logs_back_is_refused_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 2).await;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(tail_of(&path))
        .unwrap();
    file.set_len(65 * 1024 * 1024).unwrap();
    let err = append_once(&path, Durability::Normal, vec![event(3)]).unwrap_err();
    assert!(err.to_string().contains("damaged"), "{err}");
    let err = EventReader::open(&path)
        .unwrap()
        .query(&EventFilter::default())
        .unwrap_err();
    assert!(err.to_string().contains("damaged"), "{err}");
    let (seq, problem, detail) = broken(&path);
    assert_eq!((seq, problem), (3, Problem::Edited), "{detail}");
    assert_eq!(
        std::fs::metadata(tail_of(&path)).unwrap().len(),
        65 * 1024 * 1024,
        "nothing was cut"
    );
}

fn head_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".head");
    PathBuf::from(name)
}

/// The database's head row did this while every append was a transaction:
/// events cut from the end of the log are missing, not silently gone, and no
/// writer appends over them.
#[tokio::test]
async fn events_cut_from_the_end_of_the_tail_are_missing_and_never_appended_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    log_with_a_tail(&path).await;
    let tail = tail_of(&path);
    let text = std::fs::read_to_string(&tail).unwrap();
    let kept: Vec<&str> = text.lines().take(3).collect();
    std::fs::write(&tail, kept.join("\n") + "\n").unwrap();
    let (seq, problem, detail) = broken(&path);
    assert_eq!((seq, problem), (6, Problem::Missing), "{detail}");
    let err = append_once(&path, Durability::Normal, vec![event(6)]).unwrap_err();
    assert!(err.to_string().contains("removed from its end"), "{err}");
    assert_eq!(broken(&path).0, 6, "the evidence is still there");
}

#[tokio::test]
async fn a_deleted_tail_is_missing_and_never_started_again_over_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    log_with_a_tail(&path).await;
    std::fs::remove_file(tail_of(&path)).unwrap();
    let (seq, problem, detail) = broken(&path);
    assert_eq!((seq, problem), (4, Problem::Missing), "{detail}");
    let err = append_once(&path, Durability::Normal, vec![event(4)]).unwrap_err();
    assert!(err.to_string().contains("removed from its end"), "{err}");
}

/// A writer stopped between its lines and the head leaves the head behind:
/// that is no damage, and the next append records the head again.
#[tokio::test]
async fn a_head_behind_the_tail_is_a_stopped_writer_not_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 3).await;
    let behind = std::fs::read(head_of(&path)).unwrap();
    append_once(&path, Durability::Normal, vec![event(4), event(5)]).unwrap();
    std::fs::write(head_of(&path), &behind).unwrap();
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 5 });
    assert_eq!(
        append_once(&path, Durability::Normal, vec![event(6)]).unwrap(),
        6
    );
    assert!(
        std::fs::read_to_string(head_of(&path))
            .unwrap()
            .starts_with("6\t")
    );
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 6 });
}

#[tokio::test]
async fn a_damaged_head_file_stops_appends_and_verify_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    log_with_a_tail(&path).await;
    std::fs::write(head_of(&path), b"six\tnot a hash\n").unwrap();
    let err = append_once(&path, Durability::Normal, vec![event(7)]).unwrap_err();
    assert!(err.to_string().contains("head"), "{err}");
    let (seq, problem, detail) = broken(&path);
    assert_eq!((seq, problem), (6, Problem::Edited), "{detail}");
    // The recorded hash of the last event must be its own.
    let zeros = "0".repeat(64);
    std::fs::write(head_of(&path), format!("6\t{zeros}\n")).unwrap();
    let (seq, problem, detail) = broken(&path);
    assert_eq!((seq, problem), (6, Problem::Edited), "{detail}");
}
