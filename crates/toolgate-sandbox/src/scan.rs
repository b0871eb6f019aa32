//! The credential entries of a tree, found by walking it: what the sandbox
//! masks inside the location and the visible parts of the home directory.
//! Entries are judged by the path facts' one matcher
//! ([`toolgate_paths::credential::is_credential_entry`]), so a name the
//! policy treats as a secret (`.env`, `.ENV`, `id_ed25519`, `.npmrc`, a
//! `.ssh` directory…) is masked here too, and so is a hard link to a known
//! credential file. Walks are cached per directory by stamp.

use std::collections::{HashMap, HashSet};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use toolgate_paths::credential;
use toolgate_paths::home::is_package_tree;

/// At most this many directory entries are looked at per tree.
pub const SCAN_LIMIT: usize = 200_000;

/// Files by device and inode.
pub(crate) type Inodes = HashSet<(u64, u64)>;

/// What one walk found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// Paths to mask.
    pub masked: Vec<PathBuf>,
    /// The walk stopped at [`SCAN_LIMIT`].
    pub truncated: bool,
    /// Directories read this time (the others came from the cache).
    pub dirs_read: usize,
}

/// A directory's identity and last change: when equal, its entries are the
/// same names of the same kinds (creating, removing or renaming an entry
/// changes the directory's modification and change times; the change time
/// cannot be set back by a user).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl From<toolgate_paths::credential::DirStamp> for Stamp {
    fn from(s: toolgate_paths::credential::DirStamp) -> Stamp {
        Stamp {
            dev: s.dev,
            ino: s.ino,
            mtime: s.mtime,
            ctime: s.ctime,
        }
    }
}

impl Stamp {
    pub(crate) fn of(m: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// Changed within `window` of `now` (seconds since the epoch): a change
    /// in the same clock tick as the scan would leave the stamp as it was,
    /// so such a directory is read again next time rather than trusted.
    /// `now` and `window` in nanoseconds; `window` `None` trusts every
    /// stamp (tests).
    pub(crate) fn racy(&self, now: i128, window: Option<i128>) -> bool {
        let ns = |(s, n): (i64, i64)| i128::from(s) * 1_000_000_000 + i128::from(n);
        window.is_some_and(|w| ns(self.mtime) >= now - w || ns(self.ctime) >= now - w)
    }
}

/// What the scan found in one directory.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct DirScan {
    stamp: Stamp,
    entries: usize,
    /// Credential entries and hard links to credential files.
    masked: Vec<PathBuf>,
    subdirs: Vec<PathBuf>,
}

/// The directories of one root as last scanned, valid for one set of
/// credential inodes.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct RootCache {
    inodes: u64,
    dirs: HashMap<PathBuf, DirScan>,
}

/// A root's cache as kept on disk between processes (short ones, such as a
/// hook's `sandbox exec`, would otherwise walk every tree whole each time).
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredCache {
    root: PathBuf,
    cache: RootCache,
}

/// Where `root`'s cache is kept in `dir`.
fn stored_path(dir: &Path, root: &Path) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    root.hash(&mut h);
    dir.join(format!("{:016x}.scan", h.finish()))
}

/// `root`'s cache from `dir`, when one is there, readable, and written by
/// this program for this root.
fn load_stored(dir: &Path, root: &Path) -> Option<RootCache> {
    let stored: StoredCache = crate::kept::load(&stored_path(dir, root))?;
    (stored.root == root).then_some(stored.cache)
}

/// Keeps `root`'s cache in `dir` (whole or not at all). A failure only
/// means the next process walks again.
fn store(dir: &Path, root: &Path, cache: RootCache) -> RootCache {
    let stored = StoredCache {
        root: root.to_path_buf(),
        cache,
    };
    crate::kept::keep(&stored_path(dir, root), &stored);
    stored.cache
}

/// The scans of this process, by root.
static SCAN_CACHE: Mutex<Option<HashMap<PathBuf, RootCache>>> = Mutex::new(None);

/// At most this many roots are remembered.
const CACHED_ROOTS: usize = 16;

/// How recent (in nanoseconds) a directory's change may be for its scan to
/// be kept: two seconds, coarser than any file system's timestamps.
pub(crate) const RACY_WINDOW: i128 = 2_000_000_000;

fn inode_key(inodes: &HashSet<(u64, u64)>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut sorted: Vec<&(u64, u64)> = inodes.iter().collect();
    sorted.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    sorted.hash(&mut h);
    h.finish()
}

