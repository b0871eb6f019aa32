//! Directory listings remembered by stamp, so that asking whether a name
//! exists in a directory asked about before costs no system call.
//!
//! A command's plain words (`cargo test -p core`) are each `lstat`ed in its
//! directory: any of them could name a symlink out of the location or a hard
//! link to a key. Most name nothing. While a directory's [`Stamp`] is the same,
//! so are its entries: creating, removing or renaming one changes its mtime
//! and ctime, and no program can set a ctime. So once a directory has been
//! seen twice under one settled stamp (a one-shot `toolgate check` never pays
//! for a listing it would use once), its names are read and kept, and a name
//! not among them is missing without an `lstat`. Every name that is there is
//! still `lstat`ed.
//!
//! The listing is only trusted where names are compared byte for byte: on a
//! case-folding directory (`chattr +F`) or a file system that may fold case
//! (vfat, ntfs, cifs, zfs, xfs with `ascii-ci`…), `Core` would find `core`,
//! so only ext2/3/4, tmpfs and btrfs directories without the casefold flag are
//! listed; anywhere else every name is `lstat`ed as before.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use foldhash::HashSet;

use crate::stamp::{Stamp, StampCache};

/// Most names a remembered listing holds; a larger directory is not listed.
const MAX_NAMES: usize = 4096;
/// Most bytes of names a remembered listing holds.
const MAX_NAME_BYTES: usize = 64 * 1024;
/// Most directories remembered, process-wide.
const MAX_DIRECTORIES: usize = 256;

/// `FS_CASEFOLD_FL` (`linux/fs.h`): names in this directory match without case.
const FS_CASEFOLD_FL: u32 = 0x4000_0000;

/// `statfs.f_type` of the file systems whose names are compared byte for byte
/// unless a directory carries [`FS_CASEFOLD_FL`] (`linux/magic.h`).
const BYTEWISE_FILE_SYSTEMS: &[i64] = &[
    0xEF53,      // ext2, ext3, ext4
    0x0102_1994, // tmpfs
    0x9123_683E, // btrfs (no case folding at all)
];

/// What is remembered of one directory under one stamp.
#[derive(Clone)]
enum Seen {
    /// Seen once: listed when seen again.
    Once,
    /// Its names.
    Listed(Arc<HashSet<Box<[u8]>>>),
    /// Not to be listed: too large, unreadable, or names not compared byte
    /// for byte.
    Unlisted,
}

static LISTINGS: StampCache<Seen> = StampCache::new(MAX_DIRECTORIES);

/// Whether `name` is known to be missing from the directory `dir`, whose
/// `lstat` just gave `stamp`. `false` means "not known": `lstat` it.
pub(crate) fn lacks(dir: &Path, stamp: Stamp, name: &OsStr) -> bool {
    match LISTINGS.get_at(dir, stamp) {
        Some(Seen::Listed(names)) => !names.contains(name.as_bytes()),
        Some(Seen::Once) => {
            let seen = match list(dir, stamp) {
                Some(names) => Seen::Listed(Arc::new(names)),
                None => Seen::Unlisted,
            };
            LISTINGS.insert(dir, stamp, seen.clone());
            matches!(seen, Seen::Listed(names) if !names.contains(name.as_bytes()))
        }
        Some(Seen::Unlisted) => false,
        // `insert` keeps nothing for a stamp that is not settled.
        None => {
            LISTINGS.insert(dir, stamp, Seen::Once);
            false
        }
    }
}

/// Whether `dir` was found not to be listable (under whatever stamp): then
/// its own `lstat` is not worth making for a listing.
pub(crate) fn unlisted(dir: &Path) -> bool {
    matches!(LISTINGS.get(dir), Some((_, Seen::Unlisted)))
}

/// The names in `dir`, read from a descriptor whose own stamp is `stamp`
/// (what is read is of the directory that was judged), when they may be
/// trusted.
fn list(dir: &Path, stamp: Stamp) -> Option<HashSet<Box<[u8]>>> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let file = std::fs::File::from(fd);
    if Stamp::of(&file.metadata().ok()?) != stamp {
        return None;
    }
    if !names_compared_bytewise(&file) {
        return None;
    }
    let mut names = HashSet::default();
    let mut bytes = 0;
    for entry in rustix::fs::Dir::read_from(&file).ok()? {
        let name = entry.ok()?.file_name().to_bytes().to_vec();
        if name == b"." || name == b".." {
            continue;
        }
        bytes += name.len();
        if names.len() >= MAX_NAMES || bytes > MAX_NAME_BYTES {
            return None;
        }
        names.insert(name.into_boxed_slice());
    }
    Some(names)
}

