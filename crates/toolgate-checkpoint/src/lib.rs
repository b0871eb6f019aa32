//! Change sets recorded before they land.
//!
//! Every change set that lands in a person's files — a confined command's
//! staged writes, an edit by a file tool — is a *checkpoint*: before the
//! first path changes, each path's old state is kept in the data
//! directory and the intent is made durable; after the last, the change
//! set is marked landed. A crash in between leaves a checkpoint marked
//! `applying`, which the next [`Checkpoints::open`] rolls back, so the
//! files are as they were before the change set. A landed checkpoint can be
//! undone: each path is put back, unless it was changed again since.
//!
//! ```
//! # fn main() -> Result<(), toolgate_checkpoint::CheckpointError> {
//! let data = tempfile::tempdir()?;
//! let work = tempfile::tempdir()?;
//! let file = work.path().join("notes.txt");
//! std::fs::write(&file, "before")?;
//!
//! let (store, recovered) = toolgate_checkpoint::Checkpoints::open(data.path())?;
//! assert!(recovered.is_empty());
//! let mut set = store.begin("call-1", "edit")?;
//! set.save(&file)?;
//! set.applying()?;
//! let new = work.path().join("notes.txt.new");
//! std::fs::write(&new, "after")?;
//! std::fs::rename(&new, &file)?; // the change replaces the path
//! let id = set.landed()?;
//!
//! store.undo(&id)?;
//! assert_eq!(std::fs::read_to_string(&file)?, "before");
//! # Ok(())
//! # }
//! ```

mod lock;
mod manifest;
mod snapshot;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use manifest::{Entry, Manifest, State};
pub use snapshot::{Before, Stamp};

use lock::Lock;

/// How long a finished checkpoint is kept (like spilled output).
pub const KEEP_FOR: Duration = Duration::from_secs(7 * 24 * 3600);
/// How many bytes of kept state the store holds at most; the oldest
/// finished checkpoints go first.
pub const SIZE_CAP: u64 = 1 << 30;

/// What went wrong with a checkpoint.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The file system refused.
    #[error("checkpoint store: {0}")]
    Io(#[from] io::Error),
    /// A manifest could not be read or written.
    #[error("checkpoint {id}: its manifest is unreadable: {source}")]
    Manifest {
        /// The checkpoint.
        id: String,
        /// Why.
        source: serde_json::Error,
    },
    /// No checkpoint has this id.
    #[error("no checkpoint {0} (see `toolgate undo --list`)")]
    Unknown(String),
    /// The checkpoint is not landed (already undone, rolled back, or still
    /// being applied by another process).
    #[error("checkpoint {id} is {state}, so there is nothing to undo")]
    NotLanded {
        /// The checkpoint.
        id: String,
        /// Its state.
        state: State,
    },
    /// A path was changed again after the change set landed.
    #[error(
        "{path} was changed after checkpoint {id} landed; undo would lose that change, so nothing was restored"
    )]
    ChangedSince {
        /// The checkpoint.
        id: String,
        /// The path changed since.
        path: PathBuf,
    },
    /// Another process holds the checkpoint.
    #[error("checkpoint {0} is in use by another process")]
    Busy(String),
}

/// A checkpoint rolled back at open because its change set was cut off.
#[derive(Debug, Clone)]
pub struct Recovered {
    /// The checkpoint.
    pub id: String,
    /// The paths put back.
    pub paths: Vec<PathBuf>,
    /// Why a path could not be put back, if one could not.
    pub error: Option<String>,
}

/// The store of checkpoints: one directory per change set.
#[derive(Debug)]
pub struct Checkpoints {
    dir: PathBuf,
    /// Whether the records a crash recovery reads are synced to the disk
    /// (see [`Checkpoints::open_with`]).
    fsync: bool,
}

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Where unfinished change sets live: a checkpoint is made here, moved up to
/// the store's top level when it is finished (landed or rolled back), and
/// back here while it is being undone. [`Checkpoints::open`] reads only
/// these, not a week of finished ones, and a rename makes no new file
/// (creating files is what a change set's bookkeeping mostly costs).
const OPEN_DIR: &str = ".open";

