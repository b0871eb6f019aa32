//! Whether a git repository tracks a credential: what `git grep`, `git show`,
//! `git log -p`, `git diff`… print when they print the content of tracked
//! files.
//!
//! [`survey`] reads the paths the repository's index lists
//! ([`crate::git_index`], cached process-wide by path, device, inode, size,
//! mtime and ctime) and finds, among those a command's pathspecs select:
//! * a path that is a credential by the core classifier
//!   ([`toolgate_core::credential::is_credential`]: `.env`, `id_rsa`,
//!   `.npmrc`, anything below `.ssh`…);
//! * an entry whose recorded device and inode are those of a known credential
//!   file (a hard link to `~/.ssh/id_rsa` when it was added: its blob is the
//!   key, in the index and in the commit);
//! * for at most [`MAX_CHECKED_FILES`] entries, a working-tree file that an
//!   `lstat` shows is a hard link to a credential now (or a symlink to one).
//!
//! An index that cannot be read, a repository with submodules (whose own
//! files are not surveyed), or more selected entries than can be checked is
//! [`Tracked::Unknown`]: the caller asks. A missing index tracks nothing.
//!
//! Only what is tracked *now* is seen: a credential committed once and since
//! removed is still in history, which this does not read.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolgate_core::credential::{CredentialInodes, LinkedFile, hard_link_to, is_credential};

use crate::git_index::{
    Index, IndexError, MAX_INDEX_BYTES, MODE_FILE, MODE_GITLINK, MODE_SYMLINK, MODE_TYPE,
};
use crate::stamp::{Stamp, StampCache};

/// Most tracked files whose working-tree entry is `lstat`ed for one command
/// (the recursive-read walk's budget): a command that selects more is unknown.
pub const MAX_CHECKED_FILES: usize = 4096;
/// Most credentials reported for one command.
pub const MAX_FOUND: usize = 8;
/// Indexes kept in the process-wide cache.
pub const CACHE_ENTRIES: usize = 8;

/// What a command reads of a repository.
#[derive(Debug, Clone, Copy)]
pub struct Survey<'a> {
    /// The repository's git directory (the worktree's own, for a linked one):
    /// its `index` is read.
    pub git_dir: &'a Path,
    /// The work tree, when there is one.
    pub work_tree: Option<&'a Path>,
    /// The user's home (for `~/.ssh` and the credential files to link to).
    pub home: &'a Path,
    /// The location's roots (their credential files count for hard links).
    pub roots: &'a [&'a Path],
    /// Paths relative to the top of the work tree that select the files the
    /// command reads (each a file or a directory); `None`: every file.
    pub pathspecs: Option<&'a [Vec<u8>]>,
}

/// A tracked file that is a credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackedCredential {
    /// The file (in the work tree, when there is one).
    pub path: PathBuf,
    /// Why it is one, in words.
    pub why: String,
}

/// What [`survey`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tracked {
    /// No selected tracked file is a credential.
    Clean,
    /// These are (at most [`MAX_FOUND`]).
    Credentials(Vec<TrackedCredential>),
    /// What the repository tracks could not be checked: why.
    Unknown(String),
}

