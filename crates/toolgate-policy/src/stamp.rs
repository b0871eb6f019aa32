//! The identity of a file or directory as read, for the process-wide caches
//! of what was found in it (parsed config files, git indexes, directories
//! without a repository).
//!
//! A stamp only stands for a state when any later change must give it
//! another stamp. A rewritten file (git renames a new one into place) has
//! another inode, and any change sets the ctime to the current time, which
//! no program can set back. But the kernel takes that time from a clock that
//! ticks every few milliseconds: two changes in one tick leave the same
//! ctime. So an entry is cached only once it is [`Stamp::settled`], its last
//! change a full second before it was looked at — what git calls the "racily
//! clean" rule for its index.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use foldhash::HashMap;

/// Device, inode, size, mtime and ctime of one file or directory.
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    pub(crate) fn of(m: &std::fs::Metadata) -> Self {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// Whether both stamps are of the same file or directory (device and
    /// inode), whatever changed in it.
    pub(crate) fn same_inode(&self, other: &Stamp) -> bool {
        (self.dev, self.ino) == (other.dev, other.ino)
    }

    /// Whether the last change is at least a second older than now, so any
    /// change from now on gives another ctime and what was read under this
    /// stamp may be cached. A clock set back by more than that (only root
    /// can) could make a later change repeat an old ctime.
    pub(crate) fn settled(&self) -> bool {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        self.settled_at(now)
    }

    /// [`Stamp::settled`] at `now`, in seconds since the epoch. In whole
    /// seconds, `ctime + 2 <= now` means at least one full second between.
    fn settled_at(&self, now: i64) -> bool {
        self.ctime.0.saturating_add(2) <= now
    }
}

/// A process-wide cache of what was found at a path, under the stamp it
/// had: the one place the [`Stamp::settled`] rule and the size bound live.
pub(crate) struct StampCache<V> {
    map: OnceLock<Mutex<HashMap<OsString, (Stamp, V)>>>,
    capacity: usize,
}

impl<V: Clone> StampCache<V> {
    /// An empty cache of at most `capacity` entries (all dropped when full).
    pub(crate) const fn new(capacity: usize) -> Self {
        StampCache {
            map: OnceLock::new(),
            capacity,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<OsString, (Stamp, V)>> {
        self.map
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// What was stored for `path`, with the stamp it was stored under.
    pub(crate) fn get(&self, path: &Path) -> Option<(Stamp, V)> {
        self.lock().get(path.as_os_str()).cloned()
    }

    /// What was stored for `path` under exactly `stamp`.
    pub(crate) fn get_at(&self, path: &Path, stamp: Stamp) -> Option<V> {
        self.lock()
            .get(path.as_os_str())
            .filter(|(s, _)| *s == stamp)
            .map(|(_, v)| v.clone())
    }

    /// Stores `value` as found at `path` under `stamp`, taken before it was
    /// read; nothing is stored when the stamp is not settled.
    pub(crate) fn insert(&self, path: &Path, stamp: Stamp, value: V) {
        if !stamp.settled() {
            return;
        }
        let mut map = self.lock();
        if map.len() >= self.capacity && !map.contains_key(path.as_os_str()) {
            map.clear();
        }
        map.insert(path.as_os_str().to_owned(), (stamp, value));
    }
}

/// Waits (at most three seconds) until what is at `path` is settled, for
/// tests and benchmarks of the caches
/// ([`crate::test_util::wait_until_settled`]).
#[cfg(any(test, feature = "test-util"))]
pub(crate) fn wait_until_settled(path: &std::path::Path) {
    for _ in 0..30 {
        if std::fs::metadata(path).is_ok_and(|m| Stamp::of(&m).settled()) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("{} did not settle", path.display());
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_file_changed_just_now_is_not_settled() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, "x").unwrap();
        assert!(!Stamp::of(&std::fs::metadata(&f).unwrap()).settled());
        // Setting the mtime back is a change too: the ctime stays now.
        let file = std::fs::File::options().write(true).open(&f).unwrap();
        file.set_modified(UNIX_EPOCH).unwrap();
        let stamp = Stamp::of(&std::fs::metadata(&f).unwrap());
        assert_eq!(stamp.mtime.0, 0);
        assert!(!stamp.settled(), "{stamp:?}");
    }

    #[test]
    fn settled_means_a_full_second_between_the_change_and_now() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = Stamp::of(&std::fs::metadata(dir.path()).unwrap());
        let changed = stamp.ctime.0;
        assert!(!stamp.settled_at(changed));
        // One second later the change may have been 1.999 s or 0.001 s ago.
        assert!(!stamp.settled_at(changed + 1));
        assert!(stamp.settled_at(changed + 2));
    }

    #[test]
    fn any_change_gives_another_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let before = Stamp::of(&std::fs::metadata(dir.path()).unwrap());
        std::fs::write(dir.path().join("HEAD"), "").unwrap();
        let after = Stamp::of(&std::fs::metadata(dir.path()).unwrap());
        assert_ne!(before, after);
    }
}
