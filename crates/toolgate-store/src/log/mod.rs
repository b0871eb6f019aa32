//! The hash-chained event log: a SQLite file in WAL mode. Whatever is waiting is
//! committed in one transaction, on the submitter's thread when nothing has to
//! be waited for, else on the log's writer thread (see `writer`).

mod ack;
mod checkpoint;
pub(crate) mod formats;
mod query;
pub(crate) mod reader;
mod schema;
pub(crate) mod verify;
pub(crate) mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::thread::JoinHandle;

use tokio::sync::oneshot;
use toolgate_core::{Event, EventAck, EventSink, Failure, SinkError};

pub use query::LogQuery;
pub use reader::EventReader;
pub use toolgate_core::event_query::{EventFilter, Problem, StoredEvent, VerifyReport};
pub use verify::verify;

use crate::canonical::stored_and_hashed_payload;
use crate::error::StoreError;
use crate::sqlite::{self, Access};
use schema::LOG_FILE;
use writer::{Batch, Message, Pending, Shared};

/// What "durable" means for an acknowledged event.
///
/// Both modes use WAL; an event is acknowledged only after the transaction that
/// holds it has committed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous = NORMAL`: a committed event survives the process being
    /// killed (the WAL is in the OS page cache), but the last commits before a
    /// power loss or OS crash may be lost (never corrupting the log). The default.
    #[default]
    Normal,
    /// `synchronous = FULL`: every commit is synced to the disk before it is
    /// acknowledged, so an event also survives power loss and OS crashes.
    /// Slower: one fsync per group commit.
    Full,
}

impl Durability {
    fn pragma(self) -> &'static str {
        match self {
            Durability::Normal => "PRAGMA synchronous = NORMAL",
            Durability::Full => "PRAGMA synchronous = FULL",
        }
    }
}

/// The page cache of the connections that only append or checkpoint (KiB).
const WRITER_CACHE: &str = "PRAGMA cache_size = -256";

/// An open event log that appends on the submitter's thread or its writer thread.
///
/// Several `EventLog`s, in one process or many, may append to the same file:
/// each batch runs in `BEGIN IMMEDIATE` and continues the chain from the head it
/// reads inside that transaction. Dropping (or [`close`](Self::close)) commits
/// every event already submitted before returning.
#[derive(Debug)]
pub struct EventLog {
    path: PathBuf,
    writer: Option<JoinHandle<()>>,
    checkpointer: Option<JoinHandle<()>>,
    reader: EventReader,
    shared: Arc<Shared>,
}

/// What one [`EventLog`]'s writer has done since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogStats {
    /// Events committed.
    pub events: u64,
    /// Transactions committed (fewer than `events` when commits were grouped).
    pub commits: u64,
}