/// Walks a tree (without following symlinks) for the path facts'
/// credential entries and hard links to credential files. A directory whose
/// [`Stamp`] is unchanged since the last walk (and not racy) is not read
/// again: what it held is taken from the cache, which is dropped whole when
/// the credential files' inodes change.
///
/// With `stored`, a directory of this program's own, the cache is also kept
/// there between processes.
pub(crate) fn scan_tree(root: &Path, credential_inodes: &Inodes, stored: Option<&Path>) -> Scan {
    scan_tree_within(
        root,
        credential_inodes,
        Some(RACY_WINDOW),
        usize::MAX,
        Walk::Whole,
        stored,
    )
}

/// As [`scan_tree`] for a readable place of the home directory (a
/// toolchain's or a cache's): at every depth, but not into the trees of
/// installed packages ([`toolgate_paths::home::PACKAGE_TREES`]: their files
/// are the packages' own, and they hold most of the place's directories).
/// A place that is such a tree itself (`~/.m2/repository`) is searched at
/// its top only.
pub(crate) fn scan_place(root: &Path, credential_inodes: &Inodes, stored: Option<&Path>) -> Scan {
    let depth = match (root.parent().and_then(Path::file_name), root.file_name()) {
        (Some(parent), Some(name)) if is_package_tree(parent.as_bytes(), name.as_bytes()) => 0,
        _ => usize::MAX,
    };
    scan_tree_within(
        root,
        credential_inodes,
        Some(RACY_WINDOW),
        depth,
        Walk::PastPackages,
        stored,
    )
}

/// Which subdirectories a walk goes into.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
    /// Every one (but `.git`, see `scan_dir`).
    Whole,
    /// Every one but the trees of installed packages.
    PastPackages,
}

fn scan_tree_within(
    root: &Path,
    credential_inodes: &Inodes,
    window: Option<i128>,
    depth: usize,
    walk: Walk,
    stored: Option<&Path>,
) -> Scan {
    let key = inode_key(credential_inodes);
    let mut old = {
        let mut guard = SCAN_CACHE.lock().unwrap_or_else(|e| e.into_inner());
        guard.get_or_insert_with(HashMap::new).remove(root)
    }
    .or_else(|| stored.and_then(|dir| load_stored(dir, root)))
    .filter(|c| c.inodes == key)
    .unwrap_or_default();
    let now = crate::now_nanos();
    let mut fresh = RootCache {
        inodes: key,
        dirs: HashMap::new(),
    };
    let mut scan = Scan::default();
    let mut seen = 0usize;
    let overlay = on_overlay(root);
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, level)) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let stamp = Stamp::of(&meta);
        let found = match old.dirs.remove(&dir) {
            Some(d) if d.stamp == stamp => d,
            _ => {
                scan.dirs_read += 1;
                let source = if overlay {
                    InodeSource::Stat
                } else {
                    InodeSource::Listing { dev: meta.dev() }
                };
                let Some(d) = scan_dir(&dir, stamp, source, credential_inodes) else {
                    continue;
                };
                d
            }
        };
        seen += found.entries;
        if seen > SCAN_LIMIT {
            scan.truncated = true;
            // An incomplete walk is not remembered.
            return scan;
        }
        scan.masked.extend(found.masked.iter().cloned());
        if level < depth {
            let parent = dir.file_name().map(|n| n.as_bytes()).unwrap_or_default();
            stack.extend(
                found
                    .subdirs
                    .iter()
                    .filter(|d| {
                        walk == Walk::Whole
                            || !d
                                .file_name()
                                .is_some_and(|n| is_package_tree(parent, n.as_bytes()))
                    })
                    .map(|d| (d.clone(), level + 1)),
            );
        }
        if !stamp.racy(now, window) {
            fresh.dirs.insert(dir, found);
        }
    }
    // Kept on disk when anything was read again, or some of what was
    // cached is gone (a smaller tree, or a shallower walk than before).
    let fresh = match stored {
        Some(dir) if scan.dirs_read > 0 || !old.dirs.is_empty() => store(dir, root, fresh),
        _ => fresh,
    };
    let mut guard = SCAN_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    if map.len() >= CACHED_ROOTS {
        map.clear();
    }
    map.insert(root.to_path_buf(), fresh);
    scan
}

