//! Hash-chain formats: logs written in format 1 (before RFC 8785) still verify,
//! logs that continue them in format 2 verify, tampering in either part is
//! found, an unknown format is named, and a second implementation (Python)
//! recomputes the format 2 hashes from the documented rules alone.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};

use common::{event, raw, write_events};
use serde_json::json;
use toolgate_core::{Event, EventKind, EventPayload, EventSink};
use toolgate_store::canonical::{GENESIS_HASH, HashInput, LogFormat, format1};
use toolgate_store::{
    Durability, EventFilter, EventLog, EventReader, StoreError, VerifyReport, verify,
};

/// The schema toolgate wrote before format 2 (schema version 1).
const SCHEMA_1: &str = "
    PRAGMA application_id = 1413958727;
    PRAGMA user_version = 1;
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY, ts_ms INTEGER NOT NULL, kind TEXT NOT NULL,
        session_id TEXT NOT NULL, call_id TEXT NOT NULL, payload TEXT NOT NULL,
        prev_hash TEXT NOT NULL, hash TEXT NOT NULL
    );
    CREATE INDEX events_by_session ON events (session_id, seq);
    CREATE TABLE log_head (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, hash TEXT NOT NULL);
    INSERT INTO log_head VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
";

/// An event whose format 1 and format 2 forms differ: numbers that RFC 8785
/// writes differently, and keys whose UTF-16 order is not their UTF-8 order.
fn awkward(n: u64) -> Event {
    Event {
        kind: EventKind::ToolStarted,
        session_id: "awkward".into(),
        call_id: format!("w{n}"),
        ts_ms: 1_700_000_100_000 + n as i64,
        payload: EventPayload {
            tool: Some("read".into()),
            args: Some(json!({
                "ratio": 1e21, "tiny": 1e-7, "neg": -0.0, "round": 100.0, "third": 1.0 / 3.0,
                "\u{1f600}": "smiley", "\u{fb33}": "dalet", "\u{20ac}": "euro", "ctl": "\u{1}\u{7f}",
            })),
            extra: Some(json!({"n": n})),
            ..EventPayload::default()
        },
    }
}

/// Writes `events` as a schema 1 log in format 1, exactly as the code before
/// format 2 did (its canonical encoder is kept as `format1`).
fn write_format_1_log(path: &Path, events: &[Event]) {
    let conn = raw(path);
    conn.execute_batch(SCHEMA_1).unwrap();
    let mut prev = GENESIS_HASH.to_string();
    for (i, e) in events.iter().enumerate() {
        let seq = i as i64 + 1;
        let payload = format1::canonical_json(&serde_json::to_value(&e.payload).unwrap());
        let input = HashInput {
            seq,
            ts_ms: e.ts_ms,
            kind: e.kind.as_str(),
            session_id: &e.session_id,
            call_id: &e.call_id,
            payload_canonical: &payload,
        };
        let hash = LogFormat::V1.hash(&input, &prev);
        common::insert_row(&conn, seq, e, &payload, &prev, &hash);
        prev = hash;
    }
    conn.execute(
        "UPDATE log_head SET seq = ?1, hash = ?2",
        rusqlite::params![events.len() as i64, prev],
    )
    .unwrap();
}

async fn append(path: &Path, events: Vec<Event>) {
    let log = EventLog::open(path, Durability::Normal).unwrap();
    for e in events {
        log.submit(e).await.unwrap();
    }
    log.close().unwrap();
}

fn formats(path: &Path) -> Vec<(i64, i64)> {
    raw(path)
        .prepare("SELECT first_seq, format FROM log_formats ORDER BY first_seq")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn user_version(path: &Path) -> i64 {
    raw(path)
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

fn broken_seq(path: &Path) -> u64 {
    match verify(path).unwrap() {
        VerifyReport::Broken { seq, .. } => seq,
        ok => panic!("tampering went unnoticed: {ok}"),
    }
}

/// 6 format 1 events (3 awkward) continued by 4 format 2 events (2 awkward).
async fn mixed_log() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let old = vec![
        event(1),
        awkward(2),
        event(3),
        awkward(4),
        awkward(5),
        event(6),
    ];
    write_format_1_log(&path, &old);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 6 });
    append(&path, vec![awkward(7), event(8), awkward(9), event(10)]).await;
    assert_eq!(formats(&path), [(1, 1), (7, 2)]);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 10 });
    (dir, path)
}