impl EventLog {
    /// Opens (creating if needed) the log at `path`. A file that is not a toolgate
    /// log is an error and is left untouched.
    pub fn open(path: impl AsRef<Path>, durability: Durability) -> Result<EventLog, StoreError> {
        let path = path.as_ref().to_path_buf();
        let mut write_conn = sqlite::open(&path, LOG_FILE, Access::ReadWrite)?;
        write_conn
            .execute_batch(durability.pragma())
            .map_err(StoreError::sqlite("setting durability"))?;
        // Appending touches only the rightmost pages and the head; SQLite's
        // default 2 MiB page cache per connection would only fill with pages
        // never read again (resident memory of a long-running server).
        write_conn
            .execute_batch(WRITER_CACHE)
            .map_err(StoreError::sqlite("sizing the page cache"))?;
        let checkpoint_conn = sqlite::open(&path, LOG_FILE, Access::ReadWrite)?;
        checkpoint_conn
            .execute_batch(WRITER_CACHE)
            .map_err(StoreError::sqlite("sizing the page cache"))?;
        let background = checkpoint::install(&mut write_conn)
            .map_err(StoreError::sqlite("installing the WAL hook"))?;
        let checkpointer = std::thread::Builder::new()
            .name("tg-log-checkpoint".into())
            .spawn(move || background.run(checkpoint_conn))
            .map_err(|source| StoreError::Io {
                context: "starting the checkpoint thread for",
                path: path.clone(),
                source,
            })?;
        // The reader gets its own connection so queries never wait for the writer.
        let read_conn = sqlite::open(&path, LOG_FILE, Access::ReadWrite)?;
        let (tx, rx) = mpsc::channel();
        // A `NORMAL` commit is cheaper than two thread switches; a `FULL` one
        // syncs, so those are grouped on the writer thread.
        let shared = Arc::new(Shared::new(
            write_conn,
            tx,
            durability == Durability::Normal,
        ));
        let writer_shared = Arc::clone(&shared);
        let writer = std::thread::Builder::new()
            .name("tg-log-writer".into())
            .spawn(move || writer::run(writer_shared, rx))
            .map_err(|source| StoreError::Io {
                context: "starting the writer thread for",
                path: path.clone(),
                source,
            })?;
        Ok(EventLog {
            path,
            writer: Some(writer),
            checkpointer: Some(checkpointer),
            reader: EventReader::from_connection(read_conn),
            shared,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Events and transactions committed by this instance so far.
    pub fn stats(&self) -> LogStats {
        LogStats {
            events: self.shared.counters.events.load(Ordering::Relaxed),
            commits: self.shared.counters.commits.load(Ordering::Relaxed),
        }
    }

    /// The events matching `filter`, oldest first. Blocking (a SQLite read on
    /// the caller's thread); async servers call it through `spawn_blocking`.
    pub fn query(&self, filter: &EventFilter) -> Result<Vec<StoredEvent>, StoreError> {
        self.reader.query(filter)
    }

    /// The largest seq in the log (0 when empty).
    pub fn last_seq(&self) -> Result<u64, StoreError> {
        self.reader.last_seq()
    }

    /// Walks the whole chain (see [`verify`]).
    pub fn verify(&self) -> Result<VerifyReport, StoreError> {
        self.reader.verify()
    }

    /// Blocks until every event submitted before this call is committed (or
    /// failed). Do not call it from an async task; await the acks instead.
    pub fn flush(&self) -> Result<(), StoreError> {
        let (tx, rx) = mpsc::channel();
        if !self.shared.tell_writer(Message::Flush(tx)) {
            return Err(StoreError::WriterStopped);
        }
        rx.recv().map_err(|_| StoreError::WriterStopped)
    }

    /// Commits everything submitted and stops the writer.
    pub fn close(mut self) -> Result<(), StoreError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), StoreError> {
        // Closing the queue lets the writer drain it and exit.
        self.shared.stop_writer();
        let written = match self.writer.take() {
            Some(handle) => handle.join().map_err(|_| StoreError::WriterStopped),
            None => Ok(()),
        };
        // The writer's connection holds the checkpointer's only sender.
        self.shared.close_connection();
        if let Some(handle) = self.checkpointer.take() {
            let _ = handle.join();
        }
        written
    }
}

/// Appends `events` to the log at `path` (created if needed) in one
/// transaction on the caller's thread, and returns the last seq: for a short
/// process that records a few events once (`toolgate hook`), without the
/// writer and checkpoint threads an [`EventLog`] starts. The events are
/// durable (as `durability` says) when it returns; the connection is closed.
pub fn append_once(
    path: impl AsRef<Path>,
    durability: Durability,
    events: Vec<Event>,
) -> Result<u64, StoreError> {
    append_short(path.as_ref(), durability, events).map(|(seq, _conn)| seq)
}

/// [`append_once`] for a process that exits as soon as it has answered (the
/// hook program): the connection is not closed but left for the process's
/// exit, which releases its file locks; closing it would only free memory
/// (about 3 % of a hook process's instructions). The events are as durable
/// when it returns. A process that goes on (or appends again) uses
/// [`append_once`], which closes it.
pub fn append_before_exit(
    path: impl AsRef<Path>,
    durability: Durability,
    events: Vec<Event>,
) -> Result<u64, StoreError> {
    let (seq, conn) = append_short(path.as_ref(), durability, events)?;
    std::mem::forget(conn);
    Ok(seq)
}

/// Appends in one transaction on a new connection, returned open.
fn append_short(
    path: &Path,
    durability: Durability,
    events: Vec<Event>,
) -> Result<(u64, rusqlite::Connection), StoreError> {
    let mut conn = sqlite::open(path, LOG_FILE, Access::ReadWrite)?;
    conn.execute_batch(durability.pragma())
        .map_err(StoreError::sqlite("setting durability"))?;
    // Closing the last connection would checkpoint the WAL into the
    // database, with its syncs, on every short process: leave that to
    // SQLite's automatic checkpoint at commit (every 1,000 pages) and to the
    // long-running logs' checkpoint thread. The commit itself is as durable
    // as `durability` says either way.
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )
    .map_err(StoreError::sqlite("keeping the WAL on close"))?;
    let pending = events
        .into_iter()
        .map(pending)
        .collect::<Result<Vec<_>, _>>()
        .map_err(StoreError::Serialize)?;
    let count = pending.len() as u64;
    let (ack, _done) = oneshot::channel();
    let batch = Batch {
        events: pending,
        ack,
    };
    // No automatic checkpoint: each first connection to a WAL database
    // rebuilds its index and forgets how far the last checkpoint got, so in
    // a short process the automatic one would copy the whole WAL at every
    // commit and never let it start over (the WAL, and every later process's
    // rebuild of it, would grow with the log).
    conn.pragma_update(None, "wal_autocheckpoint", 0)
        .map_err(StoreError::sqlite("turning off the automatic checkpoint"))?;
    let first = writer::append(&mut conn, std::slice::from_ref(&batch))
        .map_err(StoreError::sqlite("appending events"))?;
    truncate_wal_past(&conn, path, SHORT_PROCESS_WAL_BYTES);
    Ok((first + count.saturating_sub(1), conn))
}

/// The WAL size past which a short process ([`append_once`]) checkpoints the
/// whole WAL and truncates it: what every later short process reads and
/// checksums when it opens the log stays under this, and one process in
/// every few dozen pays the checkpoint's syncs.
const SHORT_PROCESS_WAL_BYTES: u64 = 256 * 1024;

/// Checkpoints every frame of the WAL into the database and truncates the
/// WAL, once it is larger than `limit` bytes. Never waits: with another
/// process reading or writing, it leaves the WAL for a later one.
fn truncate_wal_past(conn: &rusqlite::Connection, path: &Path, limit: u64) {
    let mut wal = path.as_os_str().to_os_string();
    wal.push("-wal");
    let size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    if size <= limit {
        return;
    }
    if let Err(e) = conn.busy_timeout(std::time::Duration::ZERO) {
        tracing::debug!(error = %e, "WAL left for a later process");
        return;
    }
    let result = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
        row.get::<_, i64>(0)
    });
    match result {
        Ok(0) => {}
        Ok(_) => tracing::debug!(size, "WAL checkpoint busy; left for a later process"),
        Err(e) => {
            tracing::debug!(error = %e, size, "WAL checkpoint failed; left for a later process")
        }
    }
}

