//! The hash-chained event log: a SQLite file in WAL mode, and its tail, a file
//! of the events appended since the database's last one (see `tail`).
//! Whatever is waiting is appended to the tail in one write, on the
//! submitter's thread when nothing has to be waited for, else on the log's
//! writer thread (see `writer`); the fold thread moves the tail into the
//! database in batches (see `folder`).

mod ack;
mod folder;
pub(crate) mod formats;
pub(crate) mod head;
mod query;
pub(crate) mod reader;
mod schema;
pub(crate) mod tail;
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
/// An event is acknowledged only after it is written to the log's tail (and
/// the database, which receives it later, uses WAL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// A written event survives the process being killed (the tail is in the
    /// OS page cache), but the last events before a power loss or OS crash may
    /// be lost (never corrupting the log). The default.
    #[default]
    Normal,
    /// Every append is synced to the disk (`fdatasync` of the tail) before it
    /// is acknowledged, so an event also survives power loss and OS crashes.
    /// Slower: one sync per group commit.
    Full,
}

/// The settings of every connection that writes the log's database, whatever
/// the [`Durability`]: only a fold writes it, moving events out of the tail,
/// and a fresh tail replaces the old one right after. With `synchronous =
/// NORMAL` that commit was not on the disk when the old tail was gone: a
/// power loss after a fold lost a whole fold of events, and left a tail that
/// starts after events the database never got (a gap `verify` reports as
/// removed events). `FULL` syncs the WAL once per fold (a few hundred
/// events). And [`WAL_KEPT_BYTES`].
pub(crate) fn writer_settings() -> String {
    format!("PRAGMA synchronous = FULL; PRAGMA journal_size_limit = {WAL_KEPT_BYTES}")
}

/// What of the WAL file SQLite keeps after the log starts it over (`PRAGMA
/// journal_size_limit`, in the connections' settings above): without a
/// limit the file keeps the largest size it ever had, so once it had passed
/// the fold thread's checkpoint size, its size said so after every fold, and
/// every fold paid a checkpoint (two `fsync`s and the copy of its pages:
/// 146 `fsync`s in 3,000 calls). With it, the file's size past this is the
/// frames written since the WAL started over.
pub(crate) const WAL_KEPT_BYTES: u64 = 1024 * 1024;

/// How long the fold thread waits for the database's write lock before
/// leaving the fold for its next request.
const FOLD_BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// The page cache of the connection that only reads the head (KiB).
const WRITER_CACHE: &str = "PRAGMA cache_size = -256";

/// An open event log that appends on the submitter's thread or its writer thread.
///
/// Several `EventLog`s, in one process or many, may append to the same file:
/// each batch is appended under the tail's lock and continues the chain from
/// the tail's last event. Dropping (or [`close`](Self::close)) writes every
/// event already submitted, and folds the tail into the database, before
/// returning.
#[derive(Debug)]
pub struct EventLog {
    path: PathBuf,
    writer: Option<JoinHandle<()>>,
    folder: Option<JoinHandle<()>>,
    fold_counts: Arc<folder::FoldCounts>,
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
    /// Times the fold thread moved the tail into the database.
    pub folds: u64,
    /// WAL checkpoints the fold thread ran after a fold.
    pub checkpoints: u64,
}

