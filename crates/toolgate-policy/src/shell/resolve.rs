//! Path resolution for one analysis, with the filesystem looked at once per path.
//!
//! The walk is `toolgate_core::Location::resolve_with`'s — `~` expanded,
//! relative to a base, every symlink followed one component at a time, `..`
//! folded after following, the tail below the nearest existing ancestor appended
//! lexically — asking this cache instead of the file system, so each `lstat`
//! and `readlink` is done once for the rest of the analysis. A script names the
//! same directories again and again (the location root's ancestors above all),
//! and one command is analysed in microseconds, so the answers cannot go stale
//! in any way that matters: the cache lives exactly as long as one
//! [`super::analyze`] call and is never shared between decisions.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use toolgate_core::location::{EntryKind, FileSystem, PathError, PathLookup};
use toolgate_core::{Location, ResolvedPath};

/// An `lstat` answer: the kind, or the error's OS code (0 if none) and text.
type Lstat = Result<EntryKind, (i32, String)>;

/// `lstat` and `readlink` answers for one analysis.
#[derive(Debug, Default)]
pub(crate) struct PathCache {
    // Keyed by the path's bytes: hashing a `Path` walks its components.
    lstat: RefCell<HashMap<OsString, Lstat>>,
    links: RefCell<HashMap<OsString, PathBuf>>,
}

impl PathLookup for PathCache {
    /// `lstat(path)`, once.
    fn kind(&self, path: &Path) -> io::Result<EntryKind> {
        if let Some(hit) = self.lstat.borrow().get(path.as_os_str()) {
            return match hit {
                Ok(k) => Ok(*k),
                Err((code, _)) if *code != 0 => Err(io::Error::from_raw_os_error(*code)),
                Err((_, text)) => Err(io::Error::other(text.clone())),
            };
        }
        let answer = FileSystem.kind(path);
        let stored = match &answer {
            Ok(k) => Ok(*k),
            Err(e) => Err((e.raw_os_error().unwrap_or(0), e.to_string())),
        };
        self.lstat
            .borrow_mut()
            .insert(path.as_os_str().to_owned(), stored);
        answer
    }

    /// `readlink(path)`, once.
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        if let Some(t) = self.links.borrow().get(path.as_os_str()) {
            return Ok(t.clone());
        }
        let target = FileSystem.read_link(path)?;
        self.links
            .borrow_mut()
            .insert(path.as_os_str().to_owned(), target.clone());
        Ok(target)
    }
}

impl PathCache {
    /// Whether something exists at `path` (without following a final symlink).
    pub(crate) fn exists_no_follow(&self, path: &Path) -> bool {
        matches!(self.kind(path), Ok(k) if k != EntryKind::Missing)
    }

    /// `Location::resolve_from`, through the cache.
    pub(crate) fn resolve_from(
        &self,
        location: &Location,
        path: &str,
        base: &Path,
    ) -> Result<ResolvedPath, PathError> {
        location.resolve_with(self, path, base)
    }
}