/// Whether names in the directory open as `file` match only byte for byte.
fn names_compared_bytewise(file: &std::fs::File) -> bool {
    let Ok(fs) = rustix::fs::fstatfs(file) else {
        return false;
    };
    #[allow(clippy::unnecessary_cast)] // `f_type`'s width differs by target.
    let kind = fs.f_type as i64;
    BYTEWISE_FILE_SYSTEMS.contains(&kind)
        && rustix::fs::ioctl_getflags(file).is_ok_and(|f| f.bits() & FS_CASEFOLD_FL == 0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::stamp::wait_until_settled;

    fn stamp(dir: &Path) -> Stamp {
        Stamp::of(&std::fs::symlink_metadata(dir).unwrap())
    }

    /// Whether `dir` may be listed: on the file systems that compare names
    /// byte for byte it must be (else the tests below would prove nothing).
    fn listable(dir: &Path) -> bool {
        let file = std::fs::File::open(dir).unwrap();
        #[allow(clippy::unnecessary_cast)]
        let kind = rustix::fs::fstatfs(&file).unwrap().f_type as i64;
        let bytewise = names_compared_bytewise(&file);
        if BYTEWISE_FILE_SYSTEMS.contains(&kind) {
            assert!(bytewise, "{} is not casefolded", dir.display());
        }
        bytewise
    }

    #[test]
    fn a_directory_is_listed_the_second_time_it_is_seen_settled() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("core"), "").unwrap();
        wait_until_settled(dir.path());
        if !listable(dir.path()) {
            return;
        }
        let s = stamp(dir.path());
        // First sight: not known, so the caller lstats.
        assert!(!lacks(dir.path(), s, OsStr::new("test")));
        // Second: listed.
        assert!(lacks(dir.path(), s, OsStr::new("test")));
        assert!(!lacks(dir.path(), s, OsStr::new("core")));
        assert!(lacks(dir.path(), s, OsStr::new("Core")));
    }

    #[test]
    fn a_name_created_after_the_listing_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        wait_until_settled(dir.path());
        if !listable(dir.path()) {
            return;
        }
        let s = stamp(dir.path());
        lacks(dir.path(), s, OsStr::new("core"));
        assert!(lacks(dir.path(), s, OsStr::new("core")));
        // A link planted where the listing said nothing was: the directory's
        // stamp changes, and the old listing is never asked again.
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("core")).unwrap();
        let now = stamp(dir.path());
        assert_ne!(now, s);
        assert!(!lacks(dir.path(), now, OsStr::new("core")));
        // Not settled yet: still not known after many looks.
        for _ in 0..3 {
            assert!(!lacks(dir.path(), now, OsStr::new("core")));
        }
    }

    #[test]
    fn a_directory_changed_just_now_is_never_listed() {
        let dir = tempfile::tempdir().unwrap();
        let s = stamp(dir.path());
        for _ in 0..3 {
            assert!(!lacks(dir.path(), s, OsStr::new("missing")));
        }
    }

    #[test]
    fn a_stamp_of_another_directory_lists_nothing() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        wait_until_settled(a.path());
        wait_until_settled(b.path());
        // The descriptor's own stamp must be the one judged.
        assert!(list(a.path(), stamp(b.path())).is_none());
        if listable(a.path()) {
            assert!(list(a.path(), stamp(a.path())).is_some());
        }
    }

    #[test]
    fn a_directory_too_large_is_not_listed() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..=MAX_NAMES {
            std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        wait_until_settled(dir.path());
        assert!(list(dir.path(), stamp(dir.path())).is_none());
    }

    #[test]
    fn only_file_systems_that_compare_names_bytewise_are_listed() {
        // /proc is none of them.
        assert!(!names_compared_bytewise(
            &std::fs::File::open("/proc/self").unwrap()
        ));
    }
}
