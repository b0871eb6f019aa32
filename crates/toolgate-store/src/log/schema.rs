//! The event log's file format.

use crate::sqlite::FileKind;

/// The event log: one row per event, plus the head (last seq and hash) that the
/// writers advance in the same transaction, so truncation shows up as a gap.
pub(crate) const LOG_FILE: FileKind = FileKind {
    name: "event log",
    // "TGLG"
    application_id: 0x5447_4C47,
    version: 1,
    // Small pages: each commit rewrites whole pages into the WAL (the events
    // leaf, the session index leaf, the head), and an event row is ~1 KiB.
    page_size: 1024,
    schema: "
        CREATE TABLE events (
            seq        INTEGER PRIMARY KEY,
            ts_ms      INTEGER NOT NULL,
            kind       TEXT NOT NULL,
            session_id TEXT NOT NULL,
            call_id    TEXT NOT NULL,
            payload    TEXT NOT NULL,
            prev_hash  TEXT NOT NULL,
            hash       TEXT NOT NULL
        );
        CREATE INDEX events_by_session ON events (session_id, seq);
        CREATE TABLE log_head (
            id   INTEGER PRIMARY KEY CHECK (id = 1),
            seq  INTEGER NOT NULL,
            hash TEXT NOT NULL
        );
        INSERT INTO log_head (id, seq, hash)
            VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
    ",
};

/// The columns of an event row, in the order the readers select them.
pub(crate) const EVENT_COLUMNS: &str =
    "seq, ts_ms, kind, session_id, call_id, payload, prev_hash, hash";
