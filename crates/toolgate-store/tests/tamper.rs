//! `verify` against logs tampered with through a raw SQLite connection.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{event, raw, write_events};
use toolgate_store::canonical::{HashInput, canonical_json};
use toolgate_store::{Problem, VerifyReport, verify};

const EVENTS: u64 = 10;

async fn log_of_ten() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, EVENTS).await;
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: EVENTS });
    (dir, path)
}

fn broken_at(path: &std::path::Path) -> (u64, Problem) {
    match verify(path).unwrap() {
        VerifyReport::Broken {
            seq,
            problem,
            detail,
        } => {
            assert!(!detail.is_empty());
            (seq, problem)
        }
        ok => panic!("tampering went unnoticed: {ok}"),
    }
}

fn hash_of(conn: &rusqlite::Connection, seq: i64) -> String {
    conn.query_row("SELECT hash FROM events WHERE seq = ?1", [seq], |r| {
        r.get(0)
    })
    .unwrap()
}

/// A row for `event(n)` at `seq` after `prev`, hashed exactly as the log does.
fn forge(conn: &rusqlite::Connection, seq: i64, n: u64, prev: &str) -> String {
    let e = event(n);
    let payload = canonical_json(&serde_json::to_value(&e.payload).unwrap());
    let hash = HashInput {
        seq,
        ts_ms: e.ts_ms,
        kind: e.kind.as_str(),
        session_id: &e.session_id,
        call_id: &e.call_id,
        payload_canonical: &payload,
    }
    .hash(prev);
    common::insert_row(conn, seq, &e, &payload, prev, &hash);
    hash
}

/// Moves rows with seq > `after` up by one, leaving `after + 1` free.
fn make_room(conn: &rusqlite::Connection, after: i64) {
    conn.execute_batch(&format!(
        "UPDATE events SET seq = -seq WHERE seq > {after};
         UPDATE events SET seq = -seq + 1 WHERE seq < 0;"
    ))
    .unwrap();
}

#[tokio::test]
async fn a_modified_payload_is_reported_as_edited_at_its_seq() {
    let (_dir, path) = log_of_ten().await;
    raw(&path)
        .execute(
            "UPDATE events SET payload = json_set(payload, '$.tool', 'bash') WHERE seq = 5",
            [],
        )
        .unwrap();
    assert_eq!(broken_at(&path), (5, Problem::Edited));
}

#[tokio::test]
async fn a_modified_column_outside_the_payload_is_edited() {
    let (_dir, path) = log_of_ten().await;
    raw(&path)
        .execute("UPDATE events SET session_id = 'other' WHERE seq = 3", [])
        .unwrap();
    assert_eq!(broken_at(&path), (3, Problem::Edited));
}

#[tokio::test]
async fn an_edit_with_a_recomputed_hash_is_caught_by_the_next_link() {
    let (_dir, path) = log_of_ten().await;
    let conn = raw(&path);
    let prev = hash_of(&conn, 3);
    conn.execute("DELETE FROM events WHERE seq = 4", [])
        .unwrap();
    // Event 4 replaced by different content with a valid hash of its own.
    forge(&conn, 4, 99, &prev);
    assert_eq!(broken_at(&path), (4, Problem::Edited));
}

#[tokio::test]
async fn a_deleted_row_is_reported_as_missing_at_its_seq() {
    let (_dir, path) = log_of_ten().await;
    raw(&path)
        .execute("DELETE FROM events WHERE seq = 4", [])
        .unwrap();
    assert_eq!(broken_at(&path), (4, Problem::Missing));
}

#[tokio::test]
async fn a_deleted_row_with_the_rest_renumbered_is_missing() {
    let (_dir, path) = log_of_ten().await;
    raw(&path)
        .execute_batch(
            "DELETE FROM events WHERE seq = 4; UPDATE events SET seq = seq - 1 WHERE seq > 4;",
        )
        .unwrap();
    assert_eq!(broken_at(&path), (4, Problem::Missing));
}

#[tokio::test]
async fn rows_deleted_from_the_end_are_missing() {
    let (_dir, path) = log_of_ten().await;
    raw(&path)
        .execute("DELETE FROM events WHERE seq >= 9", [])
        .unwrap();
    assert_eq!(broken_at(&path), (9, Problem::Missing));
}

#[tokio::test]
async fn a_swapped_pair_is_reported_as_out_of_order_at_the_first() {
    let (_dir, path) = log_of_ten().await;
    raw(&path)
        .execute_batch(
            "UPDATE events SET seq = -6 WHERE seq = 6;
             UPDATE events SET seq = 6 WHERE seq = 7;
             UPDATE events SET seq = 7 WHERE seq = -6;",
        )
        .unwrap();
    assert_eq!(broken_at(&path), (6, Problem::OutOfOrder));
}

#[tokio::test]
async fn an_inserted_row_is_reported_at_its_seq() {
    let (_dir, path) = log_of_ten().await;
    let conn = raw(&path);
    make_room(&conn, 5);
    // A careless forgery: it does not even link.
    conn.execute(
        "INSERT INTO events SELECT 6, ts_ms, kind, session_id, 'forged', payload, hash, hash FROM events WHERE seq = 5",
        [],
    )
    .unwrap();
    assert_eq!(broken_at(&path), (6, Problem::Inserted));
}

#[tokio::test]
async fn an_inserted_row_with_a_valid_hash_is_reported_at_its_seq() {
    let (_dir, path) = log_of_ten().await;
    let conn = raw(&path);
    let prev = hash_of(&conn, 5);
    make_room(&conn, 5);
    // A careful forgery that links to event 5 and hashes correctly.
    forge(&conn, 6, 77, &prev);
    assert_eq!(broken_at(&path), (6, Problem::Inserted));
}

#[tokio::test]
async fn a_row_appended_behind_the_logs_back_is_inserted() {
    let (_dir, path) = log_of_ten().await;
    let conn = raw(&path);
    let prev = hash_of(&conn, 10);
    forge(&conn, 11, 11, &prev);
    assert_eq!(broken_at(&path), (11, Problem::Inserted));
}

#[tokio::test]
async fn a_malformed_hash_is_a_bad_hash() {
    let (_dir, path) = log_of_ten().await;
    raw(&path)
        .execute("UPDATE events SET prev_hash = 'xyz' WHERE seq = 2", [])
        .unwrap();
    assert_eq!(broken_at(&path), (2, Problem::BadHash));
}

#[tokio::test]
async fn a_payload_that_is_no_longer_json_is_edited() {
    let (_dir, path) = log_of_ten().await;
    raw(&path)
        .execute("UPDATE events SET payload = '{not json' WHERE seq = 1", [])
        .unwrap();
    assert_eq!(broken_at(&path), (1, Problem::Edited));
    let report = verify(&path).unwrap().to_string();
    assert!(
        report.starts_with("broken at seq 1 (edited): the payload is not JSON"),
        "{report}"
    );
}

#[tokio::test]
async fn verifying_never_changes_the_file() {
    let (_dir, path) = log_of_ten().await;
    raw(&path)
        .execute("DELETE FROM events WHERE seq = 2", [])
        .unwrap();
    let before = std::fs::read(&path).unwrap();
    let _ = verify(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), before);
}
