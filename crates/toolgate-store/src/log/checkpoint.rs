//! WAL checkpoints, mostly off the commit path.
//!
//! SQLite's automatic checkpoint runs inside the commit that crosses 1000
//! pages, copying every page in the WAL and (with `synchronous = NORMAL`)
//! syncing the files, which stalls every event waiting behind it. Here the
//! writer's WAL hook hands the copying to a background thread with its own
//! connection every [`BACKGROUND_PAGES`] (`PASSIVE`: it never blocks the
//! writer). A passive checkpoint cannot catch up with a writer that keeps
//! committing, and SQLite only starts the WAL over once every frame is copied,
//! so at [`INLINE_PAGES`] the writer runs one passive checkpoint itself, which
//! copies only the frames written since the last background pass but still
//! pays the syncs on the commit path: once per ~8 MiB of WAL instead of at
//! every automatic checkpoint. This also bounds the WAL file.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use rusqlite::Connection;
use rusqlite::wal::CheckpointMode;

/// Every this many new WAL pages (2 MiB at the log's 4 KiB pages) the
/// background checkpoint is requested.
const BACKGROUND_PAGES: i32 = 512;

/// WAL size (pages, 8 MiB at 4 KiB) at which the writer finishes the
/// checkpoint so that the WAL starts over.
const INLINE_PAGES: i32 = 2048;

/// Installs the hook on the writer's connection; returns what the background
/// thread needs.
pub(crate) fn install(writer: &mut Connection) -> rusqlite::Result<Background> {
    let (nudge, nudges) = std::sync::mpsc::sync_channel::<()>(1);
    // Set while a background pass is queued or running: two checkpoints at
    // once would only make one of them fail.
    let running = Arc::new(AtomicBool::new(false));
    let background = Background {
        nudges,
        running: Arc::clone(&running),
    };
    let mut next_nudge = BACKGROUND_PAGES;
    let mut next_inline = INLINE_PAGES;
    writer.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages: i32| {
        if pages < BACKGROUND_PAGES {
            // Small, or it just started over.
            next_nudge = BACKGROUND_PAGES;
            next_inline = INLINE_PAGES;
            return Ok(());
        }
        if pages >= next_inline {
            if running.load(Ordering::Acquire) {
                next_inline = pages + 16;
                return Ok(());
            }
            next_inline = match wal.checkpoint_v2(CheckpointMode::PASSIVE) {
                // Complete: the next transaction starts the WAL over.
                Ok((log, done)) if log == done => INLINE_PAGES,
                // A reader still uses old frames; don't sync again at every commit.
                Ok(_) => pages + BACKGROUND_PAGES,
                // The background pass is running; try again a few commits later.
                Err(e) => {
                    tracing::debug!(error = %e, pages, "WAL checkpoint postponed");
                    pages + 16
                }
            };
        } else if pages >= next_nudge && !running.swap(true, Ordering::AcqRel) {
            if nudge.try_send(()).is_err() {
                running.store(false, Ordering::Release);
            }
            next_nudge = pages + BACKGROUND_PAGES;
        }
        Ok(())
    }))?;
    // The sender lives only inside the hook: when the writer's connection
    // closes, the background queue disconnects and its thread exits.
    Ok(background)
}

/// The background half: checkpoints when nudged.
pub(crate) struct Background {
    nudges: Receiver<()>,
    running: Arc<AtomicBool>,
}

impl Background {
    /// Runs until the writer's connection (holding the sender) is gone.
    pub(crate) fn run(self, conn: Connection) {
        // Never wait for locks: a pass that cannot run now is simply skipped.
        if let Err(e) = conn.busy_timeout(Duration::ZERO) {
            tracing::warn!(error = %e, "could not clear the checkpoint busy timeout");
        }
        while self.nudges.recv().is_ok() {
            match conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE) {
                Ok((log, done)) => tracing::trace!(log, done, "background WAL checkpoint"),
                Err(e) => tracing::debug!(error = %e, "background WAL checkpoint skipped"),
            }
            self.running.store(false, Ordering::Release);
        }
    }
}
