//! Directories kept under inotify, so that one unchanged since it was last
//! looked at needs no `lstat`.
//!
//! Every decision about a `git` command checks that no repository appeared
//! in the location or above it: one `lstat` per directory up to `/`, whose
//! [`Stamp`] the caches of "no repository here" and of directory listings are
//! keyed by. On this kind of machine one `lstat` costs 0.6–0.8 µs, about a
//! quarter of a decision. A process that decides again and again (`toolgate
//! mcp`, `serve`) watches those directories instead: while no event arrived
//! for a directory and for every directory above it, and the mount table did
//! not change, its stamp is the one its last `lstat` gave.
//!
//! What makes that sound, and where it is not used:
//! - An entry of a directory cannot be made, removed or renamed, nor the
//!   directory's own attributes changed, without the kernel queueing an event
//!   to every watch on it, in whatever mount or namespace the change was made,
//!   before the changing call returns. The watched events are exactly those
//!   that change what a [`Stamp`] holds (`CREATE`, `DELETE`, `MOVED_FROM`,
//!   `MOVED_TO`, `ATTRIB`, `DELETE_SELF`, `MOVE_SELF`).
//! - A watch follows an inode, not a path: a path can come to name another
//!   directory when a directory above it is renamed or replaced, which is an
//!   event on *that* directory's watch, so a directory counts as unchanged
//!   only when every directory above it is watched and unchanged too; or
//!   when something is mounted over it, which the mount table's own
//!   notification (`POLLPRI` on `/proc/self/mountinfo`) reports, and which
//!   makes every directory changed.
//! - Only local file systems (ext4, xfs, btrfs, tmpfs, f2fs) are watched: on
//!   network and FUSE file systems another machine's changes raise no
//!   events, and on overlayfs a change to a lower layer does not either.
//! - A lost event (the queue overflowed), a watch the kernel dropped, a full
//!   table, or any error makes every directory changed (or the watcher off),
//!   and `lstat` answers as before.
//! - A directory is watched the second time a process looks at it, so a
//!   one-shot `toolgate check` pays nothing. Registering opens it
//!   (`O_PATH`), then takes an `fstatfs`, an `inotify_add_watch` through the
//!   descriptor (`/proc/self/fd/N`) and an `fstat` after the watch is in
//!   place: no change between the first `lstat` and the watch is missed, and
//!   the watch and the stamp are of one directory even when another is
//!   renamed into its path meanwhile (which is an event above it).
//!
//! Files (the git configuration files) are not watched: a write through a
//! shared memory mapping changes a file without an inotify event.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::File;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use foldhash::HashMap;
use rustix::event::{PollFd, PollFlags};
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use toolgate_core::path_text;

use crate::stamp::Stamp;

/// At most this many directories are watched; past it, all are dropped.
const MAX_WATCHED: usize = 1024;

/// Magic numbers (`statfs(2)` `f_type`) of the local file systems watched.
const LOCAL_FILE_SYSTEMS: &[u64] = &[
    0xEF53,      // ext2, ext3, ext4
    0x5846_5342, // xfs
    0x9123_683E, // btrfs
    0x0102_1994, // tmpfs
    0xF2F5_2010, // f2fs
];

/// The events that change what a directory's [`Stamp`] holds. (Added
/// through `/proc/self/fd/N`, a link that must be followed.)
fn watched_events() -> WatchFlags {
    WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::ATTRIB
        | WatchFlags::DELETE_SELF
        | WatchFlags::MOVE_SELF
        | WatchFlags::ONLYDIR
}

/// The process-wide watcher.
pub(crate) static DIR_WATCH: DirWatch = DirWatch::new();

/// How many stamps were answered from a watch (for tests and benchmarks).
static SERVED: AtomicU64 = AtomicU64::new(0);

/// Directories under inotify; see the module documentation.
pub(crate) struct DirWatch {
    state: Mutex<State>,
}

enum State {
    /// Not started yet: the directories looked at once so far (a process
    /// that never looks at one twice never starts the watch).
    Idle(Option<HashSet<OsString>>),
    /// Started and working.
    On(Box<Watching>),
    /// Could not start (no inotify, no `/proc`): `lstat` answers.
    Off,
}

struct Watching {
    inotify: OwnedFd,
    /// `/proc/self/mountinfo`, open for its change notification.
    mounts: File,
    /// By path: the watch and the stamp of the last `lstat`.
    dirs: HashMap<OsString, Watched>,
    /// Watch descriptor to path.
    paths: HashMap<i32, OsString>,
    /// Directories looked at once (watched when looked at again).
    seen: HashSet<OsString>,
    /// Directories found not watchable (not a local file system, no watch
    /// left); looked at again after the mount table changes.
    unwatchable: HashSet<OsString>,
    /// How many times events were taken in: an `lstat` made before the
    /// count moved may predate an event already taken in.
    taken: u64,
}

