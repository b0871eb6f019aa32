//! A path's state, kept aside and put back: the one place that copies,
//! links and restores files, links and directory trees.

use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a path was before a change set touched it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Before {
    /// Nothing was there.
    Absent,
    /// A regular file, kept under `blob`.
    File {
        /// The blob's name in the checkpoint.
        blob: String,
        /// Its permission bits.
        mode: u32,
    },
    /// A symbolic link.
    Symlink {
        /// Where it pointed.
        target: PathBuf,
    },
    /// A directory: its mode, and its whole tree under `tree` when the
    /// change replaces or removes it (`None`: only its mode changes).
    Dir {
        /// Its permission bits.
        mode: u32,
        /// The blob holding the tree, when kept.
        tree: Option<String>,
    },
}

/// What a path looked like after its change set landed, to tell whether
/// it was changed again since.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// `f`ile, `d`irectory, `l`ink or `o`ther.
    pub kind: char,
    /// Permission bits.
    pub mode: u32,
    /// Size in bytes (0 for a directory).
    pub size: u64,
    /// Modification time, nanoseconds since the epoch (0 for a directory,
    /// whose time changes with its children).
    pub mtime_ns: i128,
    /// Inode number (0 for a directory).
    pub ino: u64,
}

impl Stamp {
    /// The stamp of `path` now; `None` when it does not exist.
    pub fn of(path: &Path) -> io::Result<Option<Stamp>> {
        let m = match fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let kind = kind_of(&m);
        let dir = kind == 'd';
        Ok(Some(Stamp {
            kind,
            mode: m.mode() & 0o7777,
            size: if dir { 0 } else { m.size() },
            mtime_ns: if dir {
                0
            } else {
                i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec())
            },
            ino: if dir { 0 } else { m.ino() },
        }))
    }
}

fn kind_of(m: &fs::Metadata) -> char {
    let t = m.file_type();
    if t.is_file() {
        'f'
    } else if t.is_dir() {
        'd'
    } else if t.is_symlink() {
        'l'
    } else {
        'o'
    }
}

/// Keeps `path`'s state in `blobs/<name>`. A file is hard-linked when it
/// can be (the landing replaces it by `rename` or removes it, so the kept
/// inode never changes) and copied otherwise; a directory is kept whole
/// when `whole`, else only its mode.
pub fn keep(path: &Path, blob: &Path, whole: bool) -> io::Result<Before> {
    let m = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Before::Absent),
        Err(e) => return Err(e),
    };
    let mode = m.mode() & 0o7777;
    let name = blob_name(blob);
    match kind_of(&m) {
        'f' => {
            link_or_copy(path, blob)?;
            Ok(Before::File { blob: name, mode })
        }
        'l' => Ok(Before::Symlink {
            target: fs::read_link(path)?,
        }),
        'd' if whole => {
            copy_tree(path, blob)?;
            Ok(Before::Dir {
                mode,
                tree: Some(name),
            })
        }
        'd' => Ok(Before::Dir { mode, tree: None }),
        _ => Err(io::Error::other(format!(
            "{} is neither a file, a link nor a directory, so it cannot be kept for undo",
            path.display()
        ))),
    }
}

fn blob_name(blob: &Path) -> String {
    blob.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn link_or_copy(from: &Path, to: &Path) -> io::Result<()> {
    if fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    fs::copy(from, to).map(|_| ())
}

/// Copies a tree: directories made with their modes, files hard-linked
/// (or copied), links recreated.
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    let m = fs::symlink_metadata(from)?;
    match kind_of(&m) {
        'd' => {
            fs::create_dir(to)?;
            for entry in fs::read_dir(from)? {
                let entry = entry?;
                copy_tree(&entry.path(), &to.join(entry.file_name()))?;
            }
            fs::set_permissions(to, fs::Permissions::from_mode(m.mode() & 0o7777))
        }
        'f' => link_or_copy(from, to),
        'l' => std::os::unix::fs::symlink(fs::read_link(from)?, to),
        // Sockets and fifos are not kept; they are not content.
        _ => Ok(()),
    }
}

/// Removes whatever is at `path`, if anything.
pub fn clear(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Puts `before` back at `path`, from the blobs in `blobs`. Idempotent:
/// restoring twice leaves the same state.
pub fn restore(path: &Path, before: &Before, blobs: &Path) -> io::Result<()> {
    match before {
        Before::Dir { mode, tree: None } => {
            if !fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
                clear(path)?;
                fs::create_dir(path)?;
            }
            fs::set_permissions(path, fs::Permissions::from_mode(*mode))
        }
        Before::Absent => clear(path),
        Before::File { blob, mode } => {
            clear(path)?;
            link_or_copy(&blobs.join(blob), path)?;
            fs::set_permissions(path, fs::Permissions::from_mode(*mode))
        }
        Before::Symlink { target } => {
            clear(path)?;
            std::os::unix::fs::symlink(target, path)
        }
        Before::Dir {
            tree: Some(blob), ..
        } => {
            clear(path)?;
            copy_tree(&blobs.join(blob), path)
        }
    }
}

/// The bytes a blob holds (files counted once per name).
pub fn size_of(path: &Path) -> u64 {
    let Ok(m) = fs::symlink_metadata(path) else {
        return 0;
    };
    if !m.is_dir() {
        return m.len();
    }
    fs::read_dir(path)
        .map(|rd| rd.flatten().map(|e| size_of(&e.path())).sum())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_tree_is_restored_with_its_files_links_and_modes() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("t");
        fs::create_dir_all(tree.join("sub")).unwrap();
        fs::write(tree.join("sub/a"), "a").unwrap();
        std::os::unix::fs::symlink("sub/a", tree.join("link")).unwrap();
        fs::set_permissions(tree.join("sub"), fs::Permissions::from_mode(0o750)).unwrap();
        let blobs = dir.path().join("blobs");
        fs::create_dir(&blobs).unwrap();
        let before = keep(&tree, &blobs.join("0"), true).unwrap();
        fs::remove_dir_all(&tree).unwrap();
        fs::write(&tree, "now a file").unwrap();
        restore(&tree, &before, &blobs).unwrap();
        restore(&tree, &before, &blobs).unwrap();
        assert_eq!(fs::read_to_string(tree.join("sub/a")).unwrap(), "a");
        assert_eq!(
            fs::read_link(tree.join("link")).unwrap(),
            Path::new("sub/a")
        );
        let mode = fs::metadata(tree.join("sub")).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o750);
    }

    #[test]
    fn an_absent_path_is_restored_by_removing_what_came() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new");
        let before = keep(&p, &dir.path().join("0"), true).unwrap();
        assert_eq!(before, Before::Absent);
        fs::create_dir_all(p.join("x")).unwrap();
        restore(&p, &before, dir.path()).unwrap();
        assert!(!p.exists());
    }
}
