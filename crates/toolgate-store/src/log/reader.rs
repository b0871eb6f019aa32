//! Reading the log: filtered queries for `toolgate log`, `--session` and `--follow`.
//!
//! A query sees the database's rows and, after them, the events still in the
//! log's tail (see `tail`): the tail's new lines are copied into a temporary
//! table of the reading connection before each query, and the query runs on
//! a view of both. The tail is read before the query's database snapshot is
//! taken, and a fold commits to the database before it replaces the tail, so
//! no event is missed; one in both places is shown once.

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;
use toolgate_core::event_query::{EventFilter, StoredEvent};
use toolgate_core::{Event, EventKind, EventPayload};

use super::schema::{EVENT_COLUMNS, LOG_FILE};
use super::tail::{self, complete_lines, parse_event, parse_start};
use crate::error::StoreError;
use crate::sqlite::{self, Access};

/// The reading connection's view of the database and the tail.
const TAIL_TABLES: &str = "
    CREATE TEMP TABLE IF NOT EXISTS tail_events (
        seq INTEGER, ts_ms INTEGER, kind TEXT, session_id TEXT, call_id TEXT,
        payload TEXT, prev_hash TEXT, hash TEXT
    );
    CREATE INDEX IF NOT EXISTS temp.tail_events_by_seq ON tail_events (seq);
    CREATE TEMP VIEW IF NOT EXISTS log_events AS
        SELECT seq, ts_ms, kind, session_id, call_id, payload, prev_hash, hash FROM main.events
        UNION ALL
        SELECT seq, ts_ms, kind, session_id, call_id, payload, prev_hash, hash FROM temp.tail_events
            WHERE seq > (SELECT coalesce(max(seq), 0) FROM main.events);
";

/// A read-only view of a log file. Never creates or changes the file.
#[derive(Debug)]
pub struct EventReader {
    state: Mutex<ReaderState>,
}

#[derive(Debug)]
struct ReaderState {
    conn: Connection,
    /// The log's database file.
    db: PathBuf,
    tail: TailCopy,
}

/// How much of the tail the reading connection's temporary table holds.
#[derive(Debug)]
struct TailCopy {
    path: PathBuf,
    /// Whether the temporary table and view exist.
    ready: bool,
    /// The file copied from, while it is the one at the path.
    copied: Option<Copied>,
}

/// The tail file a reader copies from, and how far.
#[derive(Debug)]
struct Copied {
    file: File,
    /// `file`'s (device, inode).
    id: (u64, u64),
    /// The length of its complete lines copied so far.
    end: u64,
}

impl TailCopy {
    fn io(&self, source: std::io::Error) -> StoreError {
        StoreError::Io {
            context: "reading the log's tail",
            path: self.path.clone(),
            source,
        }
    }

    fn damaged(&self, offset: u64, detail: impl Into<String>) -> StoreError {
        tail::damaged(&self.path, offset, detail)
    }

    /// Copies the tail's lines not yet copied into `temp.tail_events`
    /// (starting over when a fold replaced the file).
    fn refresh(&mut self, conn: &Connection) -> Result<(), StoreError> {
        if !self.ready {
            conn.execute_batch(TAIL_TABLES)
                .map_err(StoreError::sqlite("preparing to read the log's tail"))?;
            self.ready = true;
        }
        // The file copied from is kept open, so its inode cannot be reused
        // for a later tail while this copy still describes it.
        let at_path = match std::fs::metadata(&self.path) {
            Ok(m) => Some((m.dev(), m.ino())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(self.io(e)),
        };
        let same_file = matches!((&self.copied, at_path), (Some(c), Some(id)) if c.id == id);
        if !same_file {
            if self.copied.take().is_some() {
                clear(conn)?;
            }
            if at_path.is_none() {
                return Ok(());
            }
            let file = match File::open(&self.path) {
                Ok(f) => f,
                // Replaced or removed in between: the next query looks again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(self.io(e)),
            };
            let meta = file.metadata().map_err(|e| self.io(e))?;
            self.copied = Some(Copied {
                file,
                id: (meta.dev(), meta.ino()),
                end: 0,
            });
        }
        let Some(copied) = self.copied.as_ref() else {
            return Ok(());
        };
        let from = copied.end;
        let len = copied.file.metadata().map_err(|e| self.io(e))?.len();
        if len <= from {
            return Ok(());
        }
        if len - from > tail::MAX_READ_BYTES {
            return Err(self.damaged(
                from,
                format!("{} bytes were added behind the log's back", len - from),
            ));
        }
        let mut bytes = vec![0; usize::try_from(len - from).unwrap_or(0)];
        copied
            .file
            .read_exact_at(&mut bytes, from)
            .map_err(|e| self.io(e))?;
        let (mut lines, complete) = complete_lines(&bytes, from);
        if from == 0 {
            if let Some((offset, first)) = lines.next() {
                std::str::from_utf8(first)
                    .map_err(|_| "the start line is not UTF-8".to_string())
                    .and_then(parse_start)
                    .map_err(|d| self.damaged(offset, d))?;
            }
        }
        let tx = conn
            .unchecked_transaction()
            .map_err(StoreError::sqlite("copying the log's tail"))?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO temp.tail_events VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(StoreError::sqlite("copying the log's tail"))?;
            for (offset, line) in lines {
                let e = std::str::from_utf8(line)
                    .map_err(|_| "the line is not UTF-8".to_string())
                    .and_then(parse_event)
                    .map_err(|d| self.damaged(offset, d))?;
                e.insert(&mut insert)
                    .map_err(StoreError::sqlite("copying the log's tail"))?;
            }
        }
        tx.commit()
            .map_err(StoreError::sqlite("copying the log's tail"))?;
        if let Some(copied) = self.copied.as_mut() {
            copied.end = from + complete as u64;
        }
        Ok(())
    }
}

