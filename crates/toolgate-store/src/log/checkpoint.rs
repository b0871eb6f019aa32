//! WAL checkpoints, mostly off the commit path.
//!
//! SQLite's automatic checkpoint runs inside the commit that crosses the
//! threshold, copying every page in the WAL and (with `synchronous = NORMAL`)
//! syncing the file, which stalls every event waiting behind it. Here the
//! writer's WAL hook hands the bulk of that work to a background thread with
//! its own connection (`PASSIVE`: it never blocks the writer). A passive
//! checkpoint cannot catch up with a writer that keeps committing, and SQLite
//! only starts the WAL over once every frame is copied, so after the background
//! pass the writer runs one more passive checkpoint itself, which only copies
//! the frames written meanwhile. If the background thread falls behind, the
//! writer checkpoints at [`INLINE_PAGES`] anyway, which bounds the WAL file.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;

use rusqlite::Connection;
use rusqlite::wal::CheckpointMode;

/// WAL size (pages) at which the background checkpoint is requested
/// (SQLite's own default threshold for its automatic checkpoint).
const BACKGROUND_PAGES: i32 = 1000;

/// WAL size (pages, 16 MiB) at which the writer checkpoints whatever the
/// background thread is doing.
const INLINE_PAGES: i32 = 4096;

/// Installs the hook on the writer's connection; returns what the background
/// thread needs.
pub(crate) fn install(writer: &mut Connection) -> rusqlite::Result<Background> {
    let (nudge, nudges) = std::sync::mpsc::sync_channel::<()>(1);
    let finished = Arc::new(AtomicBool::new(false));
    let background = Background {
        nudges,
        finished: Arc::clone(&finished),
    };
    let mut requested = false;
    writer.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages: i32| {
        if pages < BACKGROUND_PAGES {
            return Ok(());
        }
        if !requested {
            requested = nudge.try_send(()).is_ok();
            return Ok(());
        }
        if finished.load(Ordering::Acquire) || pages >= INLINE_PAGES {
            match wal.checkpoint_v2(CheckpointMode::PASSIVE) {
                Ok(_) => {
                    finished.store(false, Ordering::Release);
                    requested = false;
                }
                // The background pass is still running; try after the next commit.
                Err(e) => tracing::debug!(error = %e, pages, "WAL checkpoint postponed"),
            }
        }
        Ok(())
    }))?;
    // Keep the sender alive only inside the hook: when the writer's connection
    // closes, the background thread's queue disconnects and it exits.
    Ok(background)
}

/// The background half: checkpoints when nudged.
pub(crate) struct Background {
    nudges: Receiver<()>,
    finished: Arc<AtomicBool>,
}

impl Background {
    /// Runs until the writer's connection (holding the sender) is gone.
    pub(crate) fn run(self, conn: Connection) {
        while self.nudges.recv().is_ok() {
            match conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE) {
                Ok((log, done)) => tracing::trace!(log, done, "background WAL checkpoint"),
                Err(e) => tracing::warn!(error = %e, "background WAL checkpoint failed"),
            }
            self.finished.store(true, Ordering::Release);
        }
    }
}
