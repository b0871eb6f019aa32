//! Spilled tool output: full texts under `<data_dir>/tool-output/`, kept for
//! [`DEFAULT_RETENTION`] and removed by [`SpillStore::sweep`].

use std::fs::{DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use toolgate_core::{OutputStore, SpillError, now_ms};

use crate::error::StoreError;

/// How long spilled files are kept: 7 days.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// How often a server sweeps: hourly.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(60 * 60);

/// The directory under the data directory that holds spilled output.
const DIR_NAME: &str = "tool-output";

/// Longest call-id fragment kept in a file name.
const MAX_ID_CHARS: usize = 64;

/// Makes names unique within this process; the pid makes them unique across processes.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Full tool outputs as files (directory mode 0700, files 0600).
#[derive(Clone, Debug)]
pub struct SpillStore {
    dir: PathBuf,
}

impl SpillStore {
    /// A store under `data_dir/tool-output`. Nothing is created until the first spill.
    pub fn new(data_dir: impl AsRef<Path>) -> SpillStore {
        SpillStore {
            dir: data_dir.as_ref().join(DIR_NAME),
        }
    }

    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Deletes the spilled files last modified more than `max_age` ago and
    /// returns how many were deleted. Only regular files are touched; a file that
    /// cannot be removed is logged and skipped.
    pub fn sweep(&self, max_age: Duration) -> Result<usize, StoreError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(source) => {
                return Err(StoreError::Io {
                    context: "listing",
                    path: self.dir.clone(),
                    source,
                });
            }
        };
        let now = SystemTime::now();
        let mut removed = 0;
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    tracing::warn!(dir = %self.dir.display(), error = %e, "skipping unreadable entry");
                    continue;
                }
            };
            let path = entry.path();
            // symlink_metadata: a symlink is never followed, nor deleted.
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let Ok(modified) = meta.modified() else {
                continue;
            };
            // A file from the future (clock skew) has age zero and is kept.
            let age = now.duration_since(modified).unwrap_or(Duration::ZERO);
            if age <= max_age {
                continue;
            }
            match std::fs::remove_file(&path) {
                Ok(()) => removed += 1,
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "could not remove old spill file");
                }
            }
        }
        if removed > 0 {
            tracing::info!(dir = %self.dir.display(), removed, "swept old tool output");
        }
        Ok(removed)
    }

    /// Sweeps now and then every `interval` on a background thread, deleting
    /// files older than `max_age`, until the returned handle is dropped.
    pub fn spawn_sweeper(
        &self,
        interval: Duration,
        max_age: Duration,
    ) -> Result<SweepHandle, StoreError> {
        let store = self.clone();
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("tg-spill-sweep".into())
            .spawn(move || {
                loop {
                    if let Err(e) = store.sweep(max_age) {
                        tracing::warn!(error = %e, "tool output sweep failed");
                    }
                    match stopped.recv_timeout(interval) {
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                        // The handle was dropped.
                        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                }
            })
            .map_err(|source| StoreError::Io {
                context: "starting the sweeper thread for",
                path: self.dir.clone(),
                source,
            })?;
        Ok(SweepHandle {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    fn create_dir(&self) -> Result<(), SpillError> {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|source| SpillError {
                path: self.dir.clone(),
                source,
            })
    }
}

impl OutputStore for SpillStore {
    fn spill(&self, call_id: &str, text: &str) -> Result<PathBuf, SpillError> {
        self.create_dir()?;
        let path = self.dir.join(format!(
            "{}-{}-{}-{}.txt",
            now_ms(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            sanitize(call_id)
        ));
        let fail = |source| SpillError {
            path: path.clone(),
            source,
        };
        // create_new: never follows or overwrites an existing file or symlink.
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(fail)?;
        if let Err(e) = file.write_all(text.as_bytes()) {
            let _ = std::fs::remove_file(&path);
            return Err(fail(e));
        }
        Ok(path)
    }
}

/// The call id as a file-name fragment: ASCII letters, digits, `-` and `_` kept,
/// anything else replaced by `_`, at most 64 characters.
fn sanitize(call_id: &str) -> String {
    let s: String = call_id
        .chars()
        .take(MAX_ID_CHARS)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "call".to_string() } else { s }
}

/// Stops the background sweeper when dropped.
#[derive(Debug)]
pub struct SweepHandle {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for SweepHandle {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn call_ids_cannot_escape_the_directory() {
        assert_eq!(sanitize("../../etc/passwd"), "______etc_passwd");
        assert_eq!(sanitize(""), "call");
        assert_eq!(sanitize("toolu_01-AbC"), "toolu_01-AbC");
        assert_eq!(sanitize("é/\0x"), "___x");
        assert_eq!(sanitize(&"a".repeat(500)).len(), 64);
    }
}
