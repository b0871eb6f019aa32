//! `toolgate log verify`: walk the hash chain and name the first broken event.

use std::path::Path;

use serde_json::Value;
use toolgate_core::event_query::{Problem, VerifyReport};

use super::formats::FormatRuns;
use super::reader::{EventReader, RawEvent};
use super::schema::EVENT_COLUMNS;
use crate::canonical::{GENESIS_HASH, HashInput, is_hash};
use crate::error::StoreError;

/// How far a renumbered row is searched for its original seq when classifying
/// a break as rows deleted or inserted before it.
const MAX_RENUMBER: i64 = 1024;

/// Verifies the log at `path` (read-only; the file is never changed).
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("events.db");
/// # toolgate_store::EventLog::open(&path, toolgate_store::Durability::Normal).unwrap().close().unwrap();
/// let report = toolgate_store::verify(&path).unwrap();
/// assert_eq!(report.to_string(), "ok: 0 events");
/// ```
pub fn verify(path: impl AsRef<Path>) -> Result<VerifyReport, StoreError> {
    EventReader::open(path)?.verify()
}

fn broken(seq: i64, problem: Problem, detail: impl Into<String>) -> VerifyReport {
    VerifyReport::Broken {
        seq: u64::try_from(seq).unwrap_or(0),
        problem,
        detail: detail.into(),
    }
}

impl EventReader {
    /// Walks the chain in one read snapshot (writers may keep appending).
    pub fn verify(&self) -> Result<VerifyReport, StoreError> {
        self.with_connection(|conn| {
            let tx = conn
                .transaction()
                .map_err(StoreError::sqlite("starting a read snapshot"))?;
            let head: Option<(i64, String)> = tx
                .query_row("SELECT seq, hash FROM log_head WHERE id = 1", [], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .map(Some)
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    other => Err(other),
                })
                .map_err(StoreError::sqlite("reading the log head"))?;
            let formats = FormatRuns::read(&tx)?;
            let mut stmt = tx
                .prepare(&format!("SELECT {EVENT_COLUMNS} FROM events ORDER BY seq"))
                .map_err(StoreError::sqlite("reading the event log"))?;
            let rows = stmt
                .query_map([], RawEvent::from_row)
                .map_err(StoreError::sqlite("reading the event log"))?
                .map(|r| r.map_err(StoreError::sqlite("reading the event log")));
            walk(rows, head, &formats)
        })
    }
}

