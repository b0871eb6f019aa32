//! Committing an [`EventLog`](super::EventLog)'s events: group commit, on the
//! submitter's thread when it can, else on the log's writer thread.
//!
//! Submitted batches wait in one queue. Whoever holds the log's tail writer
//! drains the queue, oldest first, and appends what it took to the tail in one
//! `write` under the tail's lock, continuing the chain from the tail's last
//! event, so several processes can append to the same log (see `tail`).
//!
//! With [`Durability::Normal`](super::Durability::Normal) an append is one
//! `write`, cheaper than waking a thread and being woken back, so a submitter
//! that finds the writer free appends the queue itself
//! ([`Shared::commit_inline`]), after stepping aside once so that the other
//! calls in flight queue theirs first (see `ack`). It never waits for anything
//! there: it gives up (and leaves the queue to the writer thread) when another
//! thread holds the tail writer or another process holds the tail's lock. The
//! writer thread waits for both, up to the busy timeout, and it alone appends
//! for `Full`, where grouping amortises the sync.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

use tokio::sync::oneshot;
use toolgate_core::{Failure, SinkError};

use super::tail::{FOLD_BYTES, TailWriter};
use crate::canonical::HashInput;

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

impl Pending {
    /// The event's hash at `seq`, after `prev_hash`, in the current format.
    pub(crate) fn hash(&self, seq: i64, prev_hash: &str) -> String {
        HashInput {
            seq,
            ts_ms: self.ts_ms,
            kind: self.kind,
            session_id: &self.session_id,
            call_id: &self.call_id,
            payload_canonical: &self.hashed_payload,
        }
        .hash(prev_hash)
    }
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
    tail: Mutex<Option<TailWriter>>,
    /// Asks the fold thread to move the tail into the database; `None` once
    /// the log is closing.
    fold_requests: Mutex<Option<std::sync::mpsc::SyncSender<()>>>,
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
    pub(crate) fn new(
        tail: TailWriter,
        wakes: Sender<Message>,
        fold_requests: std::sync::mpsc::SyncSender<()>,
        inline: bool,
    ) -> Shared {
        Shared {
            queue: Mutex::new(VecDeque::new()),
            tail: Mutex::new(Some(tail)),
            fold_requests: Mutex::new(Some(fold_requests)),
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
        let mut guard = match self.tail.try_lock() {
            Ok(c) => c,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            // Another thread is committing; what it did not take, the writer will.
            Err(TryLockError::WouldBlock) => return false,
        };
        let Some(tail) = guard.as_mut() else {
            return false;
        };
        loop {
            let taken = self.take();
            if taken.is_empty() {
                return true;
            }
            // Never waits: another process holding the tail gives the batches back.
            if let Err(back) = self.commit(tail, taken, false) {
                // Put the batches back in front, in order, for the writer.
                let mut queue = self.queue();
                for b in back.into_iter().rev() {
                    queue.push_front(b);
                }
                return false;
            }
        }
    }

    /// Takes whole batches from the front of the queue (see [`take_batches`]).
    fn take(&self) -> Vec<Batch> {
        take_batches(&mut self.queue())
    }

    /// Appends `taken` in one write and answers every ack. Without `wait`, a
    /// tail another process holds returns the batches unanswered.
    fn commit(
        &self,
        tail: &mut TailWriter,
        taken: Vec<Batch>,
        wait: bool,
    ) -> Result<(), Vec<Batch>> {
        let count: usize = taken.iter().map(|b| b.events.len()).sum();
        match tail.append(&taken, wait) {
            Ok(Some(appended)) => {
                self.counters.commits.fetch_add(1, Ordering::Relaxed);
                self.counters
                    .events
                    .fetch_add(count as u64, Ordering::Relaxed);
                let mut next = appended.first_seq;
                for b in taken {
                    next += b.events.len() as u64;
                    // A dropped receiver (a call dropped mid-flight) is fine: the events are stored.
                    let _ = b.ack.send(Ok(next.saturating_sub(1)));
                }
                if appended.size > FOLD_BYTES {
                    self.request_fold();
                }
                Ok(())
            }
            Ok(None) => Err(taken),
            Err(e) => {
                tracing::error!(error = %e, events = count, "event log append failed");
                let failure =
                    Failure::new(format!("committing {count} event(s) failed: {e}")).because(e);
                for b in taken {
                    let _ = b.ack.send(Err(SinkError::Storage(failure.clone())));
                }
                Ok(())
            }
        }
    }

    /// Wakes the fold thread (a request already pending is enough).
    fn request_fold(&self) {
        if let Some(requests) = self
            .fold_requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            let _ = requests.try_send(());
        }
    }

    /// Commits everything queued, waiting for the tail writer and the file lock.
    fn drain(&self) {
        let mut guard = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let taken = self.take();
            if taken.is_empty() {
                return;
            }
            match guard.as_mut() {
                Some(tail) => {
                    // Waiting, it never gives the batches back, but a
                    // timeout is an error answered to each ack.
                    if let Err(back) = self.commit(tail, taken, true) {
                        for b in back {
                            let _ = b.ack.send(Err(SinkError::Closed));
                        }
                    }
                }
                None => {
                    for b in taken {
                        let _ = b.ack.send(Err(SinkError::Closed));
                    }
                }
            }
        }
    }

    /// Moves the whole tail into the database (when the log closes).
    pub(crate) fn fold_all(&self) {
        let mut guard = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tail) = guard.as_mut() {
            match tail.fold(true) {
                Ok(moved) => tracing::debug!(?moved, "event log tail folded on close"),
                // The events stay durable in the tail; the next fold moves them.
                Err(e) => tracing::warn!(error = %e, "cannot fold the event log's tail on close"),
            }
        }
    }

    /// Closes the tail writer and its database connection, and stops the
    /// fold thread.
    pub(crate) fn close_connection(&self) {
        drop(
            self.fold_requests
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        drop(
            self.tail
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
    }
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
