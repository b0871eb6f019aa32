//! What a confined command may do, and the command line that confines it.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use crate::child::{CHILD_ARG, ChildArgs};
use crate::{SandboxError, Support, masks};

/// The bubblewrap options every confined command gets: new user, PID, IPC,
/// UTS and (where possible) cgroup namespaces, no user namespaces inside, no
/// capabilities, killed with its parent.
pub(crate) const NAMESPACE_ARGS: &[&str] = &[
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--disable-userns",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
];

/// Where the proxy's socket appears inside the sandbox.
pub(crate) const PROXY_SOCKET_INSIDE: &str = "/dev/.toolgate-proxy.sock";

/// At most this many directory entries are looked at per root when searching
/// the location for `.env` files and hard links to credential files.
pub const SCAN_LIMIT: usize = 200_000;

/// What a confined command may touch. Paths are absolute; a path in
/// `read_only` or `masked` that ends in `/` names a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSpec {
    /// The location's roots: writable (except `read_only` inside them).
    pub roots: Vec<PathBuf>,
    /// Other writable paths (say `~/.cargo/registry`); missing ones are skipped.
    pub writable: Vec<PathBuf>,
    /// Paths that stay read-only even inside a root. One that is missing
    /// inside a root is held by an empty read-only placeholder for the run
    /// (removed afterwards), so the command cannot create it either.
    pub read_only: Vec<PathBuf>,
    /// Paths replaced by an empty file or directory: unreadable. Besides
    /// these, `.env` files found in the roots and hard links in the roots to
    /// any masked file are masked too.
    pub masked: Vec<PathBuf>,
    /// Protected files outside the roots (the home directory's start-up
    /// files and configs), read-only with the rest of the file system: a
    /// hard link to one of them inside a root is made read-only too, as is
    /// a hard link to a `read_only` file.
    pub protected_elsewhere: Vec<PathBuf>,
    /// Whether the command keeps the machine's network.
    pub network: bool,
    /// The unix socket of an allowlisting proxy ([`crate::proxy`]). When set
    /// and `network` is not, the command's network is the proxy only: the
    /// socket is bound into the sandbox, a forwarder listens on the
    /// sandbox's own loopback, and the proxy variables (`HTTP_PROXY`,
    /// `HTTPS_PROXY`, …) point at it.
    pub proxy: Option<PathBuf>,
    /// The directory the command starts in.
    pub cwd: PathBuf,
    /// The executable that acts as the helper inside the sandbox (it must
    /// call [`run_if_requested`](crate::run_if_requested) first thing);
    /// `None`: the running program.
    pub helper: Option<PathBuf>,
}

impl SandboxSpec {
    /// A spec for a location with this crate's default protected and
    /// credential lists ([`masks`]), masking the credentials under `home`
    /// (`None`: `$HOME`). No extra writable paths, no network, cwd = the first root.
    pub fn for_location(roots: Vec<PathBuf>, home: Option<&Path>) -> Self {
        let home = home
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from));
        let read_only = roots
            .iter()
            .flat_map(|r| {
                masks::PROTECTED_IN_LOCATION
                    .iter()
                    .map(move |p| join_keep_slash(r, p))
            })
            .collect();
        let masked = home
            .iter()
            .flat_map(|h| {
                masks::CREDENTIALS_IN_HOME
                    .iter()
                    .map(move |p| join_keep_slash(h, p))
            })
            .collect();
        let protected_elsewhere = home
            .iter()
            .flat_map(|h| {
                masks::PROTECTED_IN_HOME
                    .iter()
                    .map(move |p| join_keep_slash(h, p))
            })
            .collect();
        SandboxSpec {
            cwd: roots.first().cloned().unwrap_or_else(|| PathBuf::from("/")),
            roots,
            writable: Vec::new(),
            read_only,
            masked,
            protected_elsewhere,
            network: false,
            proxy: None,
            helper: None,
        }
    }
}

fn join_keep_slash(base: &Path, rel: &str) -> PathBuf {
    let mut s = base.as_os_str().to_os_string();
    if !s.as_bytes().ends_with(b"/") {
        s.push("/");
    }
    s.push(rel);
    PathBuf::from(s)
}