fn clear(conn: &Connection) -> Result<(), StoreError> {
    conn.execute("DELETE FROM temp.tail_events", [])
        .map(drop)
        .map_err(StoreError::sqlite("reading the log's tail"))
}

impl EventReader {
    /// Opens an existing log for reading. A missing file, a file that is not a
    /// toolgate log, or a corrupt one is an error.
    pub fn open(path: impl AsRef<Path>) -> Result<EventReader, StoreError> {
        let conn = sqlite::open(path.as_ref(), LOG_FILE, Access::ReadOnly)?;
        Ok(EventReader::from_connection(conn, path.as_ref()))
    }

    pub(crate) fn from_connection(conn: Connection, path: &Path) -> EventReader {
        EventReader {
            state: Mutex::new(ReaderState {
                conn,
                db: path.to_path_buf(),
                tail: TailCopy {
                    path: tail::path_for(path),
                    ready: false,
                    copied: None,
                },
            }),
        }
    }

    /// The connection, with the tail's new lines copied for a query.
    fn refreshed(&self) -> Result<std::sync::MutexGuard<'_, ReaderState>, StoreError> {
        let mut state = self.lock();
        let ReaderState { conn, tail, .. } = &mut *state;
        tail.refresh(conn)?;
        Ok(state)
    }

    /// The events matching `filter`, oldest first.
    pub fn query(&self, filter: &EventFilter) -> Result<Vec<StoredEvent>, StoreError> {
        let state = self.refreshed()?;
        let conn = &state.conn;
        let mut sql = format!("SELECT {EVENT_COLUMNS} FROM log_events WHERE seq > ?1");
        let mut args: Vec<SqlValue> = vec![SqlValue::Integer(
            i64::try_from(filter.after_seq.unwrap_or(0)).unwrap_or(i64::MAX),
        )];
        for (column, value) in [
            ("session_id", filter.session.clone()),
            ("call_id", filter.call_id.clone()),
            ("kind", filter.kind.map(|k| k.as_str().to_string())),
            ("json_extract(payload, '$.person')", filter.person.clone()),
            ("json_extract(payload, '$.machine')", filter.machine.clone()),
            ("json_extract(payload, '$.agent')", filter.agent.clone()),
        ] {
            if let Some(v) = value {
                args.push(SqlValue::Text(v));
                sql.push_str(&format!(" AND {column} = ?{}", args.len()));
            }
        }
        sql.push_str(if filter.tail && filter.limit.is_some() {
            " ORDER BY seq DESC"
        } else {
            " ORDER BY seq ASC"
        });
        if let Some(limit) = filter.limit {
            args.push(SqlValue::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
            sql.push_str(&format!(" LIMIT ?{}", args.len()));
        }
        let mut stmt = conn
            .prepare_cached(&sql)
            .map_err(StoreError::sqlite("querying the event log"))?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args), RawEvent::from_row)
            .map_err(StoreError::sqlite("querying the event log"))?;
        let mut out = Vec::new();
        for row in rows {
            let raw = row.map_err(StoreError::sqlite("reading the event log"))?;
            out.push(raw.decode()?);
        }
        if filter.tail && filter.limit.is_some() {
            out.reverse();
        }
        Ok(out)
    }

    /// The largest seq in the log (0 when empty).
    pub fn last_seq(&self) -> Result<u64, StoreError> {
        let seq: Option<i64> = self
            .refreshed()?
            .conn
            .query_row("SELECT max(seq) FROM log_events", [], |r| r.get(0))
            .map_err(StoreError::sqlite("reading the last seq"))?;
        Ok(seq.map_or(0, |s| u64::try_from(s).unwrap_or(0)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ReaderState> {
        // A panic while holding the lock cannot leave the connection half-used
        // (each statement is self-contained), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the database connection and the log's database path.
    pub(crate) fn with_connection<T>(&self, f: impl FnOnce(&mut Connection, &Path) -> T) -> T {
        let mut state = self.lock();
        let ReaderState { conn, db, .. } = &mut *state;
        f(conn, db)
    }
}

/// An event row as SQLite holds it, before any interpretation.
#[derive(Clone, Debug)]
pub(crate) struct RawEvent {
    pub seq: i64,
    pub ts_ms: SqlValue,
    pub kind: SqlValue,
    pub session_id: SqlValue,
    pub call_id: SqlValue,
    pub payload: SqlValue,
    pub prev_hash: SqlValue,
    pub hash: SqlValue,
    /// What is wrong with a tail line that is not an event (its columns are
    /// then empty).
    pub damage: Option<String>,
}

impl RawEvent {
    pub(crate) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawEvent> {
        Ok(RawEvent {
            seq: r.get(0)?,
            ts_ms: r.get(1)?,
            kind: r.get(2)?,
            session_id: r.get(3)?,
            call_id: r.get(4)?,
            payload: r.get(5)?,
            prev_hash: r.get(6)?,
            hash: r.get(7)?,
            damage: None,
        })
    }

    /// The typed columns, or what is wrong with them.
    pub(crate) fn columns(&self) -> Result<Columns<'_>, String> {
        if let Some(damage) = &self.damage {
            return Err(damage.clone());
        }
        Ok(Columns {
            ts_ms: int(&self.ts_ms, "ts_ms")?,
            kind: text(&self.kind, "kind")?,
            session_id: text(&self.session_id, "session_id")?,
            call_id: text(&self.call_id, "call_id")?,
            payload: text(&self.payload, "payload")?,
            prev_hash: text(&self.prev_hash, "prev_hash")?,
            hash: text(&self.hash, "hash")?,
        })
    }

    pub(crate) fn decode(self) -> Result<StoredEvent, StoreError> {
        let corrupt = |detail: String| StoreError::CorruptEvent {
            seq: self.seq,
            detail,
        };
        let c = self.columns().map_err(corrupt)?;
        let kind = EventKind::parse(c.kind)
            .ok_or_else(|| corrupt(format!("unknown kind {:?}", c.kind)))?;
        let payload: EventPayload = serde_json::from_str(c.payload)
            .map_err(|e| corrupt(format!("payload is not a valid event payload: {e}")))?;
        Ok(StoredEvent {
            seq: u64::try_from(self.seq).map_err(|_| corrupt("negative seq".into()))?,
            event: Event {
                kind,
                session_id: c.session_id.to_string(),
                call_id: c.call_id.to_string(),
                ts_ms: c.ts_ms,
                payload,
            },
            prev_hash: c.prev_hash.to_string(),
            hash: c.hash.to_string(),
        })
    }
}

/// The columns of a [`RawEvent`] with the types the log writes.
pub(crate) struct Columns<'a> {
    pub ts_ms: i64,
    pub kind: &'a str,
    pub session_id: &'a str,
    pub call_id: &'a str,
    pub payload: &'a str,
    pub prev_hash: &'a str,
    pub hash: &'a str,
}

fn int(v: &SqlValue, column: &str) -> Result<i64, String> {
    match v {
        SqlValue::Integer(i) => Ok(*i),
        other => Err(format!("{column} is {other:?}, not an integer")),
    }
}

fn text<'a>(v: &'a SqlValue, column: &str) -> Result<&'a str, String> {
    match v {
        SqlValue::Text(s) => Ok(s),
        other => Err(format!("{column} is {other:?}, not text")),
    }
}
