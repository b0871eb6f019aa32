//! A staging run's own directory, and the sweep of those whose owner is
//! gone.
//!
//! Each run's directory (`run-…` under the staging base) is locked with
//! `flock` by the process that made it, for as long as that process holds
//! its [`RunDir`]: the kernel drops the lock when the process ends, however
//! it ends. A `run-…` directory whose lock can be taken was therefore left
//! by a process that is gone — killed before it could remove what it
//! staged — and [`sweep`] removes it, with the layers it kept beside a root
//! on another file system (named in its `outside` file). A directory that
//! a live process holds is never touched.
//!
//! A run directory is made under a temporary name (`.new-run-…`), locked,
//! and only then renamed to `run-…`, so a `run-…` directory is locked from
//! the moment it can be seen. A `.new-…` directory left by a process killed
//! within those few system calls is empty; it is removed once it is
//! [`ABANDONED_NEW`] old and unlocked.
//!
//! Making directories waits on the file system's journal (milliseconds
//! each on a busy disk), so a run for one root takes a spare made ahead
//! of time ([`make_spare`], by the previous run's sweep, while its command
//! ran): `.spare` holds an empty `r0/upper` and `r0/work`, and is claimed
//! by locking it and renaming it to the run's name, one `rename` instead
//! of four `mkdir`s.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The prefix of a run directory's name.
pub(crate) const RUN_PREFIX: &str = "run-";
/// The prefix of a run directory not yet locked.
const NEW_PREFIX: &str = ".new-";
/// The prefix of a layer kept beside a root on another file system
/// (`.toolgate-stage-run-…-rN` in the root's parent).
pub(crate) const OUTSIDE_PREFIX: &str = ".toolgate-stage-";
/// The file in a run directory that names its layers kept outside it, one
/// path a line, written before they are made.
const OUTSIDE_FILE: &str = "outside";
/// How old (seconds) an unlocked `.new-…` directory must be to be removed.
const ABANDONED_NEW: i64 = 60;
/// The spare run directory: an empty first layer, ready to be claimed.
const SPARE: &str = ".spare";

/// A run directory and the lock that says its owner is alive.
#[derive(Debug)]
pub(crate) struct RunDir {
    path: PathBuf,
    /// Open on the directory, holding its `flock` until dropped.
    _lock: File,
}

impl RunDir {
    /// Makes `base/name` (`name` starts with [`RUN_PREFIX`]) locked by this
    /// process.
    pub(crate) fn create(base: &Path, name: &str) -> io::Result<RunDir> {
        let new = base.join(format!("{NEW_PREFIX}{name}"));
        std::fs::create_dir(&new)?;
        let made = (|| {
            let lock = File::open(&new)?;
            if !try_lock(&lock)? {
                return Err(io::Error::other(
                    "a new run directory is locked by another process",
                ));
            }
            let path = base.join(name);
            std::fs::rename(&new, &path)?;
            Ok(RunDir { path, _lock: lock })
        })();
        if made.is_err() {
            let _ = std::fs::remove_dir(&new);
        }
        made
    }