fn names_dir(p: &Path) -> bool {
    p.as_os_str().as_bytes().ends_with(b"/")
}

/// A command ready to run confined, and what it holds for the run: keep this
/// value alive until the command has exited (placeholders for missing
/// protected paths are removed when it is dropped).
#[derive(Debug)]
pub struct Confined {
    /// The command: `bwrap … -- helper … -- program args`. The caller sets
    /// its environment, stdio and process group as for any command.
    pub command: Command,
    /// The paths held read-only for this run.
    pub read_only: Vec<PathBuf>,
    /// The paths masked for this run.
    pub masked: Vec<PathBuf>,
    /// Things worth knowing about this run (a scan that stopped early, a
    /// placeholder that could not be made).
    pub notes: Vec<String>,
    _placeholders: Placeholders,
}

impl SandboxSpec {
    /// The command that runs `program args` confined by this spec, on a
    /// machine whose `support` is available.
    pub fn command<S: AsRef<OsStr>>(
        &self,
        support: &Support,
        program: impl AsRef<OsStr>,
        args: impl IntoIterator<Item = S>,
    ) -> Result<Confined, SandboxError> {
        let bwrap = match (&support.bwrap, support.available) {
            (Some(b), true) => b.clone(),
            _ => return Err(SandboxError::Unavailable(support.reasons.join("; "))),
        };
        let helper = match &self.helper {
            Some(h) => h.clone(),
            None => std::env::current_exe().map_err(|e| {
                SandboxError::Setup(format!("cannot find the running program: {e}"))
            })?,
        };
        let mut notes = Vec::new();
        let roots = canonical_all(&self.roots, "root")?;
        if roots.is_empty() {
            return Err(SandboxError::Spec(
                "a sandbox needs at least one root".into(),
            ));
        }
        let writable: Vec<PathBuf> = self
            .writable
            .iter()
            .filter_map(|w| match w.canonicalize() {
                Ok(c) => Some(c),
                Err(_) => {
                    tracing::debug!(path = %w.display(), "writable path missing; skipped");
                    None
                }
            })
            .collect();

        let mut placeholders = Placeholders::default();
        let mut read_only = Vec::new();
        for p in &self.read_only {
            match existing_or_placeholder(p, &roots, &mut placeholders) {
                Ok(Some(path)) => read_only.push(path),
                Ok(None) => {}
                Err(e) => notes.push(e),
            }
        }

        let mut masked_set: HashSet<PathBuf> = HashSet::new();
        let mut credential_inodes = HashSet::new();
        for m in &self.masked {
            if let Ok(c) = m.canonicalize() {
                collect_inodes(&c, &mut credential_inodes);
                masked_set.insert(c);
            }
        }
        // The files of the protected places (the location's, and the home
        // directory's start-up files and configs, read-only with the rest of
        // the file system): a hard link to one of them inside a writable
        // root is made read-only too, or a write through the other name
        // would change the protected file.
        let mut protected_inodes = HashSet::new();
        let mut budget = PROTECTED_INODE_LIMIT;
        for p in &read_only {
            collect_inodes_bounded(p, 3, &mut budget, &mut protected_inodes);
        }
        for p in &self.protected_elsewhere {
            collect_inodes_bounded(p, 2, &mut budget, &mut protected_inodes);
        }
        for root in &roots {
            let scan = scan_root_protecting(root, &credential_inodes, &protected_inodes);
            if scan.truncated {
                notes.push(format!(
                    "stopped looking for .env files and hard links in {} after {SCAN_LIMIT} entries",
                    root.display()
                ));
            }
            masked_set.extend(scan.masked);
            read_only.extend(scan.protected);
        }
        let mut masked: Vec<PathBuf> = masked_set.into_iter().collect();
        masked.sort();
        read_only.sort();
        read_only.dedup();

        let mut cmd = Command::new(bwrap);
        cmd.args(NAMESPACE_ARGS);
        if !self.network {
            cmd.arg("--unshare-net");
        }
        cmd.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
        cmd.args(["--tmpfs", "/tmp"]);
        if Path::new("/var/tmp").is_dir() {
            cmd.args(["--tmpfs", "/var/tmp"]);
        }
        // Host services listen on unix sockets under /run (a container
        // daemon's socket is root-equivalent): an empty /run hides them. The
        // resolver configuration often lives there; it is put back read-only.
        if Path::new("/run").is_dir()
            && !roots.iter().chain(&writable).any(|p| p.starts_with("/run"))
        {
            cmd.args(["--tmpfs", "/run"]);
            if let Ok(target) = std::fs::canonicalize("/etc/resolv.conf") {
                if target.starts_with("/run") {
                    cmd.arg("--ro-bind").arg(&target).arg(&target);
                }
            }
        }
        if helper.starts_with("/tmp") || helper.starts_with("/var/tmp") {
            cmd.arg("--ro-bind").arg(&helper).arg(&helper);
        }
        for p in roots.iter().chain(&writable) {
            cmd.arg("--bind").arg(p).arg(p);
        }
        for p in &read_only {
            cmd.arg("--ro-bind").arg(p).arg(p);
        }
        for p in &masked {
            if p.is_dir() {
                cmd.arg("--tmpfs").arg(p).arg("--remount-ro").arg(p);
            } else {
                cmd.arg("--ro-bind").arg("/dev/null").arg(p);
            }
        }
        let proxy = match (&self.proxy, self.network) {
            (Some(socket), false) => {
                // Bound last, onto the sandbox's own /dev, where no root or
                // writable path can be mounted over it.
                cmd.arg("--bind").arg(socket).arg(PROXY_SOCKET_INSIDE);
                Some(PathBuf::from(PROXY_SOCKET_INSIDE))
            }
            _ => None,
        };
        cmd.args(["--setenv", "TMPDIR", "/tmp"]);
        cmd.arg("--chdir").arg(&self.cwd);
        let child = ChildArgs {
            network: self.network,
            writable: roots.iter().chain(&writable).cloned().collect(),
            proxy,
            program: program.as_ref().to_os_string(),
            args: args
                .into_iter()
                .map(|a| a.as_ref().to_os_string())
                .collect(),
        };
        cmd.arg("--")
            .arg(&helper)
            .arg(CHILD_ARG)
            .args(child.encode());
        Ok(Confined {
            command: cmd,
            read_only,
            masked,
            notes,
            _placeholders: placeholders,
        })
    }
}