/// Walks `rows` (in seq order) against the head and the format runs: the
/// verdict of any store that keeps the chain (SQLite, PostgreSQL).
pub(crate) fn walk(
    rows: impl Iterator<Item = Result<RawEvent, StoreError>>,
    head: Option<(i64, String)>,
    formats: &FormatRuns,
) -> Result<VerifyReport, StoreError> {
    let mut rows = rows.peekable();
    let mut expected_seq: i64 = 1;
    let mut expected_prev = GENESIS_HASH.to_string();
    while let Some(row) = rows.next() {
        let row = row?;
        let seq = row.seq;
        if seq > expected_seq {
            let detail = if seq == expected_seq + 1 {
                format!("event {expected_seq} is missing")
            } else {
                format!("events {expected_seq} to {} are missing", seq - 1)
            };
            return Ok(broken(expected_seq, Problem::Missing, detail));
        }
        if seq < expected_seq {
            return Ok(broken(
                seq,
                Problem::Inserted,
                format!("event with seq {seq} cannot be part of the log"),
            ));
        }
        let c = match row.columns() {
            Ok(c) => c,
            Err(detail) => return Ok(broken(seq, Problem::Edited, detail)),
        };
        if !is_hash(c.hash) || !is_hash(c.prev_hash) {
            return Ok(broken(
                seq,
                Problem::BadHash,
                "the stored hash or previous hash is not 64 lowercase hex digits",
            ));
        }
        // Renumbered rows are hashed in the format of the place they are in:
        // only the label of a break near a format change could be off.
        let format = formats.at(seq);
        let payload = match serde_json::from_str::<Value>(c.payload) {
            Ok(v) => format.canonical_payload(&v),
            Err(e) => {
                return Ok(broken(
                    seq,
                    Problem::Edited,
                    format!("the payload is not JSON: {e}"),
                ));
            }
        };
        let input = |seq| HashInput {
            seq,
            ts_ms: c.ts_ms,
            kind: c.kind,
            session_id: c.session_id,
            call_id: c.call_id,
            payload_canonical: &payload,
        };
        let recomputed = format.hash(&input(seq), c.prev_hash);
        if c.prev_hash == expected_prev && recomputed == c.hash {
            expected_prev = recomputed;
            expected_seq += 1;
            continue;
        }
        // Broken: the next row helps tell what happened.
        let next = match rows.peek() {
            Some(Ok(next)) => next
                .columns()
                .ok()
                .map(|n| (n.prev_hash.to_string(), n.hash.to_string())),
            _ => None,
        };
        let next_skips_this = next.as_ref().is_some_and(|(p, _)| *p == expected_prev);
        if c.prev_hash == expected_prev {
            if next_skips_this {
                return Ok(broken(
                    seq,
                    Problem::Inserted,
                    format!(
                        "event {seq} was not written by the log; event {} follows {}",
                        seq + 1,
                        seq - 1
                    ),
                ));
            }
            return Ok(broken(
                seq,
                Problem::Edited,
                "the event's content does not match its hash",
            ));
        }
        // The link is broken: find the likeliest explanation.
        if let Some((next_prev, next_hash)) = &next {
            if *next_prev == expected_prev && c.prev_hash == next_hash {
                return Ok(broken(
                    seq,
                    Problem::OutOfOrder,
                    format!("events {seq} and {} were swapped", seq + 1),
                ));
            }
            if *next_prev == expected_prev {
                return Ok(broken(
                    seq,
                    Problem::Inserted,
                    format!(
                        "event {seq} was not written by the log; event {} follows {}",
                        seq + 1,
                        seq - 1
                    ),
                ));
            }
        }
        for d in 1..=MAX_RENUMBER {
            if format.hash(&input(seq + d), c.prev_hash) == c.hash {
                return Ok(broken(
                    seq,
                    Problem::Missing,
                    format!(
                        "{d} event(s) before this one were deleted and the rest renumbered (it was written as {})",
                        seq + d
                    ),
                ));
            }
            if seq - d >= 1 && format.hash(&input(seq - d), c.prev_hash) == c.hash {
                return Ok(broken(
                    seq - d,
                    Problem::Inserted,
                    format!(
                        "{d} event(s) were inserted before event {} (written as {})",
                        seq,
                        seq - d
                    ),
                ));
            }
        }
        if recomputed == c.hash && seq > 1 {
            return Ok(broken(
                seq - 1,
                Problem::Edited,
                format!(
                    "event {} was rewritten with a recomputed hash; event {seq} still links to the original",
                    seq - 1
                ),
            ));
        }
        return Ok(broken(
            seq,
            Problem::BadHash,
            "the event does not link to the previous event",
        ));
    }
    let last = expected_seq - 1;
    match head {
        None => Ok(broken(
            last + 1,
            Problem::Missing,
            "the log's head record is missing",
        )),
        Some((head_seq, _)) if head_seq > last => Ok(broken(
            last + 1,
            Problem::Missing,
            format!(
                "the log ends at {last} but {head_seq} events were written: events were removed from the end"
            ),
        )),
        Some((head_seq, _)) if head_seq < last => Ok(broken(
            head_seq + 1,
            Problem::Inserted,
            format!("events after {head_seq} were added outside the log"),
        )),
        Some((_, head_hash)) if head_hash != expected_prev => Ok(broken(
            last,
            Problem::Edited,
            "the last event does not match the hash recorded in the log head",
        )),
        Some(_) => Ok(VerifyReport::Ok {
            events: u64::try_from(last).unwrap_or(0),
        }),
    }
}