    /// Claims the spare made by [`make_spare`] as `base/name`, with its
    /// empty first layer (`r0/upper`, `r0/work`); `None` when there is
    /// none (or another process claims it first).
    pub(crate) fn claim_spare(base: &Path, name: &str) -> Option<RunDir> {
        let spare = base.join(SPARE);
        let lock = File::open(&spare).ok()?;
        if !try_lock(&lock).ok()? {
            return None;
        }
        let path = base.join(name);
        // The one that renames it has it; a loser's rename finds nothing.
        std::fs::rename(&spare, &path).ok()?;
        Some(RunDir { path, _lock: lock })
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Records the layers kept outside the run directory (before they are
    /// made), so that a sweep finds them if this process is killed.
    pub(crate) fn record_outside(&self, dirs: &[PathBuf]) -> io::Result<()> {
        let mut text = Vec::new();
        for d in dirs {
            text.extend_from_slice(d.as_os_str().as_bytes());
            text.push(b'\n');
        }
        std::fs::write(self.path.join(OUTSIDE_FILE), text)
    }
}

/// Makes the spare run directory under `base` when there is none: made
/// under a `.new-` name and renamed into place only if no spare exists by
/// then, so a spare is always whole.
pub(crate) fn make_spare(base: &Path, name: &str) {
    let spare = base.join(SPARE);
    if std::fs::symlink_metadata(&spare).is_ok() {
        return;
    }
    let new = base.join(format!("{NEW_PREFIX}{name}"));
    let made = std::fs::create_dir(&new)
        .and_then(|()| std::fs::create_dir_all(new.join("r0/upper")))
        .and_then(|()| std::fs::create_dir(new.join("r0/work")))
        .and_then(|()| rename_no_replace(&new, &spare));
    if made.is_err() {
        let _ = std::fs::remove_dir_all(&new);
    }
}

/// `rename` that fails rather than replace what is at `to`.
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|_| io::ErrorKind::InvalidInput)
    };
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: valid C strings; flags only.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Takes the exclusive `flock` of `f` without waiting: `false` when another
/// open file holds it.
fn try_lock(f: &File) -> io::Result<bool> {
    // SAFETY: a valid open descriptor; flags only.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Removes every run directory under `base` whose owner is gone (its lock
/// can be taken), with the layers it kept outside; `remove` removes one
/// tree. Returns the run directories removed. Errors only skip an entry.
pub(crate) fn sweep(base: &Path, remove: impl Fn(&Path)) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let now = crate::now_nanos() / 1_000_000_000;
    let mut swept = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.as_bytes();
        let new = name.starts_with(NEW_PREFIX.as_bytes());
        if !new && !name.starts_with(RUN_PREFIX.as_bytes()) {
            continue;
        }
        let path = e.path();
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(lock) = File::open(&path) else {
            continue;
        };
        if !try_lock(&lock).unwrap_or(false) {
            continue;
        }
        if new
            && lock
                .metadata()
                .is_ok_and(|m| i128::from(m.ctime()) + i128::from(ABANDONED_NEW) > now)
        {
            // Perhaps being made right now, before its maker locked it.
            continue;
        }
        if let Ok(text) = std::fs::read(path.join(OUTSIDE_FILE)) {
            for line in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                let dir = PathBuf::from(std::ffi::OsStr::from_bytes(line));
                // Only what this run made: a layer named for it.
                let ours = dir.file_name().is_some_and(|n| {
                    let n = n.as_bytes();
                    n.starts_with(OUTSIDE_PREFIX.as_bytes())
                        && n[OUTSIDE_PREFIX.len()..].starts_with(name)
                });
                if ours && dir.is_absolute() {
                    remove(&dir);
                }
            }
        }
        remove(&path);
        tracing::info!(dir = %path.display(), "removed a staging directory its process left behind");
        swept.push(path);
        drop(lock);
    }
    swept
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn remove(p: &Path) {
        let _ = std::fs::remove_dir_all(p);
    }

    #[test]
    fn a_held_run_directory_is_kept_and_an_unheld_one_swept_with_its_outside_layers() {
        let base = tempfile::tempdir().unwrap();
        let beside = tempfile::tempdir().unwrap();
        let live = RunDir::create(base.path(), "run-1-0-1").unwrap();
        std::fs::write(live.path().join("f"), "x").unwrap();
        // A run whose process is gone: its directory is unlocked.
        let dead = RunDir::create(base.path(), "run-2-0-2").unwrap();
        let outside = beside.path().join(".toolgate-stage-run-2-0-2-r0");
        let not_ours = beside.path().join("precious");
        std::fs::create_dir_all(outside.join("upper")).unwrap();
        std::fs::create_dir_all(&not_ours).unwrap();
        dead.record_outside(&[outside.clone(), not_ours.clone()])
            .unwrap();
        let dead_path = dead.path().to_path_buf();
        drop(dead);
        let swept = sweep(base.path(), remove);
        assert_eq!(swept, vec![dead_path.clone()]);
        assert!(!dead_path.exists());
        assert!(!outside.exists(), "its layer beside a root is removed");
        assert!(not_ours.exists(), "a path not named for the run is left");
        assert!(
            live.path().join("f").exists(),
            "a held run is never touched"
        );
        // A spare is claimed whole, once, and made again.
        make_spare(base.path(), "spare-1");
        assert!(
            sweep(base.path(), remove).is_empty(),
            "a spare is not swept"
        );
        let claimed = RunDir::claim_spare(base.path(), "run-4-0-4").unwrap();
        assert!(claimed.path().join("r0/upper").is_dir());
        assert!(claimed.path().join("r0/work").is_dir());
        assert!(RunDir::claim_spare(base.path(), "run-5-0-5").is_none());
        make_spare(base.path(), "spare-2");
        assert!(base.path().join(".spare/r0/upper").is_dir());
        // A directory being made (not yet locked) is left while it is new.
        std::fs::create_dir(base.path().join(".new-run-3-0-3")).unwrap();
        assert!(sweep(base.path(), remove).is_empty());
        assert!(base.path().join(".new-run-3-0-3").exists());
    }
}
