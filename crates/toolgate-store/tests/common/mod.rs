//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::Path;

use serde_json::json;
use toolgate_core::{Event, EventKind, EventPayload, EventSink};
use toolgate_store::{Durability, EventLog};

/// A distinct event: tool.started of call `c{n}` in session `s{n % 3}` with `extra.n = n`.
pub fn event(n: u64) -> Event {
    Event {
        kind: EventKind::ToolStarted,
        session_id: format!("s{}", n % 3),
        call_id: format!("c{n}"),
        ts_ms: 1_700_000_000_000 + n as i64,
        payload: EventPayload {
            tool: Some("read".into()),
            args: Some(
                json!({"path": format!("/ws/{n}.txt"), "limit": n, "z": [1.5, null], "a": "é\"\n"}),
            ),
            extra: Some(json!({"n": n})),
            ..EventPayload::default()
        },
    }
}

/// A closed log at `path` holding `event(1..=count)` as seqs 1..=count.
pub async fn write_events(path: &Path, count: u64) {
    let log = EventLog::open(path, Durability::Normal).unwrap();
    for n in 1..=count {
        assert_eq!(log.submit(event(n)).await.unwrap(), n);
    }
    log.close().unwrap();
}

/// A raw connection for tampering, bypassing the store.
pub fn raw(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

/// Inserts one `events` row as the log stores it, for tests that write a log
/// by hand (an old format, a forged row).
#[allow(dead_code)]
pub fn insert_row(
    conn: &rusqlite::Connection,
    seq: i64,
    e: &Event,
    payload: &str,
    prev: &str,
    hash: &str,
) {
    conn.execute(
        "INSERT INTO events VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        rusqlite::params![
            seq,
            e.ts_ms,
            e.kind.as_str(),
            e.session_id,
            e.call_id,
            payload,
            prev,
            hash
        ],
    )
    .unwrap();
}