#[tokio::test]
async fn a_log_written_by_the_previous_release_verifies_and_continues_in_format_2() {
    // tests/fixtures/format1-log.db: 10 events written by `toolgate call` of
    // the release before format 2 (reads, a glob, two rejected inputs).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.db");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format1-log.db"),
        &path,
    )
    .unwrap();
    assert_eq!(user_version(&path), 1);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 10 });
    assert_eq!(user_version(&path), 1, "verifying never upgrades");

    append(&path, vec![event(11), awkward(12)]).await;
    assert_eq!(user_version(&path), 3);
    assert_eq!(formats(&path), [(1, 1), (11, 2)]);
    assert_eq!(verify(&path).unwrap(), VerifyReport::Ok { events: 12 });
    let events = EventReader::open(&path)
        .unwrap()
        .query(&EventFilter::default())
        .unwrap();
    assert_eq!(events.len(), 12);
    assert_eq!(events[11].event, awkward(12), "stored as written");
}

#[tokio::test]
async fn a_format_1_log_where_the_formats_differ_verifies_and_so_does_its_continuation() {
    let (_dir, path) = mixed_log().await;
    // The rows really are in different formats: rehashing a format 1 row as
    // format 2 does not give its stored hash.
    let conn = raw(&path);
    let (payload, prev, hash): (String, String, String) = conn
        .query_row(
            "SELECT payload, prev_hash, hash FROM events WHERE seq = 2",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let value: serde_json::Value = serde_json::from_str(&payload).unwrap();
    assert_ne!(
        LogFormat::V1.canonical_payload(&value),
        LogFormat::V2.canonical_payload(&value)
    );
    let e = awkward(2);
    let canonical = LogFormat::V2.canonical_payload(&value);
    let as_v2 = HashInput {
        seq: 2,
        ts_ms: e.ts_ms,
        kind: e.kind.as_str(),
        session_id: &e.session_id,
        call_id: &e.call_id,
        payload_canonical: &canonical,
    };
    assert_ne!(LogFormat::V2.hash(&as_v2, &prev), hash);
}

#[tokio::test]
async fn a_new_log_is_format_2_from_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 3).await;
    assert_eq!(user_version(&path), 3);
    assert_eq!(formats(&path), [(1, 2)]);
    // An empty schema 1 log also becomes format 2 from its first event.
    let empty = dir.path().join("empty.db");
    write_format_1_log(&empty, &[]);
    append(&empty, vec![event(1)]).await;
    assert_eq!(formats(&empty), [(1, 2)]);
    assert_eq!(verify(&empty).unwrap(), VerifyReport::Ok { events: 1 });
}

#[tokio::test]
async fn tampering_in_the_format_1_part_of_a_mixed_log_is_detected() {
    let (_dir, path) = mixed_log().await;
    raw(&path)
        .execute(
            "UPDATE events SET payload = json_set(payload, '$.args.tiny', 2) WHERE seq = 4",
            [],
        )
        .unwrap();
    assert_eq!(broken_seq(&path), 4);
}

#[tokio::test]
async fn tampering_in_the_format_2_part_of_a_mixed_log_is_detected() {
    let (_dir, path) = mixed_log().await;
    raw(&path)
        .execute("UPDATE events SET call_id = 'other' WHERE seq = 9", [])
        .unwrap();
    assert_eq!(broken_seq(&path), 9);
}

#[tokio::test]
async fn deleting_across_the_format_change_is_detected() {
    let (_dir, path) = mixed_log().await;
    raw(&path)
        .execute("DELETE FROM events WHERE seq IN (6, 7)", [])
        .unwrap();
    assert_eq!(broken_seq(&path), 6);
}

#[tokio::test]
async fn moving_or_removing_the_format_change_is_detected() {
    for tamper in [
        "UPDATE log_formats SET first_seq = 5 WHERE format = 2",
        "UPDATE log_formats SET first_seq = 8 WHERE format = 2",
        "DELETE FROM log_formats WHERE format = 2",
        "UPDATE log_formats SET format = 2 WHERE format = 1",
    ] {
        let (_dir, path) = mixed_log().await;
        raw(&path).execute(tamper, []).unwrap();
        assert!(!verify(&path).unwrap().is_ok(), "{tamper}");
    }
}

#[tokio::test]
async fn an_unknown_format_fails_verification_naming_it() {
    let (_dir, path) = mixed_log().await;
    raw(&path)
        .execute("UPDATE log_formats SET format = 7 WHERE format = 2", [])
        .unwrap();
    let err = verify(&path).unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::UnknownLogFormat {
                format: 7,
                first_seq: 7
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "the event log uses hash-chain format 7 from event 7; this toolgate knows formats 1 and 2"
    );
}

#[tokio::test]
async fn a_second_implementation_in_python_agrees_on_every_format_2_hash() {
    let (_dir, path) = mixed_log().await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jcs_verify.py");
    let output = match std::process::Command::new("python3")
        .arg(&script)
        .arg(&path)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipped: python3 is not available ({e})");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["verified"], 4, "{report}");
    let ours = EventReader::open(&path)
        .unwrap()
        .query(&EventFilter {
            after_seq: Some(6),
            ..EventFilter::default()
        })
        .unwrap();
    for e in &ours {
        assert_eq!(report["hashes"][e.seq.to_string()], e.hash.as_str());
    }
}
