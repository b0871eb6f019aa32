//! The one writer thread of an [`EventLog`](super::EventLog): group commit.
//!
//! Everything waiting in the queue when the writer wakes is committed in one
//! `BEGIN IMMEDIATE` transaction, which reads the chain's head inside the
//! transaction, so several processes can append to the same file.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError};

use rusqlite::{Connection, params};
use tokio::sync::oneshot;
use toolgate_core::SinkError;

use crate::canonical::HashInput;

/// Most events committed in one transaction; bounds how long the lock is held.
const MAX_BATCH: usize = 4096;

/// An event serialised by the submitter, waiting for its seq.
pub(crate) struct Pending {
    pub ts_ms: i64,
    pub kind: &'static str,
    pub session_id: String,
    pub call_id: String,
    /// The payload as canonical JSON (stored and hashed as is).
    pub payload: String,
    pub ack: oneshot::Sender<Result<u64, SinkError>>,
}

/// A message to the writer.
pub(crate) enum Message {
    Append(Pending),
    /// Answered once everything queued before it is committed (or failed).
    Flush(std::sync::mpsc::Sender<()>),
}

/// Counters shared with the [`EventLog`](super::EventLog) for diagnostics.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub events: AtomicU64,
    pub commits: AtomicU64,
}

/// Runs until every sender is gone and the queue is drained.
pub(crate) fn run(mut conn: Connection, queue: Receiver<Message>, counters: Arc<Counters>) {
    let mut batch: Vec<Pending> = Vec::new();
    let mut flushes = Vec::new();
    while let Ok(first) = queue.recv() {
        take(first, &mut batch, &mut flushes);
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(m) => take(m, &mut batch, &mut flushes),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
        if !batch.is_empty() {
            commit(&mut conn, &mut batch, &counters);
        }
        for f in flushes.drain(..) {
            let _ = f.send(());
        }
    }
    tracing::debug!("event log writer stopped");
}

fn take(m: Message, batch: &mut Vec<Pending>, flushes: &mut Vec<std::sync::mpsc::Sender<()>>) {
    match m {
        Message::Append(p) => batch.push(p),
        Message::Flush(f) => flushes.push(f),
    }
}

/// Commits `batch` in one transaction and answers every ack.
fn commit(conn: &mut Connection, batch: &mut Vec<Pending>, counters: &Counters) {
    match append(conn, batch) {
        Ok(first_seq) => {
            counters.commits.fetch_add(1, Ordering::Relaxed);
            counters
                .events
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
            for (i, p) in batch.drain(..).enumerate() {
                // A dropped receiver (a call dropped mid-flight) is fine: the event is stored.
                let _ = p.ack.send(Ok(first_seq + i as u64));
            }
        }
        Err(e) => {
            tracing::error!(error = %e, events = batch.len(), "event log commit failed");
            let hint = match &e {
                rusqlite::Error::QueryReturnedNoRows => " (the log head is missing)",
                rusqlite::Error::SqliteFailure(f, _)
                    if f.code == rusqlite::ErrorCode::ConstraintViolation =>
                {
                    " (rows were added behind the log's back; run `toolgate log verify`)"
                }
                _ => "",
            };
            let message = format!("committing {} event(s) failed: {e}{hint}", batch.len());
            for p in batch.drain(..) {
                let _ = p.ack.send(Err(SinkError::Storage(message.clone())));
            }
        }
    }
}

/// Appends the batch after the current head; returns the first assigned seq.
fn append(conn: &mut Connection, batch: &[Pending]) -> Result<u64, rusqlite::Error> {
    // Cached statements rather than `Transaction`, which re-parses BEGIN/COMMIT
    // on every batch.
    conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
    let result = append_in_transaction(conn, batch)
        .and_then(|first| conn.prepare_cached("COMMIT")?.execute([]).map(|_| first));
    if result.is_err() && !conn.is_autocommit() {
        if let Err(e) = conn.execute_batch("ROLLBACK") {
            tracing::error!(error = %e, "event log rollback failed");
        }
    }
    result
}

fn append_in_transaction(conn: &Connection, batch: &[Pending]) -> Result<u64, rusqlite::Error> {
    let (head_seq, mut prev) = conn
        .prepare_cached("SELECT seq, hash FROM log_head WHERE id = 1")?
        .query_row([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    let mut seq = head_seq;
    let mut insert = conn.prepare_cached(
        "INSERT INTO events (seq, ts_ms, kind, session_id, call_id, payload, prev_hash, hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for p in batch {
        seq += 1;
        let hash = HashInput {
            seq,
            ts_ms: p.ts_ms,
            kind: p.kind,
            session_id: &p.session_id,
            call_id: &p.call_id,
            payload_canonical: &p.payload,
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
