//! The fold thread of a long-lived [`EventLog`](super::EventLog): moves the
//! tail into the database once it passes [`FOLD_BYTES`](super::tail::FOLD_BYTES),
//! off the commit path, then checkpoints the database's WAL.
//!
//! A fold is one SQLite transaction for a few hundred events, so the
//! database's own costs (its locks, its WAL frames, the checkpoint's syncs)
//! are paid once per fold rather than once per call. The checkpoint runs once
//! the WAL passes [`CHECKPOINT_WAL_BYTES`] (a few folds: the pages they share,
//! the rightmost leaves and the index's, are copied once); it is `PASSIVE`: it
//! never waits for a reader, and copies what it can; the WAL starts over at
//! the next fold once every frame has been copied.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Receiver;

use rusqlite::wal::CheckpointMode;

use super::tail::TailWriter;

/// The WAL size past which the fold thread checkpoints: well past
/// [`WAL_KEPT_BYTES`](super::WAL_KEPT_BYTES), so that the file's size
/// measures the frames written since the last checkpoint.
const CHECKPOINT_WAL_BYTES: u64 = 4 * 1024 * 1024;

const _: () = assert!(CHECKPOINT_WAL_BYTES > 2 * super::WAL_KEPT_BYTES);

/// What the fold thread has done, for [`LogStats`](super::LogStats).
#[derive(Debug, Default)]
pub(crate) struct FoldCounts {
    pub folds: AtomicU64,
    pub checkpoints: AtomicU64,
}

/// Runs until every sender of `requests` is gone.
pub(crate) fn run(mut tail: TailWriter, db: &Path, requests: Receiver<()>, counts: &FoldCounts) {
    let wal = {
        let mut name = db.as_os_str().to_os_string();
        name.push("-wal");
        PathBuf::from(name)
    };
    while requests.recv().is_ok() {
        match tail.fold(true) {
            Ok(Some(moved)) if moved > 0 => {
                counts.folds.fetch_add(1, Ordering::Relaxed);
                if std::fs::metadata(&wal).is_ok_and(|m| m.len() > CHECKPOINT_WAL_BYTES) {
                    counts.checkpoints.fetch_add(1, Ordering::Relaxed);
                    checkpoint(&mut tail);
                }
            }
            Ok(_) => {}
            // The events stay in the tail (durable there); the next request retries.
            Err(e) => tracing::warn!(error = %e, "cannot fold the event log's tail"),
        }
    }
    tracing::debug!("event log fold thread stopped");
}

fn checkpoint(tail: &mut TailWriter) {
    match tail.conn() {
        Ok(conn) => match conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE) {
            Ok((log, done)) => tracing::trace!(log, done, "WAL checkpoint after a fold"),
            Err(e) => tracing::debug!(error = %e, "WAL checkpoint skipped"),
        },
        Err(e) => tracing::debug!(error = %e, "no connection for a WAL checkpoint"),
    }
}