/// Where a directory's entries' inode numbers are read.
#[derive(Clone, Copy)]
enum InodeSource {
    /// From the listing (`d_ino`), with the directory's device: equal to
    /// the files' own on ordinary file systems.
    Listing { dev: u64 },
    /// From a `stat` of each file: on an overlay, a listing's numbers need
    /// not be the files' own.
    Stat,
}

/// Whether `path` is on an overlay file system (whose listings' inode
/// numbers are not to be trusted); when it cannot tell, yes.
fn on_overlay(path: &Path) -> bool {
    const OVERLAYFS_SUPER_MAGIC: i64 = 0x794c_7630;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: a valid C string and a zeroed struct the kernel fills.
    unsafe {
        let mut s: libc::statfs = std::mem::zeroed();
        if libc::statfs(c.as_ptr(), &mut s) != 0 {
            return true;
        }
        #[allow(clippy::unnecessary_cast)]
        let kind = s.f_type as i64;
        kind == OVERLAYFS_SUPER_MAGIC
    }
}

/// Reads one directory: the credential entries of the path facts (by name,
/// case-insensitively, judged with the parent's name), hard links to
/// credential files, and the subdirectories to walk (not `.git`, not a
/// masked secret directory).
fn scan_dir(
    dir: &Path,
    stamp: Stamp,
    inode_source: InodeSource,
    credential_inodes: &Inodes,
) -> Option<DirScan> {
    let entries = std::fs::read_dir(dir).ok()?;
    let parent = dir.file_name().map(|n| n.as_bytes().to_vec());
    let mut found = DirScan {
        stamp,
        entries: 0,
        masked: Vec::new(),
        subdirs: Vec::new(),
    };
    for entry in entries.flatten() {
        found.entries += 1;
        let Ok(ft) = entry.file_type() else { continue };
        let name = entry.file_name();
        let path = entry.path();
        let is_dir = ft.is_dir();
        if credential::is_credential_entry(parent.as_deref(), name.as_bytes(), is_dir) {
            // A symlink named like a secret is masked where it points.
            let at = if ft.is_symlink() {
                path.canonicalize().unwrap_or(path)
            } else {
                path
            };
            found.masked.push(at);
            continue;
        }
        if is_dir {
            if name.as_bytes() != b".git" {
                found.subdirs.push(path);
            }
        } else if ft.is_file() && !credential_inodes.is_empty() {
            // The entry's inode number comes with the listing: only a file
            // that may be a credential's other name costs a `stat` (which a
            // walk of a large tree otherwise pays for every file).
            let maybe = match inode_source {
                InodeSource::Listing { dev } => credential_inodes.contains(&(dev, entry.ino())),
                InodeSource::Stat => true,
            };
            if maybe {
                if let Ok(m) = entry.metadata() {
                    if m.nlink() > 1 && credential_inodes.contains(&(m.dev(), m.ino())) {
                        found.masked.push(path);
                    }
                }
            }
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inodes_of(path: &Path) -> Inodes {
        let m = std::fs::metadata(path).unwrap();
        HashSet::from([(m.dev(), m.ino())])
    }

    fn found(root: &Path, inodes: &Inodes) -> (Vec<PathBuf>, usize) {
        let scan = scan_tree_within(root, inodes, None, usize::MAX, Walk::Whole, None);
        let mut m = scan.masked;
        m.sort();
        (m, scan.dirs_read)
    }

    #[test]
    fn the_tables_credentials_are_found_whatever_their_case_and_depth() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let key = root.join("outside-key");
        std::fs::write(&key, "secret").unwrap();
        for d in ["deploy", "a/b", "svc/.ssh"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            ".ENV",
            "deploy/id_ed25519",
            "a/b/.env.local",
            "a/.npmrc",
            "svc/.ssh/config",
            ".env.example",
            "README.md",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        std::fs::hard_link(&key, root.join("a/innocent.txt")).unwrap();
        let (m, _) = found(&root, &inodes_of(&key));
        let mut want: Vec<PathBuf> = [
            ".ENV",
            "a/.npmrc",
            "a/b/.env.local",
            "a/innocent.txt",
            "deploy/id_ed25519",
            "outside-key",
            "svc/.ssh",
        ]
        .iter()
        .map(|p| root.join(p))
        .collect();
        want.sort();
        assert_eq!(m, want);
    }

    #[test]
    fn a_place_is_searched_at_every_depth_but_its_package_trees() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().canonicalize().unwrap();
        let place = home.join(".volta");
        for f in [
            "tools/image/node/20.1.0/etc/npmrc",
            "tools/image/node/20.1.0/lib/deep/er/still/.env",
            "tools/image/node/20.1.0/lib/node_modules/pkg/test/key.pem",
            "tools/image/node/20.1.0/lib/python3.12/test/keycert.pem",
            "tools/image/node/20.1.0/lib/Node_Modules/.env",
        ] {
            let p = place.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
        }
        let mut m = scan_place(&place, &Inodes::new(), None).masked;
        m.sort();
        let want: Vec<PathBuf> = [
            "tools/image/node/20.1.0/etc/npmrc",
            "tools/image/node/20.1.0/lib/Node_Modules/.env",
            "tools/image/node/20.1.0/lib/deep/er/still/.env",
        ]
        .iter()
        .map(|f| place.join(f))
        .collect();
        assert_eq!(m, want);
        // A place that is a package store itself: its top only.
        let repo = home.join(".m2/repository");
        std::fs::create_dir_all(repo.join("org/x/1.0")).unwrap();
        std::fs::write(repo.join(".env"), "x").unwrap();
        std::fs::write(repo.join("org/x/1.0/.env"), "x").unwrap();
        assert_eq!(
            scan_place(&repo, &Inodes::new(), None).masked,
            [repo.join(".env")]
        );
    }

    #[test]
    fn a_cached_walk_reads_only_changed_directories_and_misses_nothing_added() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        for d in ["a/b", "c"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let none = Inodes::new();
        let (m, read) = found(&root, &none);
        assert!(m.is_empty());
        assert_eq!(read, 4, "the first walk reads every directory");
        let (_, read) = found(&root, &none);
        assert_eq!(read, 0, "nothing changed: nothing is read again");
        std::thread::sleep(std::time::Duration::from_millis(30));
        std::fs::write(root.join("a/b/.Env.production"), "A=1").unwrap();
        let (m, read) = found(&root, &none);
        assert_eq!(m, vec![root.join("a/b/.Env.production")]);
        assert_eq!(read, 1, "only the changed directory is read");
    }

    #[test]
    fn a_racy_directory_is_read_again() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let none = Inodes::new();
        let first = scan_tree_within(
            &root,
            &none,
            Some(3_600_000_000_000),
            usize::MAX,
            Walk::Whole,
            None,
        );
        assert_eq!(first.dirs_read, 1);
        let second = scan_tree_within(
            &root,
            &none,
            Some(3_600_000_000_000),
            usize::MAX,
            Walk::Whole,
            None,
        );
        assert_eq!(second.dirs_read, 1);
    }

    /// Forgets this process's walks of `root`, as a new process starts.
    fn forget(root: &Path) {
        let mut guard = SCAN_CACHE.lock().unwrap_or_else(|e| e.into_inner());
        guard.get_or_insert_with(HashMap::new).remove(root);
    }

    #[test]
    fn a_walk_kept_on_disk_serves_the_next_process_and_misses_nothing_added() {
        let ws = tempfile::tempdir().unwrap();
        let kept = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        for d in ["a/b", "c"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("c/.env"), "A=1").unwrap();
        let none = Inodes::new();
        let walk = |root: &Path| {
            forget(root);
            let s = scan_tree_within(
                root,
                &none,
                None,
                usize::MAX,
                Walk::Whole,
                Some(kept.path()),
            );
            let mut m = s.masked;
            m.sort();
            (m, s.dirs_read)
        };
        assert_eq!(walk(&root), (vec![root.join("c/.env")], 4));
        assert_eq!(
            walk(&root),
            (vec![root.join("c/.env")], 0),
            "a new process reads nothing again"
        );
        std::thread::sleep(std::time::Duration::from_millis(30));
        std::fs::write(root.join("a/b/id_rsa"), "k").unwrap();
        assert_eq!(
            walk(&root),
            (vec![root.join("a/b/id_rsa"), root.join("c/.env")], 1)
        );
        // Kept by another program (another build): not trusted.
        let path = stored_path(kept.path(), &root);
        let stored: StoredCache = crate::kept::load(&path).unwrap();
        assert!(crate::kept::keep_as_another_build(&path, &stored));
        assert_eq!(walk(&root).1, 4);
        // Unreadable: walked again.
        std::fs::write(&path, b"not a cache").unwrap();
        assert_eq!(walk(&root).1, 4);
    }
}