fn canonical_all(paths: &[PathBuf], what: &str) -> Result<Vec<PathBuf>, SandboxError> {
    paths
        .iter()
        .map(|p| {
            p.canonicalize()
                .map_err(|e| SandboxError::Spec(format!("{what} {}: {e}", p.display())))
        })
        .collect()
}

/// The path to hold read-only: the path itself when it exists, else (inside
/// a root) an empty placeholder at its first missing component. Outside the
/// roots a missing path needs nothing: everything there is read-only.
fn existing_or_placeholder(
    p: &Path,
    roots: &[PathBuf],
    placeholders: &mut Placeholders,
) -> Result<Option<PathBuf>, String> {
    if let Ok(c) = p.canonicalize() {
        return Ok(Some(c));
    }
    if std::fs::symlink_metadata(p).is_ok() {
        // A dangling symlink: its target does not exist; hold the link.
        return Ok(Some(p.to_path_buf()));
    }
    // Find the first missing component below an existing ancestor.
    let mut missing = p.to_path_buf();
    let mut as_dir = names_dir(p);
    while let Some(parent) = missing.parent() {
        if std::fs::symlink_metadata(parent).is_ok() {
            break;
        }
        missing = parent.to_path_buf();
        as_dir = true;
    }
    let Some(parent) = missing.parent().and_then(|q| q.canonicalize().ok()) else {
        return Ok(None);
    };
    if !roots.iter().any(|r| parent.starts_with(r)) {
        return Ok(None);
    }
    let Some(name) = missing.file_name() else {
        return Ok(None);
    };
    let target = parent.join(name);
    if placeholders.held.iter().any(|h| target.starts_with(h)) {
        // Inside a placeholder of this run: already read-only.
        return Ok(None);
    }
    placeholders
        .create(&target, as_dir)
        .map(Some)
        .map_err(|e| format!("could not hold {} read-only: {e}", target.display()))
}

