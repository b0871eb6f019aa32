//! Reading the log: filtered queries for `toolgate log`, `--session` and `--follow`.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;
use toolgate_core::event_query::{EventFilter, StoredEvent};
use toolgate_core::{Event, EventKind, EventPayload};

use super::schema::{EVENT_COLUMNS, LOG_FILE};
use crate::error::StoreError;
use crate::sqlite::{self, Access};

/// A read-only view of a log file. Never creates or changes the file.
#[derive(Debug)]
pub struct EventReader {
    conn: Mutex<Connection>,
}

impl EventReader {
    /// Opens an existing log for reading. A missing file, a file that is not a
    /// toolgate log, or a corrupt one is an error.
    pub fn open(path: impl AsRef<Path>) -> Result<EventReader, StoreError> {
        let conn = sqlite::open(path.as_ref(), LOG_FILE, Access::ReadOnly)?;
        Ok(EventReader::from_connection(conn))
    }

    pub(crate) fn from_connection(conn: Connection) -> EventReader {
        EventReader {
            conn: Mutex::new(conn),
        }
    }

    /// The events matching `filter`, oldest first.
    pub fn query(&self, filter: &EventFilter) -> Result<Vec<StoredEvent>, StoreError> {
        let conn = self.lock();
        let mut sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE seq > ?1");
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
            .lock()
            .query_row("SELECT max(seq) FROM events", [], |r| r.get(0))
            .map_err(StoreError::sqlite("reading the last seq"))?;
        Ok(seq.map_or(0, |s| u64::try_from(s).unwrap_or(0)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave the connection half-used
        // (each statement is self-contained), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn with_connection<T>(&self, f: impl FnOnce(&mut Connection) -> T) -> T {
        f(&mut self.lock())
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
        })
    }

    /// The typed columns, or what is wrong with them.
    pub(crate) fn columns(&self) -> Result<Columns<'_>, String> {
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