/// Judges the tracked files a command selects; see the module documentation.
pub fn survey(s: &Survey<'_>) -> Tracked {
    let index_path = s.git_dir.join("index");
    let index = match load(&index_path) {
        Ok(index) => index,
        Err(e) => return Tracked::Unknown(format!("{}: {e}", index_path.display())),
    };
    let selected: Vec<&crate::git_index::IndexEntry> = index
        .entries
        .iter()
        .filter(|e| s.pathspecs.is_none_or(|specs| selects(specs, &e.path)))
        .collect();
    if let Some(sub) = selected.iter().find(|e| e.mode & MODE_TYPE == MODE_GITLINK) {
        return Tracked::Unknown(format!(
            "the repository has a submodule at {}, whose files are not checked",
            String::from_utf8_lossy(&sub.path)
        ));
    }
    let full = |rel: &[u8]| -> PathBuf {
        let rel = Path::new(OsStr::from_bytes(rel));
        match s.work_tree {
            Some(wt) => wt.join(rel),
            None => rel.to_path_buf(),
        }
    };
    let snapshot = CredentialInodes::snapshot(s.home, s.roots);
    let by_inode: HashMap<(u32, u32), &Path> = snapshot
        .iter()
        // The index keeps the low 32 bits of each.
        .map(|(dev, ino, path)| ((dev as u32, ino as u32), path))
        .collect();
    let mut found = Vec::new();
    let add = |found: &mut Vec<TrackedCredential>, path: PathBuf, why: String| {
        if found.len() < MAX_FOUND && !found.iter().any(|f: &TrackedCredential| f.path == path) {
            found.push(TrackedCredential { path, why });
        }
    };
    for entry in &selected {
        let path = full(&entry.path);
        if is_credential(&path, s.home).is_some() {
            add(&mut found, path, "a tracked file that holds secrets".into());
            continue;
        }
        let recorded = (entry.dev, entry.ino);
        if recorded != (0, 0) {
            if let Some(of) = by_inode.get(&recorded).filter(|of| **of != path) {
                let why = format!(
                    "a tracked file added as a hard link to {}, which holds secrets",
                    of.display()
                );
                add(&mut found, path, why);
            }
        }
    }
    if !found.is_empty() {
        return Tracked::Credentials(found);
    }
    let Some(work_tree) = s.work_tree else {
        return Tracked::Clean;
    };
    if selected.len() > MAX_CHECKED_FILES {
        return Tracked::Unknown(format!(
            "the repository tracks {} files there, more than the {MAX_CHECKED_FILES} checked for hard links to credentials",
            selected.len()
        ));
    }
    for entry in &selected {
        if !matches!(entry.mode & MODE_TYPE, MODE_FILE | MODE_SYMLINK) {
            continue;
        }
        let path = work_tree.join(OsStr::from_bytes(&entry.path));
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            if let Ok(target) = std::fs::canonicalize(&path) {
                let linked =
                    LinkedFile::at(&target).and_then(|l| hard_link_to(&target, l, s.home, s.roots));
                if is_credential(&target, s.home).is_some() || linked.is_some() {
                    let why = format!(
                        "a tracked symlink to {}, which holds secrets",
                        target.display()
                    );
                    add(&mut found, path, why);
                }
            }
        } else if let Some(linked) = LinkedFile::of(&meta) {
            if let Some(of) = hard_link_to(&path, linked, s.home, s.roots) {
                let why = format!(
                    "a tracked hard link to {}, which holds secrets",
                    of.display()
                );
                add(&mut found, path, why);
            }
        }
    }
    if found.is_empty() {
        Tracked::Clean
    } else {
        Tracked::Credentials(found)
    }
}

/// Whether a pathspec of `specs` (a file or a directory, relative to the top)
/// selects `path`. Compared without regard to ASCII case, as git does under
/// `core.ignoreCase` or `--icase-pathspecs`.
fn selects(specs: &[Vec<u8>], path: &[u8]) -> bool {
    specs.iter().any(|spec| {
        path.len() >= spec.len()
            && path[..spec.len()].eq_ignore_ascii_case(spec)
            && (path.len() == spec.len() || path[spec.len()] == b'/')
    })
}

/// The paths of the gitlinks (submodules) the index at `git_dir/index`
/// records, at most `max`: git recurses into each checked-out one (`git
/// status` runs a status there, with that repository's configuration)
/// whether `.gitmodules` names it or not.
pub(crate) fn gitlinks(git_dir: &Path, max: usize) -> Result<Vec<Vec<u8>>, IndexError> {
    let index = load(&git_dir.join("index"))?;
    Ok(index
        .entries
        .iter()
        .filter(|e| e.mode & MODE_TYPE == MODE_GITLINK)
        .take(max)
        .map(|e| e.path.clone())
        .collect())
}

type Loaded = Result<Arc<Index>, IndexError>;

static CACHE: StampCache<Loaded> = StampCache::new(CACHE_ENTRIES);

/// The index at `path`, through the cache (one `stat` when it did not
/// change). A missing index is an empty one.
fn load(path: &Path) -> Result<Arc<Index>, IndexError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Arc::default()),
        Err(e) => return Err(IndexError::Io(e.to_string())),
    };
    let cached = CACHE.get_at(path, Stamp::of(&meta));
    if let Some(loaded) = cached {
        return loaded;
    }
    let (stamp, loaded) = read(path)?;
    let loaded = loaded.map(Arc::new);
    CACHE.insert(path, stamp, loaded.clone());
    loaded
}

/// Reads and parses the file, stamped by the open descriptor's metadata.
fn read(path: &Path) -> Result<(Stamp, Result<Index, IndexError>), IndexError> {
    // Never blocks on a FIFO planted where the index is expected.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| IndexError::Io(e.to_string()))?;
    let meta = file.metadata().map_err(|e| IndexError::Io(e.to_string()))?;
    let stamp = Stamp::of(&meta);
    if !meta.is_file() {
        return Ok((stamp, Err(IndexError::Io("not a regular file".into()))));
    }
    if meta.len() > MAX_INDEX_BYTES {
        return Ok((stamp, Err(IndexError::TooLarge)));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // One byte past the stamp's size tells a file that grew meanwhile.
    (&mut file)
        .take(MAX_INDEX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| IndexError::Io(e.to_string()))?;
    if bytes.len() as u64 != meta.len() {
        return Err(IndexError::Io("the index changed while it was read".into()));
    }
    Ok((stamp, crate::git_index::parse(&bytes)))
}

#[cfg(test)]
mod tests;