/// Placeholders this process made, with how many live runs hold each, so a
/// run never removes one another run still relies on.
static PLACEHOLDERS: Mutex<Option<HashMap<PathBuf, usize>>> = Mutex::new(None);

#[derive(Debug, Default)]
struct Placeholders {
    held: Vec<PathBuf>,
}

impl Placeholders {
    fn create(&mut self, path: &Path, dir: bool) -> std::io::Result<PathBuf> {
        let mut guard = PLACEHOLDERS.lock().unwrap_or_else(|e| e.into_inner());
        let map = guard.get_or_insert_with(HashMap::new);
        // A placeholder (of any live run) at or above the path already holds
        // it read-only: share that one.
        let held = map.keys().find(|k| path.starts_with(k)).cloned();
        if let Some(k) = held {
            if let Some(n) = map.get_mut(&k) {
                *n += 1;
            }
            self.held.push(k.clone());
            return Ok(k);
        }
        {
            if dir {
                std::fs::create_dir(path)?;
            } else {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(path)?;
            }
            map.insert(path.to_path_buf(), 1);
        }
        self.held.push(path.to_path_buf());
        Ok(path.to_path_buf())
    }
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        let mut guard = PLACEHOLDERS.lock().unwrap_or_else(|e| e.into_inner());
        let Some(map) = guard.as_mut() else { return };
        // Innermost first: a placeholder directory empties before it goes.
        for path in self.held.drain(..).rev() {
            let last = match map.get_mut(&path) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    false
                }
                Some(_) => true,
                None => false,
            };
            if !last {
                continue;
            }
            map.remove(&path);
            // Only an empty placeholder is removed: never anything with content.
            let removed = match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => std::fs::remove_dir(&path),
                Ok(m) if m.is_file() && m.len() == 0 => std::fs::remove_file(&path),
                _ => Ok(()),
            };
            if let Err(e) = removed {
                tracing::warn!(path = %path.display(), error = %e, "could not remove a sandbox placeholder");
            }
        }
    }
}

/// `(dev, ino)` of every regular file at or under `path`.
fn collect_inodes(path: &Path, out: &mut HashSet<(u64, u64)>) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_file() {
        out.insert((meta.dev(), meta.ino()));
    } else if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        for e in entries.flatten() {
            collect_inodes(&e.path(), out);
        }
    }
}

/// Files by device and inode.
type Inodes = HashSet<(u64, u64)>;

/// At most this many entries are read to find the protected files' inodes.
const PROTECTED_INODE_LIMIT: usize = 4096;

/// The inodes of the regular files at `path` (itself, or beneath it `depth`
/// levels deep), at most `budget` entries.
fn collect_inodes_bounded(
    path: &Path,
    depth: usize,
    budget: &mut usize,
    out: &mut HashSet<(u64, u64)>,
) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if meta.is_file() {
        out.insert((meta.dev(), meta.ino()));
        return;
    }
    if !meta.is_dir() || depth == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for e in entries.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        collect_inodes_bounded(&e.path(), depth - 1, budget, out);
    }
}

#[derive(Debug, Default)]
struct Scan {
    masked: Vec<PathBuf>,
    protected: Vec<PathBuf>,
    truncated: bool,
    /// Directories read this time (the others came from the cache).
    dirs_read: usize,
}

/// A directory's identity and last change: when equal, its entries are the
/// same names of the same kinds (creating, removing or renaming an entry
/// changes the directory's modification and change times; the change time
/// cannot be set back by a user).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Stamp {
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
    fn racy(&self, now: i128, window: Option<i128>) -> bool {
        let ns = |(s, n): (i64, i64)| i128::from(s) * 1_000_000_000 + i128::from(n);
        window.is_some_and(|w| ns(self.mtime) >= now - w || ns(self.ctime) >= now - w)
    }
}