impl EventLog {
    /// Opens (creating if needed) the log at `path`. A file that is not a toolgate
    /// log is an error and is left untouched.
    pub fn open(path: impl AsRef<Path>, durability: Durability) -> Result<EventLog, StoreError> {
        let path = path.as_ref().to_path_buf();
        // Opening for writing creates the file, or brings an older one to this
        // schema, before anything is appended to its tail.
        let append_conn = sqlite::open(&path, LOG_FILE, Access::ReadWrite)?;
        let fold_conn = sqlite::open(&path, LOG_FILE, Access::ReadWrite)?;
        for conn in [&append_conn, &fold_conn] {
            conn.execute_batch(&writer_settings())
                .map_err(StoreError::sqlite("setting durability"))?;
        }
        // The tail writer's connection only reads the head when a tail
        // starts; SQLite's default 2 MiB page cache per connection would only
        // hold pages never read again (resident memory of a long-running
        // server). A fold's transaction keeps SQLite's default: with less,
        // it spills pages to the WAL before it commits.
        append_conn
            .execute_batch(WRITER_CACHE)
            .map_err(StoreError::sqlite("sizing the page cache"))?;
        // A fold holds the tail's lock, which every appender waits on, while
        // it waits for the database's write lock: never long.
        // The appender's connection folds once, on close.
        for conn in [&append_conn, &fold_conn] {
            conn.busy_timeout(FOLD_BUSY_TIMEOUT)
                .map_err(StoreError::sqlite("setting the busy timeout"))?;
        }
        let (fold_requests, fold_wakes) = mpsc::sync_channel(1);
        let fold_tail = tail::TailWriter::new(&path, durability, Some(fold_conn));
        let fold_counts = Arc::new(folder::FoldCounts::default());
        let folder = std::thread::Builder::new()
            .name("tg-log-fold".into())
            .spawn({
                let path = path.clone();
                let counts = Arc::clone(&fold_counts);
                move || folder::run(fold_tail, &path, fold_wakes, &counts)
            })
            .map_err(|source| StoreError::Io {
                context: "starting the fold thread for",
                path: path.clone(),
                source,
            })?;
        // The reader gets its own connection so queries never wait for the writer.
        let read_conn = sqlite::open(&path, LOG_FILE, Access::ReadWrite)?;
        let (tx, rx) = mpsc::channel();
        // A `NORMAL` append is cheaper than two thread switches; a `FULL` one
        // syncs, so those are grouped on the writer thread.
        let shared = Arc::new(Shared::new(
            tail::TailWriter::new(&path, durability, Some(append_conn)),
            tx,
            fold_requests,
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
            reader: EventReader::from_connection(read_conn, &path),
            path,
            writer: Some(writer),
            folder: Some(folder),
            fold_counts,
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
            folds: self.fold_counts.folds.load(Ordering::Relaxed),
            checkpoints: self.fold_counts.checkpoints.load(Ordering::Relaxed),
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
        // Everything appended moves into the database, so a closed log is
        // one file (the tail keeps only its start line).
        self.shared.fold_all();
        // Dropping the fold requests' only sender ends the fold thread.
        self.shared.close_connection();
        if let Some(handle) = self.folder.take() {
            let _ = handle.join();
        }
        written
    }
}

/// Appends `events` to the log at `path` (created if needed) in one
/// write on the caller's thread, and returns the last seq: for a short
/// process that records a few events once (`toolgate hook`), without the
/// writer and fold threads an [`EventLog`] starts. The events are durable (as
/// `durability` says) when it returns. The database is opened only when the
/// tail has to be started or has grown past its fold size.
pub fn append_once(
    path: impl AsRef<Path>,
    durability: Durability,
    events: Vec<Event>,
) -> Result<u64, StoreError> {
    append_short(path.as_ref(), durability, events).map(|(seq, _tail)| seq)
}

/// [`append_once`] for a process that exits as soon as it has answered (the
/// hook program): the files are not closed but left for the process's exit,
/// which releases their locks; closing them would only free memory. The
/// events are as durable when it returns. A process that goes on (or appends
/// again) uses [`append_once`], which closes them.
pub fn append_before_exit(
    path: impl AsRef<Path>,
    durability: Durability,
    events: Vec<Event>,
) -> Result<u64, StoreError> {
    let (seq, tail) = append_short(path.as_ref(), durability, events)?;
    std::mem::forget(tail);
    Ok(seq)
}

/// Appends in one write; returns the last seq and the writer, still open.
fn append_short(
    path: &Path,
    durability: Durability,
    events: Vec<Event>,
) -> Result<(u64, tail::TailWriter), StoreError> {
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
    let mut tail = tail::TailWriter::new(path, durability, None);
    let appended = tail
        .append(std::slice::from_ref(&batch), true)?
        .ok_or_else(|| StoreError::TailBusy(tail::path_for(path)))?;
    if appended.size > tail::FOLD_BYTES {
        // Without a long-lived log on this machine, short processes fold
        // the tail themselves, one in every few hundred events; never
        // waiting, neither for the tail nor for the database (the fold holds
        // the tail's lock, which other hooks wait on): a busy one is left for
        // the next process.
        if let Ok(conn) = tail.conn() {
            if let Err(e) = conn.busy_timeout(std::time::Duration::ZERO) {
                tracing::debug!(error = %e, "cannot clear the busy timeout");
            }
        }
        match tail.fold(false) {
            Ok(moved) => tracing::debug!(?moved, "event log tail folded"),
            Err(e) => tracing::warn!(error = %e, "cannot fold the event log's tail"),
        }
        if let Ok(conn) = tail.conn() {
            truncate_wal_past(conn, path, SHORT_PROCESS_WAL_BYTES);
        }
    }
    Ok((appended.first_seq + count.saturating_sub(1), tail))
}

/// The WAL size past which a short process ([`append_once`]) that folded the
/// tail checkpoints the whole WAL and truncates it: what every later process
/// that opens the database reads and checksums stays under this.
const SHORT_PROCESS_WAL_BYTES: u64 = 256 * 1024;

/// Checkpoints every frame of the WAL into the database and truncates the
/// WAL, once it is larger than `limit` bytes. On a connection without a busy
/// timeout it never waits: with another process reading or writing, it leaves
/// the WAL for a later one.
fn truncate_wal_past(conn: &rusqlite::Connection, path: &Path, limit: u64) {
    let mut wal = path.as_os_str().to_os_string();
    wal.push("-wal");
    let size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    if size <= limit {
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
