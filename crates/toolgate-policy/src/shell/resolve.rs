//! Path resolution for one analysis, with the filesystem looked at once per path.
//!
//! The same walk as `toolgate_core::Location::resolve_from` — `~` expanded,
//! relative to a base, every symlink followed one component at a time, `..`
//! folded after following, the tail below the nearest existing ancestor appended
//! lexically — but each `lstat` and `readlink` is remembered for the rest of the
//! analysis. A script names the same directories again and again (the location
//! root's ancestors above all), and one command is analysed in microseconds, so
//! the answers cannot go stale in any way that matters: the cache lives exactly
//! as long as one [`super::analyze`] call and is never shared between decisions.
//!
//! `tests/shell_requests.rs` checks this walk against the core resolver on
//! symlinks in and out, chains, loops, `..` through links and missing tails.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::Metadata;
use std::io;
use std::path::{Path, PathBuf};

use toolgate_core::location::{
    MAX_SYMLINKS, PathError, check_path_text, expand_home, push_components_rev,
};
use toolgate_core::{Location, ResolvedPath};

/// What `lstat` said about one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Dir,
    Symlink,
    Other,
    /// `ENOENT` or `ENOTDIR`: nothing there, nor below.
    Missing,
}

/// `lstat` and `readlink` answers for one analysis.
#[derive(Debug, Default)]
pub(crate) struct PathCache {
    // Keyed by the path's bytes: hashing a `Path` walks its components.
    lstat: RefCell<HashMap<OsString, Result<Kind, io::ErrorKind>>>,
    /// Errors other than "missing" are rare; keep the full error for the message.
    errors: RefCell<HashMap<OsString, (i32, String)>>,
    links: RefCell<HashMap<OsString, PathBuf>>,
}

fn kind_of(meta: &Metadata) -> Kind {
    let t = meta.file_type();
    if t.is_symlink() {
        Kind::Symlink
    } else if t.is_dir() {
        Kind::Dir
    } else {
        Kind::Other
    }
}

fn is_missing(e: &io::Error) -> bool {
    // ENOTDIR: a component below a regular file; it cannot exist either.
    e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(20)
}

impl PathCache {
    /// `lstat(path)`, once.
    fn kind(&self, path: &Path) -> Result<Kind, io::Error> {
        if let Some(hit) = self.lstat.borrow().get(path.as_os_str()) {
            return match hit {
                Ok(k) => Ok(*k),
                Err(_) => Err(self.error(path)),
            };
        }
        let answer = match std::fs::symlink_metadata(path) {
            Ok(meta) => Ok(kind_of(&meta)),
            Err(e) if is_missing(&e) => Ok(Kind::Missing),
            Err(e) => Err(e),
        };
        let stored = match &answer {
            Ok(k) => Ok(*k),
            Err(e) => {
                self.errors.borrow_mut().insert(
                    path.as_os_str().to_owned(),
                    (e.raw_os_error().unwrap_or(0), e.to_string()),
                );
                Err(e.kind())
            }
        };
        self.lstat
            .borrow_mut()
            .insert(path.as_os_str().to_owned(), stored);
        answer
    }

    fn error(&self, path: &Path) -> io::Error {
        match self.errors.borrow().get(path.as_os_str()) {
            Some((code, _)) if *code != 0 => io::Error::from_raw_os_error(*code),
            Some((_, text)) => io::Error::other(text.clone()),
            None => io::Error::other("unreadable"),
        }
    }

    /// Whether something exists at `path` (without following a final symlink).
    pub(crate) fn exists_no_follow(&self, path: &Path) -> bool {
        matches!(self.kind(path), Ok(k) if k != Kind::Missing)
    }

    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        if let Some(t) = self.links.borrow().get(path.as_os_str()) {
            return Ok(t.clone());
        }
        let target = std::fs::read_link(path)?;
        self.links
            .borrow_mut()
            .insert(path.as_os_str().to_owned(), target.clone());
        Ok(target)
    }

    /// `Location::resolve_from`, through the cache.
    pub(crate) fn resolve_from(
        &self,
        location: &Location,
        path: &str,
        base: &Path,
    ) -> Result<ResolvedPath, PathError> {
        check_path_text(path)?;
        let expanded = expand_home(path);
        let joined = if expanded.is_absolute() {
            expanded
        } else {
            base.join(expanded)
        };
        let (resolved, state) = self.resolve_path(&joined)?;
        let (exists, is_dir) = match state {
            End::Known(Kind::Dir) => (true, true),
            End::Known(Kind::Other) => (true, false),
            End::Known(Kind::Missing) => (false, false),
            // Not looked at on the way (`/`, or a `..` at the end): ask.
            End::Known(Kind::Symlink) | End::Unknown => match self.kind(&resolved) {
                Ok(Kind::Dir) => (true, true),
                Ok(Kind::Other) => (true, false),
                Ok(Kind::Missing) | Err(_) => (false, false),
                // A symlink that appeared meanwhile: where it leads decides.
                Ok(Kind::Symlink) => match std::fs::metadata(&resolved) {
                    Ok(m) => (true, m.is_dir()),
                    Err(_) => (false, false),
                },
            },
        };
        let inside = location.contains(&resolved);
        let external_dir = if inside {
            None
        } else if is_dir {
            Some(resolved.clone())
        } else {
            Some(
                resolved
                    .parent()
                    .map_or_else(|| resolved.clone(), Path::to_path_buf),
            )
        };
        Ok(ResolvedPath {
            path: resolved,
            exists,
            is_dir,
            inside,
            external_dir,
        })
    }

    /// `toolgate_core::location::resolve_path` through the cache, with what is
    /// known about the end of the walk.
    fn resolve_path(&self, abs: &Path) -> Result<(PathBuf, End), PathError> {
        let mut pending: Vec<OsString> = Vec::new();
        push_components_rev(abs, &mut pending);
        let mut current = PathBuf::from("/");
        let mut links = 0usize;
        // Once a component is missing, nothing below it can be a symlink.
        let mut missing = false;
        let mut end = End::Unknown;
        while let Some(part) = pending.pop() {
            if part == "." {
                continue;
            }
            if part == ".." {
                current.pop();
                end = End::Unknown;
                continue;
            }
            if part == "/" {
                current = PathBuf::from("/");
                end = End::Unknown;
                continue;
            }
            current.push(&part);
            if missing {
                // Below a missing component: nothing is there (unless a `..`
                // came back up, which resets `end` to unknown above).
                if end != End::Unknown {
                    end = End::Known(Kind::Missing);
                }
                continue;
            }
            match self.kind(&current) {
                Ok(Kind::Symlink) => {
                    links += 1;
                    if links > MAX_SYMLINKS {
                        return Err(PathError::SymlinkLoop(abs.to_path_buf()));
                    }
                    let target =
                        self.read_link(&current)
                            .map_err(|source| PathError::Unreadable {
                                path: current.clone(),
                                source,
                            })?;
                    current.pop();
                    end = End::Unknown;
                    // The target's components replace this one; an absolute
                    // target restarts from `/`.
                    push_components_rev(&target, &mut pending);
                }
                Ok(Kind::Missing) => {
                    missing = true;
                    end = End::Known(Kind::Missing);
                }
                Ok(k) => end = End::Known(k),
                Err(source) => {
                    return Err(PathError::Unreadable {
                        path: current,
                        source,
                    });
                }
            }
        }
        Ok((current, end))
    }
}

/// What the walk knows about the path it ends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Known(Kind),
    Unknown,
}