/// What the scan found in one directory.
#[derive(Debug)]
struct DirScan {
    stamp: Stamp,
    entries: usize,
    /// `.env` files (canonical) and hard links to credential files.
    masked: Vec<PathBuf>,
    /// Protected paths of a nested project (`sub/.git/config`, …), looked
    /// up again on every run: they live in directories of their own, which
    /// may change while this one does not.
    nested: Vec<PathBuf>,
    subdirs: Vec<PathBuf>,
}

/// The directories of one root as last scanned, valid for one set of
/// credential inodes.
#[derive(Debug, Default)]
struct RootCache {
    inodes: u64,
    dirs: HashMap<PathBuf, DirScan>,
}

/// The scans of this process, by root.
static SCAN_CACHE: Mutex<Option<HashMap<PathBuf, RootCache>>> = Mutex::new(None);

/// At most this many roots are remembered.
const CACHED_ROOTS: usize = 16;

/// How recent (in nanoseconds) a directory's change may be for its scan to
/// be kept: two seconds, coarser than any file system's timestamps.
const RACY_WINDOW: i128 = 2_000_000_000;

fn inode_key(inodes: &HashSet<(u64, u64)>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut sorted: Vec<&(u64, u64)> = inodes.iter().collect();
    sorted.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    sorted.hash(&mut h);
    h.finish()
}

/// Walks a root (without following symlinks) for `.env` files, hard links to
/// credential files, and protected paths of nested projects. A directory
/// whose [`Stamp`] is unchanged since the last walk (and not racy) is not
/// read again: what it held is taken from the cache, which is dropped
/// whole when the credential files' inodes change.
#[cfg(test)]
fn scan_root(root: &Path, credential_inodes: &HashSet<(u64, u64)>) -> Scan {
    scan_root_within(root, credential_inodes, &HashSet::new(), Some(RACY_WINDOW))
}

/// [`scan_root`] that also finds hard links to the files of
/// `protected_inodes` (listed with the nested protected paths).
fn scan_root_protecting(
    root: &Path,
    credential_inodes: &HashSet<(u64, u64)>,
    protected_inodes: &HashSet<(u64, u64)>,
) -> Scan {
    scan_root_within(root, credential_inodes, protected_inodes, Some(RACY_WINDOW))
}

