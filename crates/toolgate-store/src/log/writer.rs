//! Committing an [`EventLog`](super::EventLog)'s events: group commit, on the
//! submitter's thread when it can, else on the log's writer thread.
//!
//! Submitted batches wait in one queue. Whoever holds the write connection
//! drains the queue, oldest first, and commits what it took in one
//! `BEGIN IMMEDIATE` transaction, which reads the chain's head inside the
//! transaction, so several processes can append to the same file.
//!
//! With `synchronous = NORMAL` a commit is a few page writes to the WAL, cheaper
//! than waking a thread and being woken back, so a submitter that finds the
//! connection free commits the queue itself ([`Shared::commit_inline`]), after
//! stepping aside once so that the other calls in flight queue theirs first
//! (see `ack`). It never
//! waits for anything there: it gives up (and leaves the queue to the writer
//! thread) when another thread holds the connection or another process holds
//! the file's write lock. The writer thread waits for both, with the busy timeout,
//! and it alone commits for `synchronous = FULL`, where grouping amortises the sync.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, params};
use tokio::sync::oneshot;
use toolgate_core::{Failure, SinkError};

use crate::canonical::HashInput;
use crate::sqlite::BUSY_TIMEOUT;

/// Most events committed in one transaction (whole batches are never split);
/// bounds how long the lock is held.
const MAX_BATCH: usize = 4096;

/// Whole batches from the front of `queue`, up to [`MAX_BATCH`] events (at
/// least one batch): what one group commit takes, for either store.
pub(crate) fn take_batches(queue: &mut VecDeque<Batch>) -> Vec<Batch> {
    let mut taken = Vec::new();
    let mut events = 0;
    while let Some(b) = queue.front() {
        if !taken.is_empty() && events + b.events.len() > MAX_BATCH {
            break;
        }
        events += b.events.len();
        taken.extend(queue.pop_front());
    }
    taken
}

/// An event serialised by the submitter, waiting for its seq.
pub(crate) struct Pending {
    pub ts_ms: i64,
    pub kind: &'static str,
    pub session_id: String,
    pub call_id: String,
    /// The payload as stored (JSON, keys sorted, every digit kept).
    pub payload: String,
    /// The payload in the canonical form of the format written (hashed as is).
    pub hashed_payload: String,
}

/// Events submitted together: committed in the same transaction, acknowledged
/// once (with the last event's seq).
pub(crate) struct Batch {
    pub events: Vec<Pending>,
    pub ack: oneshot::Sender<Result<u64, SinkError>>,
}

/// A message to the writer thread.
pub(crate) enum Message {
    /// Something is waiting in the queue.
    Wake,
    /// Answered once everything queued before it is committed (or failed).
    Flush(std::sync::mpsc::Sender<()>),
}

/// Counters shared with the [`EventLog`](super::EventLog) for diagnostics.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub events: AtomicU64,
    pub commits: AtomicU64,
}

/// What the submitters and the writer thread share.
pub(crate) struct Shared {
    queue: Mutex<VecDeque<Batch>>,
    /// `None` once the log is closed.
    conn: Mutex<Option<Connection>>,
    /// The writer thread's wake-ups; `None` once the log is closing (the
    /// thread drains the queue and exits when this, the only sender, is gone).
    wakes: Mutex<Option<Sender<Message>>>,
    pub counters: Counters,
    /// Whether submitters may commit on their own thread.
    inline: bool,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("counters", &self.counters)
            .field("inline", &self.inline)
            .finish_non_exhaustive()
    }
}

impl Shared {
    pub(crate) fn new(conn: Connection, wakes: Sender<Message>, inline: bool) -> Shared {
        Shared {
            queue: Mutex::new(VecDeque::new()),
            conn: Mutex::new(Some(conn)),
            wakes: Mutex::new(Some(wakes)),
            counters: Counters::default(),
            inline,
        }
    }

