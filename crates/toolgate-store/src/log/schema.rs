//! The event log's file format.

use crate::sqlite::FileKind;

/// The event log: one row per event, plus the head (last seq and hash) that the
/// writers advance in the same transaction, so truncation shows up as a gap,
/// and the hash-chain formats in use (see [`crate::canonical::LogFormat`]).
///
/// Schema version 1 had no `log_formats` table: every event in it is format 1.
/// Upgrading such a file records that, and that events from the next seq on are
/// format 2. Version 3 adds no table: it marks a log whose newest events may
/// wait in its tail file (see `tail`), so that an older toolgate, which would
/// continue the chain from the database's head alone, refuses to open it.
pub(crate) const LOG_FILE: FileKind = FileKind {
    name: "event log",
    // "TGLG"
    application_id: 0x5447_4C47,
    version: 3,
    // A commit writes each page it touches to the WAL with two `pwrite`s
    // (frame header, page), and with pages smaller than a call's events every
    // commit also allocates a page, touching page 1 and the table's interior
    // page: 5 to 8 frames a commit at 1 KiB. At 4 KiB a leaf holds a few
    // commits' events, so most commits write 3 frames (events leaf, session
    // index leaf, head). Only new files take this size.
    page_size: 4096,
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
        CREATE TABLE log_formats (
            first_seq INTEGER PRIMARY KEY,
            format    INTEGER NOT NULL
        );
        INSERT INTO log_formats (first_seq, format) VALUES (1, 2);
    ",
    upgrades: &[
        // 1 -> 2: the events so far are format 1, the ones after them format 2
        // (an empty log is format 2 from the start).
        "
        CREATE TABLE log_formats (
            first_seq INTEGER PRIMARY KEY,
            format    INTEGER NOT NULL
        );
        INSERT INTO log_formats (first_seq, format) VALUES (1, 1);
        INSERT OR REPLACE INTO log_formats (first_seq, format)
            SELECT seq + 1, 2 FROM log_head WHERE id = 1;
        ",
        // 2 -> 3: nothing to change in the file; events after its head may
        // now be in the tail.
        "DELETE FROM log_formats WHERE 0;",
    ],
};

/// The columns of an event row, in the order the readers select them.
pub(crate) const EVENT_COLUMNS: &str =
    "seq, ts_ms, kind, session_id, call_id, payload, prev_hash, hash";