/// Whether `id` can name a checkpoint (and so a directory of the store).
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Checkpoints {
    /// Opens (creating) the store in `dir`, rolling back every change set
    /// a crash cut off and removing those that never started applying.
    /// Its records outlive a power loss ([`Checkpoints::open_with`] with
    /// `fsync`).
    pub fn open(dir: &Path) -> Result<(Checkpoints, Vec<Recovered>), CheckpointError> {
        Checkpoints::open_with(dir, true)
    }

    /// As [`Checkpoints::open`]. With `fsync`, the records that recovery
    /// reads ("applying", "undoing") are synced to the disk before the first
    /// path changes, so a change set cut off by a power loss or an OS crash
    /// is rolled back too. Without it they are still written atomically and
    /// survive the process being killed at any moment, but not a power
    /// loss: what the audit log's `--durability normal` promises, without
    /// a sync on every change set that lands.
    pub fn open_with(
        dir: &Path,
        fsync: bool,
    ) -> Result<(Checkpoints, Vec<Recovered>), CheckpointError> {
        fs::create_dir_all(dir)?;
        let store = Checkpoints {
            dir: dir.to_path_buf(),
            fsync,
        };
        // A store from before `.open` existed keeps its unfinished sets at
        // the top level: read it whole once.
        let open_dir = dir.join(OPEN_DIR);
        let mut candidates: Vec<PathBuf> = Vec::new();
        if !open_dir.is_dir() {
            candidates.extend(store.top_level_ids()?.iter().map(|id| dir.join(id)));
            fs::create_dir_all(&open_dir)?;
        }
        for entry in fs::read_dir(&open_dir)? {
            let entry = entry?;
            if valid_id(&entry.file_name().to_string_lossy()) {
                candidates.push(entry.path());
            }
        }
        let mut recovered = Vec::new();
        for path in candidates {
            let id = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            // A checkpoint another process holds is in progress, not cut off.
            let lock = match Lock::try_take(&path) {
                Ok(Some(lock)) => lock,
                Ok(None) => continue,
                // Gone meanwhile, or not a directory (nothing of ours): one
                // stray entry must not close the store to every process.
                Err(e)
                    if e.kind() == io::ErrorKind::NotFound
                        || e.raw_os_error() == Some(libc::ENOTDIR) =>
                {
                    tracing::debug!(path = %path.display(), "not a checkpoint; left alone");
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            let m = match Manifest::read(&path, &id) {
                Ok(m) => m,
                // No manifest: it never began applying, so nothing changed.
                Err(CheckpointError::Io(e)) if e.kind() == io::ErrorKind::NotFound => {
                    let _ = fs::remove_dir_all(&path);
                    continue;
                }
                Err(_) => continue,
            };
            match m.state {
                State::Saving => {
                    let _ = fs::remove_dir_all(&path);
                    continue;
                }
                State::Applying => {
                    let error = store.put_back(&path, &m).err().map(|e| e.to_string());
                    let mut m = m;
                    m.state = State::RolledBack;
                    m.write(&path)?;
                    tracing::warn!(checkpoint = %id, "a change set cut off by a crash was rolled back");
                    recovered.push(Recovered {
                        id: id.clone(),
                        paths: m.entries.iter().map(|e| e.path.clone()).collect(),
                        error,
                    });
                }
                // An undo cut off: finish it (restoring is idempotent).
                State::Undoing => {
                    let mut m = m;
                    if store.put_back(&path, &m).is_err() {
                        continue;
                    }
                    m.state = State::Undone;
                    m.write(&path)?;
                }
                _ => {}
            }
            drop(lock);
            store.finish(&path, &id)?;
        }
        Ok((store, recovered))
    }

    /// Moves a finished checkpoint up to the top level (where it already is
    /// for a store from before `.open`).
    fn finish(&self, path: &Path, id: &str) -> io::Result<PathBuf> {
        let done = self.dir.join(id);
        if path != done {
            fs::rename(path, &done)?;
        }
        Ok(done)
    }

    /// Starts recording a change set for `call_id`, made by `tool`.
    pub fn begin(&self, call_id: &str, tool: &str) -> Result<Pending, CheckpointError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let open_dir = self.dir.join(OPEN_DIR);
        let (id, path) = loop {
            let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
            let id = format!(
                "{}-{:04x}{:03x}",
                now.as_secs(),
                std::process::id() & 0xffff,
                n & 0xfff
            );
            if self.dir.join(&id).exists() {
                continue;
            }
            let path = open_dir.join(&id);
            match fs::create_dir(&path) {
                Ok(()) => break (id, path),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    fs::create_dir_all(&open_dir)?;
                    continue;
                }
                Err(e) => return Err(e.into()),
            }
        };
        let lock = Lock::take(&path)?;
        // No manifest yet: a set cut off before `applying` changed nothing,
        // and the next open removes it.
        let manifest = Manifest {
            id,
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            time_ms: u64::try_from(now.as_millis()).unwrap_or(u64::MAX),
            state: State::Saving,
            entries: Vec::new(),
        };
        Ok(Pending {
            store: Checkpoints {
                dir: self.dir.clone(),
                fsync: self.fsync,
            },
            path,
            manifest,
            _lock: lock,
            done: false,
        })
    }

    /// Every checkpoint, newest first; those whose manifest cannot be read
    /// are named in `unreadable`.
    pub fn list(&self) -> Result<Listing, CheckpointError> {
        let mut listing = Listing::default();
        for (id, path) in self.all()? {
            match Manifest::read(&path, &id) {
                Ok(m) => listing.checkpoints.push(m),
                // Begun, not yet applying: nothing to list.
                Err(CheckpointError::Io(e)) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => listing.unreadable.push((id, e.to_string())),
            }
        }
        listing
            .checkpoints
            .sort_by(|a, b| b.time_ms.cmp(&a.time_ms).then(b.id.cmp(&a.id)));
        Ok(listing)
    }

    /// The newest landed checkpoint's id.
    pub fn newest_landed(&self) -> Result<Option<String>, CheckpointError> {
        Ok(self
            .list()?
            .checkpoints
            .into_iter()
            .find(|m| m.state == State::Landed)
            .map(|m| m.id))
    }

    /// Restores every path of a landed change set to its state before it,
    /// refusing (and changing nothing) when any was changed since.
    pub fn undo(&self, id: &str) -> Result<Manifest, CheckpointError> {
        let path = self.checkpoint_dir(id)?;
        let _lock = Lock::try_take(&path)?.ok_or_else(|| CheckpointError::Busy(id.into()))?;
        let mut m = Manifest::read(&path, id)?;
        if m.state != State::Landed {
            return Err(CheckpointError::NotLanded {
                id: id.into(),
                state: m.state,
            });
        }
        for e in &m.entries {
            let now = Stamp::of(&e.path)?;
            let same = match (&now, &e.after) {
                (Some(a), Some(b)) if a.kind == 'd' && b.kind == 'd' => a.mode == b.mode,
                (a, b) => a.as_ref() == b.as_ref(),
            };
            if !same {
                return Err(CheckpointError::ChangedSince {
                    id: id.into(),
                    path: e.path.clone(),
                });
            }
        }
        // Unfinished again while it is undone: a crash now is finished at
        // the next open.
        let undoing = self.dir.join(OPEN_DIR).join(id);
        fs::create_dir_all(self.dir.join(OPEN_DIR))?;
        fs::rename(&path, &undoing)?;
        m.state = State::Undoing;
        m.write_durable(&undoing, self.fsync)?;
        self.put_back(&undoing, &m)?;
        m.state = State::Undone;
        m.write(&undoing)?;
        self.finish(&undoing, id)?;
        Ok(m)
    }

    /// Removes finished checkpoints older than `keep_for`, then the oldest
    /// until the kept state is under `cap` bytes. Returns how many went.
    pub fn sweep(&self, keep_for: Duration, cap: u64) -> Result<usize, CheckpointError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis();
        let mut finished: Vec<(Manifest, u64)> = self
            .list()?
            .checkpoints
            .into_iter()
            .filter(|m| m.state.finished())
            .map(|m| {
                let size = snapshot::size_of(&self.dir.join(&m.id).join("blobs"));
                (m, size)
            })
            .collect();
        // Oldest first.
        finished.reverse();
        let mut total: u64 = finished.iter().map(|(_, s)| s).sum();
        let mut removed = 0;
        for (m, size) in finished {
            let old = now.saturating_sub(u128::from(m.time_ms)) > keep_for.as_millis();
            if old || total > cap {
                let path = self.dir.join(&m.id);
                if !path.is_dir() {
                    continue;
                }
                if let Some(_lock) = Lock::try_take(&path)? {
                    fs::remove_dir_all(&path)?;
                    total = total.saturating_sub(size);
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    /// Where checkpoint `id` is: at the top level when finished, under
    /// `.open` while it is not.
    fn checkpoint_dir(&self, id: &str) -> Result<PathBuf, CheckpointError> {
        if valid_id(id) {
            for path in [self.dir.join(id), self.dir.join(OPEN_DIR).join(id)] {
                if path.join(manifest::FILE).exists() {
                    return Ok(path);
                }
            }
        }
        Err(CheckpointError::Unknown(id.into()))
    }

    /// The finished checkpoints' ids (and, in a store from before `.open`,
    /// the unfinished ones).
    fn top_level_ids(&self) -> Result<Vec<String>, CheckpointError> {
        let mut ids = Vec::new();
        for entry in fs::read_dir(&self.dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            // `.open` and other dot-names are the store's own.
            if entry.file_type()?.is_dir() && valid_id(&name) {
                ids.push(name);
            }
        }
        Ok(ids)
    }

    /// Every checkpoint: id and directory.
    fn all(&self) -> Result<Vec<(String, PathBuf)>, CheckpointError> {
        let mut all: Vec<(String, PathBuf)> = self
            .top_level_ids()?
            .into_iter()
            .map(|id| {
                let path = self.dir.join(&id);
                (id, path)
            })
            .collect();
        if let Ok(entries) = fs::read_dir(self.dir.join(OPEN_DIR)) {
            for entry in entries.flatten() {
                let id = entry.file_name().to_string_lossy().into_owned();
                if valid_id(&id) {
                    all.push((id, entry.path()));
                }
            }
        }
        Ok(all)
    }

    /// Restores every entry, innermost (last saved) first.
    fn put_back(&self, path: &Path, m: &Manifest) -> Result<(), CheckpointError> {
        let blobs = path.join("blobs");
        for e in m.entries.iter().rev() {
            snapshot::restore(&e.path, &e.before, &blobs).map_err(|err| {
                io::Error::new(err.kind(), format!("restoring {}: {err}", e.path.display()))
            })?;
        }
        Ok(())
    }
}

/// What [`Checkpoints::list`] found.
#[derive(Debug, Default)]
pub struct Listing {
    /// The readable checkpoints, newest first.
    pub checkpoints: Vec<Manifest>,
    /// Checkpoints whose manifest could not be read, with why.
    pub unreadable: Vec<(String, String)>,
}

/// A change set being recorded. Dropped before [`Pending::landed`]: a set
/// still saving is discarded; one applying is left for the next open to
/// roll back (the lock is released, so it can).
#[derive(Debug)]
pub struct Pending {
    /// The store (for moving the set when it is finished).
    store: Checkpoints,
    /// The set's directory, under `.open` until it is finished.
    path: PathBuf,
    manifest: Manifest,
    _lock: Lock,
    done: bool,
}

impl Pending {
    /// The checkpoint's id.
    pub fn id(&self) -> &str {
        &self.manifest.id
    }

    /// Keeps `path`'s state before the change set touches it: a file or
    /// link as it is, a directory with its whole tree (it will be replaced
    /// or removed). The change must replace a file by `rename` or remove
    /// it, never write into it.
    pub fn save(&mut self, path: &Path) -> Result<(), CheckpointError> {
        self.keep(path, true)
    }

    /// Keeps only a directory's mode (its children are saved one by one);
    /// anything else is kept as [`Pending::save`] keeps it.
    pub fn save_mode(&mut self, path: &Path) -> Result<(), CheckpointError> {
        self.keep(path, false)
    }

    fn keep(&mut self, path: &Path, whole: bool) -> Result<(), CheckpointError> {
        if self.manifest.entries.iter().any(|e| e.path == path) {
            return Ok(());
        }
        let blobs = self.path.join("blobs");
        // Made when first needed: a set that only creates paths keeps none.
        if fs::symlink_metadata(path).is_ok() && !blobs.is_dir() {
            fs::create_dir(&blobs)?;
        }
        let blob = blobs.join(self.manifest.entries.len().to_string());
        let before = snapshot::keep(path, &blob, whole)?;
        self.manifest.entries.push(Entry {
            path: path.to_path_buf(),
            before,
            after: None,
        });
        Ok(())
    }

    /// Whether the store syncs its records to the disk, so that what lands
    /// should be on the disk before it lands too ([`Checkpoints::open_with`]).
    pub fn fsync(&self) -> bool {
        self.store.fsync
    }

    /// Makes the intent durable: from here a crash rolls the change set
    /// back. Call once every path is saved, before the first changes.
    pub fn applying(&mut self) -> Result<(), CheckpointError> {
        self.manifest.state = State::Applying;
        self.manifest.write_durable(&self.path, self.store.fsync)?;
        Ok(())
    }

    /// Marks the change set landed, stamping each path as it now is.
    pub fn landed(mut self) -> Result<String, CheckpointError> {
        for e in &mut self.manifest.entries {
            e.after = Stamp::of(&e.path)?;
        }
        self.manifest.state = State::Landed;
        self.manifest.write(&self.path)?;
        self.done = true;
        self.store.finish(&self.path, &self.manifest.id)?;
        Ok(self.manifest.id.clone())
    }

    /// Puts every saved path back and marks the set rolled back.
    pub fn roll_back(mut self) -> Result<(), CheckpointError> {
        let blobs = self.path.join("blobs");
        for e in self.manifest.entries.iter().rev() {
            snapshot::restore(&e.path, &e.before, &blobs)?;
        }
        self.manifest.state = State::RolledBack;
        self.manifest.write(&self.path)?;
        self.done = true;
        self.store.finish(&self.path, &self.manifest.id)?;
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.done && self.manifest.state == State::Saving {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests;