struct Watched {
    wd: i32,
    stamp: Stamp,
    /// No event since `stamp` was taken.
    unchanged: bool,
}

impl DirWatch {
    const fn new() -> Self {
        DirWatch {
            state: Mutex::new(State::Idle(None)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes in the events queued since the last call: once per analysis,
    /// before the first [`DirWatch::unchanged`].
    pub(crate) fn sync(&self) {
        let mut state = self.lock();
        let State::On(w) = &mut *state else {
            return;
        };
        if w.sync().is_err() {
            tracing::debug!("directory watch off: reading its events failed");
            *state = State::Off;
        }
    }

    /// The stamp of `dir` as its last `lstat` gave it, when `dir` and every
    /// directory above it are watched and no event arrived for any of them
    /// since (as of the last [`DirWatch::sync`]). Otherwise the count of
    /// event batches taken in so far, to give [`DirWatch::saw_dir`] with the
    /// `lstat` made next (another analysis may take in newer events
    /// meanwhile).
    pub(crate) fn unchanged(&self, dir: &Path) -> Result<Stamp, u64> {
        let state = self.lock();
        let State::On(w) = &*state else {
            return Err(0);
        };
        let stamp = w.answer(dir).ok_or(w.taken)?;
        SERVED.fetch_add(1, Ordering::Relaxed);
        Ok(stamp)
    }

    /// After an `lstat` of `path` (plain and absolute) that found a directory
    /// with `stamp`, made after [`DirWatch::unchanged`] gave `generation`:
    /// watch it (the second time), or mark it unchanged from `stamp` on when
    /// its watch is still on the same directory and no events were taken in
    /// since (another analysis may have taken in one newer than the `lstat`).
    pub(crate) fn saw_dir(&self, path: &Path, stamp: Stamp, generation: u64) {
        if !path_text::is_plain_absolute(path.as_os_str().as_encoded_bytes()) {
            return;
        }
        let mut state = self.lock();
        if let State::Idle(seen) = &mut *state {
            let seen = seen.get_or_insert_with(HashSet::new);
            if seen.insert(path.as_os_str().to_owned()) {
                if seen.len() > MAX_WATCHED {
                    seen.clear();
                }
                return;
            }
            // Looked at twice: this process decides again and again.
            *state = match Watching::start() {
                Ok(mut w) => {
                    w.watch(path);
                    State::On(Box::new(w))
                }
                Err(e) => {
                    tracing::debug!("directory watch off: {e}");
                    State::Off
                }
            };
            return;
        }
        let State::On(w) = &mut *state else {
            return;
        };
        let current = w.taken == generation;
        if let Some(known) = w.dirs.get_mut(path.as_os_str()) {
            if !current {
                return;
            }
            if known.stamp.same_inode(&stamp) {
                // The watch has been on this directory all along: any change
                // after this `lstat` is an event the next sync takes in.
                known.stamp = stamp;
                known.unchanged = true;
                return;
            }
            w.forget(path);
        }
        if w.unwatchable.contains(path.as_os_str()) {
            return;
        }
        if w.seen.insert(path.as_os_str().to_owned()) {
            if w.seen.len() > MAX_WATCHED {
                w.seen.clear();
            }
            return;
        }
        w.seen.remove(path.as_os_str());
        if w.dirs.len() >= MAX_WATCHED {
            w.forget_all();
        }
        w.watch(path);
    }

    /// After an `lstat` of `path` that found no directory.
    pub(crate) fn saw_other(&self, path: &Path) {
        if let State::On(w) = &mut *self.lock() {
            if w.dirs.contains_key(path.as_os_str()) {
                w.forget(path);
            }
        }
    }
}

impl Watching {
    fn start() -> std::io::Result<Watching> {
        let inotify = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC)?;
        // Changes are reported against the table as it is when opened.
        let mounts = File::open("/proc/self/mountinfo")?;
        Ok(Watching {
            inotify,
            mounts,
            dirs: HashMap::default(),
            paths: HashMap::default(),
            seen: HashSet::new(),
            unwatchable: HashSet::new(),
            taken: 0,
        })
    }

    /// The stamp of `dir` when it and every directory above it are watched
    /// and unchanged.
    fn answer(&self, dir: &Path) -> Option<Stamp> {
        let stamp = self.unchanged_stamp(dir)?;
        let mut above = path_text::parent(dir);
        while let Some(d) = above {
            self.unchanged_stamp(d)?;
            above = path_text::parent(d);
        }
        Some(stamp)
    }

    fn unchanged_stamp(&self, dir: &Path) -> Option<Stamp> {
        self.dirs
            .get(dir.as_os_str())
            .filter(|w| w.unchanged)
            .map(|w| w.stamp)
    }

    fn sync(&mut self) -> std::io::Result<()> {
        let mut fds = [
            PollFd::new(&self.inotify, PollFlags::IN),
            PollFd::new(&self.mounts, PollFlags::PRI),
        ];
        rustix::event::poll(&mut fds, Some(&rustix::event::Timespec::default()))?;
        let events = fds[0].revents();
        let mounts = fds[1].revents();
        if mounts.intersects(PollFlags::PRI | PollFlags::ERR) {
            // Something was mounted or unmounted: any path may name another
            // directory now. (The kernel re-arms the notification as it
            // reports it.)
            self.mark_all_changed();
            self.unwatchable.clear();
            self.taken += 1;
        }
        if events.intersects(PollFlags::IN | PollFlags::ERR) {
            self.read_events()?;
            self.taken += 1;
        }
        Ok(())
    }

    fn read_events(&mut self) -> std::io::Result<()> {
        let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
        let mut reader = inotify::Reader::new(&self.inotify, &mut buf);
        let mut changed: Vec<i32> = Vec::new();
        let mut dropped: Vec<i32> = Vec::new();
        let mut all = false;
        loop {
            match reader.next() {
                Ok(event) => {
                    let flags = event.events();
                    if flags.contains(ReadFlags::QUEUE_OVERFLOW) || event.wd() < 0 {
                        all = true;
                    } else if flags.intersects(ReadFlags::IGNORED | ReadFlags::UNMOUNT) {
                        dropped.push(event.wd());
                    } else {
                        changed.push(event.wd());
                    }
                }
                Err(rustix::io::Errno::WOULDBLOCK) => break,
                Err(e) => return Err(e.into()),
            }
        }
        // A changed directory may have had a directory below it renamed or
        // replaced, which moves what every path below it names: all of them
        // are changed too. So is a directory whose watch the kernel dropped
        // (gone, its file system unmounted), which nothing watches any more.
        let mut roots: Vec<OsString> = Vec::new();
        for wd in changed.iter().chain(&dropped) {
            if let Some(path) = self.paths.get(wd) {
                if !roots.contains(path) {
                    roots.push(path.clone());
                }
            }
        }
        for wd in dropped {
            if let Some(path) = self.paths.remove(&wd) {
                self.dirs.remove(&path);
            }
        }
        if all || roots.len() > 64 {
            self.mark_all_changed();
        } else {
            for root in &roots {
                self.mark_changed_from(Path::new(root));
            }
        }
        Ok(())
    }

    /// Marks `top` and every watched directory below it changed.
    fn mark_changed_from(&mut self, top: &Path) {
        for (path, w) in self.dirs.iter_mut() {
            if path_text::starts_with(Path::new(path), top) {
                w.unchanged = false;
            }
        }
    }

    fn mark_all_changed(&mut self) {
        for w in self.dirs.values_mut() {
            w.unchanged = false;
        }
    }

    /// Watches `path` and every directory above it not watched yet (a
    /// directory is answered for only while all above it are unchanged, and
    /// git's discovery stops looking upwards at the first repository), from
    /// the top down: once a directory is watched, a rename above it that
    /// moves what the path below names is an event.
    fn watch(&mut self, path: &Path) {
        let mut chain = Vec::new();
        let mut at = Some(path);
        while let Some(d) = at {
            chain.push(d);
            at = path_text::parent(d);
        }
        for d in chain.into_iter().rev() {
            if d == path || !self.dirs.contains_key(d.as_os_str()) {
                self.watch_one(d);
            }
        }
    }

    /// Watches one directory: opened first, then watched and stamped through
    /// that descriptor, so the watch, the file-system check and the stamp
    /// are all of the one directory the path named when opened (looked up
    /// by path again in between, the path could name another directory
    /// renamed into its place, and the watch would stay on one while the
    /// stamp, and every later `lstat` that matches it, is of the other); the
    /// watch before the stamp, so no change after the watch goes unseen.
    fn watch_one(&mut self, path: &Path) {
        use rustix::fs::{Mode, OFlags};
        let Ok(dir) = rustix::fs::open(
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) else {
            return;
        };
        let local = rustix::fs::fstatfs(&dir)
            .is_ok_and(|s| LOCAL_FILE_SYSTEMS.contains(&(s.f_type as u64)));
        // Through the descriptor's own link, which names the opened
        // directory whatever its path names now.
        let wd = if local {
            let link = format!("/proc/self/fd/{}", dir.as_raw_fd());
            inotify::add_watch(&self.inotify, link, watched_events()).ok()
        } else {
            None
        };
        let Some(wd) = wd else {
            if self.unwatchable.len() >= MAX_WATCHED {
                self.unwatchable.clear();
            }
            self.unwatchable.insert(path.as_os_str().to_owned());
            return;
        };
        let stamp = File::from(dir)
            .metadata()
            .ok()
            .filter(std::fs::Metadata::is_dir)
            .map(|m| Stamp::of(&m));
        let Some(stamp) = stamp else {
            let _ = inotify::remove_watch(&self.inotify, wd);
            return;
        };
        // Two paths can name one directory (a bind mount): one watch, and
        // its events reach the path registered last only. Watch neither.
        if let Some(other) = self.paths.get(&wd).cloned() {
            if other != path.as_os_str() {
                self.dirs.remove(&other);
                self.paths.remove(&wd);
                let _ = inotify::remove_watch(&self.inotify, wd);
                return;
            }
        }
        // What was seen below before this watch existed may have moved
        // unseen: looked at afresh.
        self.mark_changed_from(path);
        self.paths.insert(wd, path.as_os_str().to_owned());
        self.dirs.insert(
            path.as_os_str().to_owned(),
            Watched {
                wd,
                stamp,
                unchanged: true,
            },
        );
    }

    fn forget(&mut self, path: &Path) {
        if let Some(w) = self.dirs.remove(path.as_os_str()) {
            self.paths.remove(&w.wd);
            let _ = inotify::remove_watch(&self.inotify, w.wd);
        }
    }

    fn forget_all(&mut self) {
        for (wd, _) in self.paths.drain() {
            let _ = inotify::remove_watch(&self.inotify, wd);
        }
        self.dirs.clear();
    }
}

/// Whether the watch would answer for `dir` now, without taking in new
/// events.
#[cfg(any(test, feature = "test-util"))]
pub(crate) fn would_answer(dir: &Path) -> bool {
    match &*DIR_WATCH.lock() {
        State::On(w) => w.answer(dir).is_some(),
        _ => false,
    }
}

/// How many directory stamps were answered from a watch so far in this
/// process.
#[cfg(any(test, feature = "test-util"))]
pub(crate) fn served() -> u64 {
    SERVED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    impl DirWatch {
        /// The count [`DirWatch::unchanged`] gives when it does not answer.
        fn taken(&self) -> u64 {
            match &*self.lock() {
                State::On(w) => w.taken,
                _ => 0,
            }
        }

        /// Whether `dir` itself is watched and marked unchanged.
        fn marked_unchanged(&self, dir: &Path) -> bool {
            match &*self.lock() {
                State::On(w) => w.unchanged_stamp(dir).is_some(),
                _ => false,
            }
        }
    }

    fn stamp(p: &Path) -> Stamp {
        Stamp::of(&std::fs::symlink_metadata(p).unwrap())
    }

    #[test]
    fn an_lstat_older_than_the_events_taken_in_does_not_mark_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::fs::canonicalize(dir.path()).unwrap();
        let watch = DirWatch::new();
        // Looked at twice: watched.
        watch.saw_dir(&path, stamp(&path), watch.taken());
        assert!(
            !watch.marked_unchanged(&path),
            "watched from the second look"
        );
        watch.saw_dir(&path, stamp(&path), watch.taken());
        assert!(watch.marked_unchanged(&path));
        // One analysis takes its `lstat`; then the directory changes and
        // another analysis takes the event in.
        let generation = watch.taken();
        let old = stamp(&path);
        std::fs::write(path.join("new"), "").unwrap();
        watch.sync();
        assert!(!watch.marked_unchanged(&path));
        // The first analysis reports its older `lstat`: it must not count.
        watch.saw_dir(&path, old, generation);
        assert!(!watch.marked_unchanged(&path));
        // An `lstat` made after the events were taken in does.
        let generation = watch.taken();
        watch.saw_dir(&path, stamp(&path), generation);
        assert!(watch.marked_unchanged(&path));
    }

    #[test]
    fn a_directory_gone_is_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::fs::canonicalize(dir.path()).unwrap().join("d");
        std::fs::create_dir(&path).unwrap();
        let watch = DirWatch::new();
        watch.saw_dir(&path, stamp(&path), watch.taken());
        watch.saw_dir(&path, stamp(&path), watch.taken());
        assert!(watch.marked_unchanged(&path));
        std::fs::remove_dir(&path).unwrap();
        watch.sync();
        assert!(!watch.marked_unchanged(&path));
        // A new directory at the path is another inode: looked at afresh.
        std::fs::create_dir(&path).unwrap();
        watch.sync();
        watch.saw_dir(&path, stamp(&path), watch.taken());
        assert!(!watch.marked_unchanged(&path));
    }
}