/// An event serialised for the committer: the column keeps every digit
/// (sorted keys, serde_json's numbers); the hash covers the current format's
/// canonical form.
pub(crate) fn pending(event: Event) -> Result<Pending, serde_json::Error> {
    let value = serde_json::to_value(&event.payload)?;
    let (payload, hashed_payload) = stored_and_hashed_payload(&value);
    Ok(Pending {
        ts_ms: event.ts_ms,
        kind: event.kind.as_str(),
        session_id: event.session_id,
        call_id: event.call_id,
        payload,
        hashed_payload,
    })
}

impl Drop for EventLog {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            tracing::error!(path = %self.path.display(), error = %e, "event log writer failed on close");
        }
    }
}

impl EventLog {
    /// Queues `events` as one batch; its ack commits it, with whatever other
    /// calls queued meanwhile (see `ack`).
    fn submit_events(&self, events: Vec<Event>) -> EventAck {
        if !self.shared.is_open() {
            return Box::pin(async { Err(SinkError::Closed) });
        }
        // Serialise on the caller's thread so the committer only hashes and
        // inserts.
        let pending = match events
            .into_iter()
            .map(pending)
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(p) => p,
            Err(e) => {
                let err = SinkError::Storage(Failure::caused(
                    "the event payload cannot be serialised",
                    e,
                ));
                return Box::pin(async move { Err(err) });
            }
        };
        let (ack, done) = oneshot::channel();
        self.shared.enqueue(Batch {
            events: pending,
            ack,
        });
        Box::pin(ack::Committed::new(Arc::clone(&self.shared), done))
    }
}

impl EventSink for EventLog {
    fn submit(&self, event: Event) -> EventAck {
        self.submit_events(vec![event])
    }

    fn submit_batch(&self, events: Vec<Event>) -> EventAck {
        if events.is_empty() {
            return Box::pin(async { Ok(0) });
        }
        self.submit_events(events)
    }
}
