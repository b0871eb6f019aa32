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
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use toolgate_core::credential::LinkedFile;
use toolgate_core::location::{EntryKind, FileSystem, PathError, PathLookup};
use toolgate_core::{Location, ResolvedPath};

use crate::classify::LinkLookup;

/// An `lstat` answer: the kind (and, for a regular file with more than one
/// link, its identity), or the error's OS code (0 if none) and text.
type Lstat = Result<(EntryKind, Option<LinkedFile>), (i32, String)>;

/// `lstat` and `readlink` answers for one analysis.
#[derive(Debug, Default)]
pub(crate) struct PathCache {
    // Keyed by the path's bytes: hashing a `Path` walks its components.
    lstat: RefCell<foldhash::HashMap<OsString, Lstat>>,
    links: RefCell<foldhash::HashMap<OsString, PathBuf>>,
}

impl PathLookup for PathCache {
    /// `lstat(path)`, once.
    fn kind(&self, path: &Path) -> io::Result<EntryKind> {
        self.entry(path).map(|(kind, _)| kind)
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

impl LinkLookup for PathCache {
    /// From the same cached `lstat` as [`PathLookup::kind`].
    fn linked_file(&self, path: &Path) -> Option<LinkedFile> {
        // Below a directory already found missing, nothing is there.
        let parent_missing = path.parent().is_some_and(|parent| {
            matches!(
                self.lstat.borrow().get(parent.as_os_str()),
                Some(Ok((EntryKind::Missing, _)))
            )
        });
        if parent_missing {
            return None;
        }
        self.entry(path).ok().and_then(|(_, linked)| linked)
    }
}

impl PathCache {
    /// `lstat(path)`, once: what [`PathLookup::kind`] and
    /// [`LinkLookup::linked_file`] both answer from.
    fn entry(&self, path: &Path) -> io::Result<(EntryKind, Option<LinkedFile>)> {
        if let Some(hit) = self.lstat.borrow().get(path.as_os_str()) {
            return match hit {
                Ok(entry) => Ok(*entry),
                Err((code, _)) if *code != 0 => Err(io::Error::from_raw_os_error(*code)),
                Err((_, text)) => Err(io::Error::other(text.clone())),
            };
        }
        let answer = FileSystem
            .entry(path)
            .map(|(kind, meta)| (kind, meta.as_ref().and_then(LinkedFile::of)));
        let stored = match &answer {
            Ok(entry) => Ok(*entry),
            Err(e) => Err((e.raw_os_error().unwrap_or(0), e.to_string())),
        };
        self.lstat
            .borrow_mut()
            .insert(path.as_os_str().to_owned(), stored);
        answer
    }

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