fn scan_root_within(
    root: &Path,
    credential_inodes: &HashSet<(u64, u64)>,
    protected_inodes: &HashSet<(u64, u64)>,
    window: Option<i128>,
) -> Scan {
    let key = inode_key(credential_inodes) ^ inode_key(protected_inodes).rotate_left(1);
    let mut old = {
        let mut guard = SCAN_CACHE.lock().unwrap_or_else(|e| e.into_inner());
        guard
            .get_or_insert_with(HashMap::new)
            .remove(root)
            .filter(|c| c.inodes == key)
            .unwrap_or_default()
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(i128::MAX, |d| {
            i128::try_from(d.as_nanos()).unwrap_or(i128::MAX)
        });
    let nested_first: HashSet<&str> = masks::PROTECTED_IN_LOCATION
        .iter()
        .filter_map(|p| p.split('/').next())
        .collect();
    let mut fresh = RootCache {
        inodes: key,
        dirs: HashMap::new(),
    };
    let mut scan = Scan::default();
    let mut seen = 0usize;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
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
                let Some(d) = scan_dir(
                    &dir,
                    root,
                    stamp,
                    (credential_inodes, protected_inodes),
                    &nested_first,
                ) else {
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
        scan.protected
            .extend(found.nested.iter().filter_map(|p| p.canonicalize().ok()));
        stack.extend(found.subdirs.iter().cloned());
        if !stamp.racy(now, window) {
            fresh.dirs.insert(dir, found);
        }
    }
    let mut guard = SCAN_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let map = guard.get_or_insert_with(HashMap::new);
    if map.len() >= CACHED_ROOTS {
        map.clear();
    }
    map.insert(root.to_path_buf(), fresh);
    scan
}

/// Reads one directory: its `.env` files, hard links to credential files,
/// nested projects' protected paths and subdirectories (not `.git`).
fn scan_dir(
    dir: &Path,
    root: &Path,
    stamp: Stamp,
    (credential_inodes, protected_inodes): (&Inodes, &Inodes),
    nested_first: &HashSet<&str>,
) -> Option<DirScan> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut found = DirScan {
        stamp,
        entries: 0,
        masked: Vec::new(),
        nested: Vec::new(),
        subdirs: Vec::new(),
    };
    for entry in entries.flatten() {
        found.entries += 1;
        let Ok(ft) = entry.file_type() else { continue };
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        if masks::is_env_secret_file(&name) && (ft.is_file() || ft.is_symlink()) {
            if let Ok(c) = path.canonicalize() {
                found.masked.push(c);
            }
            continue;
        }
        if dir != root && nested_first.contains(name.as_ref()) {
            for p in masks::PROTECTED_IN_LOCATION {
                if p.split('/').next() == Some(name.as_ref()) {
                    found.nested.push(dir.join(p.trim_end_matches('/')));
                }
            }
        }
        if ft.is_dir() {
            if name != ".git" {
                found.subdirs.push(path);
            }
        } else if ft.is_file() && !(credential_inodes.is_empty() && protected_inodes.is_empty()) {
            if let Ok(m) = entry.metadata() {
                if m.nlink() > 1 && credential_inodes.contains(&(m.dev(), m.ino())) {
                    found.masked.push(path);
                } else if m.nlink() > 1 && protected_inodes.contains(&(m.dev(), m.ino())) {
                    // A hard link to a protected file: read-only like it.
                    found.nested.push(path);
                }
            }
        }
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn for_location_lists_protected_and_credentials() {
        let spec = SandboxSpec::for_location(vec!["/ws".into()], Some(Path::new("/home/u")));
        assert!(spec.read_only.contains(&PathBuf::from("/ws/.git/hooks/")));
        assert!(spec.masked.contains(&PathBuf::from("/home/u/.ssh/")));
        assert!(!spec.network);
        assert_eq!(spec.cwd, PathBuf::from("/ws"));
    }

    #[test]
    fn placeholder_for_missing_protected_path_is_removed_after() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut ph = Placeholders::default();
        let got = existing_or_placeholder(
            &root.join(".vscode/tasks.json"),
            std::slice::from_ref(&root),
            &mut ph,
        )
        .unwrap()
        .unwrap();
        assert_eq!(got, root.join(".vscode"));
        assert!(got.is_dir());
        let mut ph2 = Placeholders::default();
        existing_or_placeholder(
            &root.join(".vscode/settings.json"),
            std::slice::from_ref(&root),
            &mut ph2,
        )
        .unwrap();
        drop(ph);
        assert!(
            root.join(".vscode").is_dir(),
            "still held by the second run"
        );
        drop(ph2);
        assert!(!root.join(".vscode").exists());
        // Outside the roots nothing is created.
        let other = tempfile::tempdir().unwrap();
        let mut ph3 = Placeholders::default();
        let got = existing_or_placeholder(&other.path().join(".envrc"), &[root], &mut ph3).unwrap();
        assert!(got.is_none());
        assert!(!other.path().join(".envrc").exists());
    }

    #[test]
    fn scan_finds_env_files_and_hard_links() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let key = home.path().join("id_rsa");
        std::fs::write(&key, "secret").unwrap();
        std::fs::create_dir_all(ws.path().join("sub")).unwrap();
        std::fs::hard_link(&key, ws.path().join("sub/innocent.txt")).unwrap();
        std::fs::write(ws.path().join(".env"), "A=1").unwrap();
        std::fs::write(ws.path().join("sub/.env.local"), "A=1").unwrap();
        std::fs::write(ws.path().join(".env.example"), "A=").unwrap();
        let mut inodes = HashSet::new();
        collect_inodes(home.path(), &mut inodes);
        let root = ws.path().canonicalize().unwrap();
        let scan = scan_root(&root, &inodes);
        assert!(scan.dirs_read >= 2);
        let mut masked = scan.masked;
        masked.sort();
        assert_eq!(
            masked,
            vec![
                root.join(".env"),
                root.join("sub/.env.local"),
                root.join("sub/innocent.txt")
            ]
        );
    }

    /// Everything the scan finds, sorted.
    fn found(root: &Path, inodes: &HashSet<(u64, u64)>) -> (Vec<PathBuf>, Vec<PathBuf>, usize) {
        let scan = scan_root_within(root, inodes, &HashSet::new(), None);
        let (mut m, mut p) = (scan.masked, scan.protected);
        m.sort();
        p.sort();
        (m, p, scan.dirs_read)
    }

    /// A change to a directory in the same clock tick as its scan would
    /// leave its stamp as it was: wait for the next tick (not a timed
    /// assertion: waiting longer only makes it surer).
    fn next_tick() {
        std::thread::sleep(std::time::Duration::from_millis(30));
    }

    #[test]
    fn a_cached_scan_reads_only_changed_directories_and_misses_nothing_added() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let key = home.path().join("id_rsa");
        std::fs::write(&key, "secret").unwrap();
        for d in ["a/b", "c", "nested"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let mut inodes = HashSet::new();
        collect_inodes(home.path(), &mut inodes);
        let (m, _, read) = found(&root, &inodes);
        assert!(m.is_empty());
        assert_eq!(read, 5, "the first walk reads every directory");
        let (_, _, read) = found(&root, &inodes);
        assert_eq!(read, 0, "nothing changed: nothing is read again");

        next_tick();
        // A new .env deep down, a hard link to the key, a nested project's
        // .git/hooks (created inside a directory that existed before).
        std::fs::write(root.join("a/b/.env.local"), "A=1").unwrap();
        std::fs::hard_link(&key, root.join("c/innocent.txt")).unwrap();
        std::fs::create_dir_all(root.join("nested/.git")).unwrap();
        let (m, p, read) = found(&root, &inodes);
        assert_eq!(
            m,
            vec![root.join("a/b/.env.local"), root.join("c/innocent.txt")]
        );
        assert!(p.is_empty(), "no hooks yet: {p:?}");
        assert_eq!(read, 3, "only the changed directories are read");
        next_tick();
        std::fs::create_dir_all(root.join("nested/.git/hooks")).unwrap();
        let (_, p, read) = found(&root, &inodes);
        assert_eq!(
            p,
            vec![root.join("nested/.git/hooks")],
            "looked up on every run"
        );
        assert_eq!(read, 0);

        // A directory replaced by another of the same name is read again.
        next_tick();
        std::fs::remove_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/.env"), "B=2").unwrap();
        let (m, _, _) = found(&root, &inodes);
        assert_eq!(m, vec![root.join("a/b/.env"), root.join("c/innocent.txt")]);

        // A credential file that becomes an inode of the location (linked the
        // other way round) changes the inode set: the whole cache goes.
        next_tick();
        std::fs::write(root.join("c/plain.txt"), "x").unwrap();
        let (_, _, _) = found(&root, &inodes);
        std::fs::hard_link(root.join("c/plain.txt"), home.path().join("id_ed25519")).unwrap();
        let mut inodes2 = HashSet::new();
        collect_inodes(home.path(), &mut inodes2);
        let (m, _, read) = found(&root, &inodes2);
        assert!(m.contains(&root.join("c/plain.txt")), "{m:?}");
        assert_eq!(read, 5, "a new credential set reads everything again");
    }

    #[test]
    fn a_racy_directory_is_read_again() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let inodes = HashSet::new();
        // Just created, so within the window: never trusted from the cache.
        let first = scan_root_within(&root, &inodes, &HashSet::new(), Some(3_600_000_000_000));
        assert_eq!(first.dirs_read, 1);
        let second = scan_root_within(&root, &inodes, &HashSet::new(), Some(3_600_000_000_000));
        assert_eq!(second.dirs_read, 1);
    }
}
