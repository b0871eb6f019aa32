//! `toolgate log verify`: walk the hash chain and name the first broken event.

use std::path::Path;

use serde_json::Value;
use toolgate_core::event_query::{Problem, VerifyReport};

use rusqlite::types::Value as SqlValue;

use super::formats::FormatRuns;
use super::reader::{EventReader, RawEvent};
use super::schema::EVENT_COLUMNS;
use super::tail;
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
    /// Walks the chain in one read snapshot (writers may keep appending): the
    /// database's rows, then the tail's events after the database's head.
    pub fn verify(&self) -> Result<VerifyReport, StoreError> {
        self.with_connection(|conn, db| {
            let tail_path = &tail::path_for(db);
            // The head file before the tail: it is written after the tail's
            // lines, so whatever it records is in the tail read next.
            let recorded = head_at(db)?;
            // The tail first: a fold commits to the database before it
            // replaces the tail, so the snapshot taken next holds everything
            // before what this copy of the tail starts with.
            let tail = match tail::read_all(tail_path) {
                Ok(t) => Ok(t),
                Err(StoreError::DamagedTail { offset, detail, .. }) => Err(format!(
                    "the log's tail {} is damaged at byte {offset}: {detail}",
                    tail_path.display()
                )),
                Err(e) => return Err(e),
            };
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
            let db_head = head.as_ref().map_or(0, |(seq, _)| *seq);
            let tail_rows = match &tail {
                Ok(Some((_, body))) => tail_events(body, db_head),
                Ok(None) => Vec::new(),
                Err(damage) => vec![damaged_row(db_head + 1, damage.clone())],
            };
            // The chain's end is the tail's last event when it has any after
            // the database's head.
            let head = match tail_rows.last() {
                Some(last) => Some((last.seq, text_of(&last.hash))),
                None => head,
            };
            let report = walk(
                rows.chain(tail_rows.into_iter().map(Ok)),
                head.clone(),
                &formats,
            )?;
            Ok(match (report, recorded) {
                (VerifyReport::Ok { events }, Err(detail)) => {
                    broken(i64::try_from(events).unwrap_or(0), Problem::Edited, detail)
                }
                (VerifyReport::Ok { events }, Ok(Some(recorded))) => {
                    let last = tail::Link {
                        seq: i64::try_from(events).unwrap_or(0),
                        hash: head.map(|(_, h)| h).unwrap_or_default(),
                    };
                    match super::head::check(Some(&recorded), &last) {
                        Ok(()) => VerifyReport::Ok { events },
                        Err(detail) if recorded.seq > last.seq => {
                            broken(last.seq + 1, Problem::Missing, detail)
                        }
                        Err(detail) => broken(last.seq, Problem::Edited, detail),
                    }
                }
                (report, _) => report,
            })
        })
    }
}

/// The head recorded for the log at `db`: `Err` when its file is damaged
/// (then the walk's verdict names it).
fn head_at(db: &Path) -> Result<Result<Option<tail::Link>, String>, StoreError> {
    let path = super::head::path_for(db);
    super::head::read_at(&path).map_err(|source| StoreError::Io {
        context: "reading the log's head",
        path,
        source,
    })
}

/// The tail's events after `after`, as rows; a line that is not an event is
/// a row whose columns say so (the walk reports it as edited).
fn tail_events(body: &[u8], after: i64) -> Vec<RawEvent> {
    let (lines, _) = tail::complete_lines(body, 0);
    let mut rows: Vec<RawEvent> = Vec::new();
    for (_, line) in lines {
        let text = String::from_utf8_lossy(line);
        let row = match tail::parse_event(&text) {
            Ok(e) => RawEvent {
                seq: e.seq,
                ts_ms: SqlValue::Integer(e.ts_ms),
                kind: SqlValue::Text(e.kind.to_string()),
                session_id: SqlValue::Text(e.session_id),
                call_id: SqlValue::Text(e.call_id),
                payload: SqlValue::Text(e.payload.to_string()),
                prev_hash: SqlValue::Text(e.prev_hash.to_string()),
                hash: SqlValue::Text(e.hash.to_string()),
                damage: None,
            },
            Err(detail) => {
                let seq = text
                    .split('\t')
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| rows.last().map_or(after + 1, |r| r.seq + 1));
                damaged_row(
                    seq,
                    format!("a line of the log's tail is not an event: {detail}"),
                )
            }
        };
        if row.seq > after {
            rows.push(row);
        }
    }
    rows
}

fn damaged_row(seq: i64, damage: String) -> RawEvent {
    RawEvent {
        seq,
        ts_ms: SqlValue::Null,
        kind: SqlValue::Null,
        session_id: SqlValue::Null,
        call_id: SqlValue::Null,
        payload: SqlValue::Null,
        prev_hash: SqlValue::Null,
        hash: SqlValue::Null,
        damage: Some(damage),
    }
}

fn text_of(v: &SqlValue) -> String {
    match v {
        SqlValue::Text(s) => s.clone(),
        _ => String::new(),
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