    /// Sends `message` to the writer thread; false once the log is closing.
    pub(crate) fn tell_writer(&self, message: Message) -> bool {
        self.wakes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|w| w.send(message).is_ok())
    }

    /// Wakes the writer thread for what is queued; false once the log is closing.
    pub(crate) fn wake_writer(&self) -> bool {
        self.tell_writer(Message::Wake)
    }

    /// Whether the log still takes events.
    pub(crate) fn is_open(&self) -> bool {
        self.wakes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Stops taking events: the writer thread drains the queue and exits.
    pub(crate) fn stop_writer(&self) {
        drop(
            self.wakes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
    }

    fn queue(&self) -> MutexGuard<'_, VecDeque<Batch>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a batch behind everything submitted before it.
    pub(crate) fn enqueue(&self, batch: Batch) {
        self.queue().push_back(batch);
    }

    /// Commits the queue on the calling thread if nothing has to be waited for.
    /// Returns false when the writer thread must do it.
    pub(crate) fn commit_inline(&self) -> bool {
        if !self.inline {
            return false;
        }
        let mut guard = match self.conn.try_lock() {
            Ok(c) => c,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            // Another thread is committing; what it did not take, the writer will.
            Err(TryLockError::WouldBlock) => return false,
        };
        let Some(conn) = guard.as_mut() else {
            return false;
        };
        // Fail at once, rather than wait, when another process is writing.
        if conn.busy_timeout(Duration::ZERO).is_err() {
            return false;
        }
        let mut done = true;
        loop {
            let taken = self.take();
            if taken.is_empty() {
                break;
            }
            if let Err(back) = self.commit(conn, taken, true) {
                // Put the batches back in front, in order, for the writer.
                let mut queue = self.queue();
                for b in back.into_iter().rev() {
                    queue.push_front(b);
                }
                done = false;
                break;
            }
        }
        if conn.busy_timeout(BUSY_TIMEOUT).is_err() {
            tracing::warn!("cannot restore the event log's busy timeout");
        }
        done
    }

    /// Takes whole batches from the front of the queue (see [`take_batches`]).
    fn take(&self) -> Vec<Batch> {
        take_batches(&mut self.queue())
    }

    /// Commits `taken` in one transaction and answers every ack. With
    /// `give_back_if_busy`, a busy file returns the batches unanswered.
    fn commit(
        &self,
        conn: &mut Connection,
        taken: Vec<Batch>,
        give_back_if_busy: bool,
    ) -> Result<(), Vec<Batch>> {
        let count: usize = taken.iter().map(|b| b.events.len()).sum();
        match append(conn, &taken) {
            Ok(first_seq) => {
                self.counters.commits.fetch_add(1, Ordering::Relaxed);
                self.counters
                    .events
                    .fetch_add(count as u64, Ordering::Relaxed);
                let mut next = first_seq;
                for b in taken {
                    next += b.events.len() as u64;
                    // A dropped receiver (a call dropped mid-flight) is fine: the events are stored.
                    let _ = b.ack.send(Ok(next.saturating_sub(1)));
                }
                Ok(())
            }
            Err(e) if give_back_if_busy && is_busy(&e) => Err(taken),
            Err(e) => {
                tracing::error!(error = %e, events = count, "event log commit failed");
                let hint = match &e {
                    rusqlite::Error::QueryReturnedNoRows => " (the log head is missing)",
                    rusqlite::Error::SqliteFailure(f, _)
                        if f.code == ErrorCode::ConstraintViolation =>
                    {
                        " (rows were added behind the log's back; run `toolgate log verify`)"
                    }
                    _ => "",
                };
                let failure =
                    Failure::new(format!("committing {count} event(s) failed: {e}{hint}"))
                        .because(e);
                for b in taken {
                    let _ = b.ack.send(Err(SinkError::Storage(failure.clone())));
                }
                Ok(())
            }
        }
    }

    /// Commits everything queued, waiting for the connection and the file lock.
    fn drain(&self) {
        let mut guard = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let taken = self.take();
            if taken.is_empty() {
                return;
            }
            match guard.as_mut() {
                // Never gives the batches back.
                Some(conn) => drop(self.commit(conn, taken, false)),
                None => {
                    for b in taken {
                        let _ = b.ack.send(Err(SinkError::Closed));
                    }
                }
            }
        }
    }

    /// Closes the write connection (which ends the checkpoint thread).
    pub(crate) fn close_connection(&self) {
        drop(
            self.conn
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
    }
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

/// The writer thread: runs until every sender is gone, then drains the queue.
pub(crate) fn run(shared: std::sync::Arc<Shared>, wakes: Receiver<Message>) {
    let mut flushes = Vec::new();
    while let Ok(first) = wakes.recv() {
        let mut note = |m: Message| {
            if let Message::Flush(f) = m {
                flushes.push(f);
            }
        };
        note(first);
        while let Ok(m) = wakes.try_recv() {
            note(m);
        }
        shared.drain();
        for f in flushes.drain(..) {
            let _ = f.send(());
        }
    }
    shared.drain();
    tracing::debug!("event log writer stopped");
}

/// Appends the batches after the current head; returns the first assigned seq.
pub(crate) fn append(conn: &mut Connection, batches: &[Batch]) -> Result<u64, rusqlite::Error> {
    // Cached statements rather than `Transaction`, which re-parses BEGIN/COMMIT
    // on every batch.
    conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
    let result = append_in_transaction(conn, batches)
        .and_then(|first| conn.prepare_cached("COMMIT")?.execute([]).map(|_| first));
    if result.is_err() && !conn.is_autocommit() {
        if let Err(e) = conn.execute_batch("ROLLBACK") {
            tracing::error!(error = %e, "event log rollback failed");
        }
    }
    result
}

fn append_in_transaction(conn: &Connection, batches: &[Batch]) -> Result<u64, rusqlite::Error> {
    let (head_seq, mut prev) = conn
        .prepare_cached("SELECT seq, hash FROM log_head WHERE id = 1")?
        .query_row([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    let mut seq = head_seq;
    let mut insert = conn.prepare_cached(
        "INSERT INTO events (seq, ts_ms, kind, session_id, call_id, payload, prev_hash, hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for p in batches.iter().flat_map(|b| &b.events) {
        seq += 1;
        let hash = HashInput {
            seq,
            ts_ms: p.ts_ms,
            kind: p.kind,
            session_id: &p.session_id,
            call_id: &p.call_id,
            payload_canonical: &p.hashed_payload,
        }
        .hash(&prev);
        insert.execute(params![
            seq,
            p.ts_ms,
            p.kind,
            p.session_id,
            p.call_id,
            p.payload,
            prev,
            hash
        ])?;
        prev = hash;
    }
    conn.prepare_cached("UPDATE log_head SET seq = ?1, hash = ?2 WHERE id = 1")?
        .execute(params![seq, prev])?;
    // seq starts at 1, so head_seq + 1 is positive.
    Ok(u64::try_from(head_seq + 1).unwrap_or(1))
}
