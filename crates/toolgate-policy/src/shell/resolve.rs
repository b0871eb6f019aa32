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
use toolgate_core::path_text;
use toolgate_core::{Location, ResolvedPath};

use super::listing;
use crate::classify::LinkLookup;
use crate::dir_watch::DIR_WATCH;
use crate::repo_config::{DirStamps, StatStamps};
use crate::stamp::Stamp;

/// An `lstat` answer: the kind (and, for a regular file with more than one
/// link, its identity; for a directory, its stamp), or the error's OS code
/// (0 if none) and text.
type Lstat = Result<(EntryKind, Option<LinkedFile>, Option<Stamp>), (i32, String)>;

/// `lstat` and `readlink` answers for one analysis.
#[derive(Debug, Default)]
pub(crate) struct PathCache {
    // Keyed by the path's bytes: hashing a `Path` walks its components.
    lstat: RefCell<foldhash::HashMap<OsString, Lstat>>,
    links: RefCell<foldhash::HashMap<OsString, PathBuf>>,
    /// Whether this analysis took in the directory watch's events yet.
    watch_synced: std::cell::Cell<bool>,
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
        let parent_missing = path_text::parent(path).is_some_and(|parent| {
            matches!(
                self.lstat.borrow().get(parent.as_os_str()),
                Some(Ok((EntryKind::Missing, _, _)))
            )
        });
        if parent_missing {
            return None;
        }
        self.entry(path).ok().and_then(|(_, linked)| linked)
    }
}

impl DirStamps for PathCache {
    /// From this analysis' `lstat` of `dir` (made now if not yet): the same
    /// stamp `stat` gives when it is a directory, not a symlink.
    fn dir_stamp(&self, dir: &Path) -> Option<Stamp> {
        let _ = self.entry(dir);
        self.stored_dir_stamp(dir)
            .or_else(|| StatStamps.dir_stamp(dir))
    }
}

impl PathCache {
    /// `lstat(path)`, once: what [`PathLookup::kind`] and
    /// [`LinkLookup::linked_file`] both answer from.
    fn entry(&self, path: &Path) -> io::Result<(EntryKind, Option<LinkedFile>)> {
        if let Some(hit) = self.lstat.borrow().get(path.as_os_str()) {
            return match hit {
                Ok((kind, linked, _)) => Ok((*kind, *linked)),
                Err((code, _)) if *code != 0 => Err(io::Error::from_raw_os_error(*code)),
                Err((_, text)) => Err(io::Error::other(text.clone())),
            };
        }
        if self.known_missing(path) {
            self.lstat.borrow_mut().insert(
                path.as_os_str().to_owned(),
                Ok((EntryKind::Missing, None, None)),
            );
            return Ok((EntryKind::Missing, None));
        }
        self.lstat_now(path)
    }

    /// `lstat(path)` now, kept for the rest of the analysis.
    fn lstat_now(&self, path: &Path) -> io::Result<(EntryKind, Option<LinkedFile>)> {
        if !self.watch_synced.replace(true) {
            DIR_WATCH.sync();
        }
        // A directory unchanged since its last `lstat` gives the same answer.
        let generation = match DIR_WATCH.unchanged(path) {
            Ok(stamp) => {
                self.lstat.borrow_mut().insert(
                    path.as_os_str().to_owned(),
                    Ok((EntryKind::Dir, None, Some(stamp))),
                );
                return Ok((EntryKind::Dir, None));
            }
            Err(generation) => generation,
        };
        let answer = FileSystem.entry(path).map(|(kind, meta)| {
            let linked = meta.as_ref().and_then(LinkedFile::of);
            let stamp = meta.as_ref().filter(|m| m.is_dir()).map(Stamp::of);
            (kind, linked, stamp)
        });
        match &answer {
            Ok((EntryKind::Dir, _, Some(stamp))) => DIR_WATCH.saw_dir(path, *stamp, generation),
            _ => DIR_WATCH.saw_other(path),
        }
        let stored = match &answer {
            Ok(entry) => Ok(*entry),
            Err(e) => Err((e.raw_os_error().unwrap_or(0), e.to_string())),
        };
        self.lstat
            .borrow_mut()
            .insert(path.as_os_str().to_owned(), stored);
        answer.map(|(kind, linked, _)| (kind, linked))
    }

    /// Whether `path` is `DIR/NAME` for a directory this analysis has
    /// `lstat`ed and whose remembered listing lacks `NAME`
    /// ([`super::listing`]): then `lstat(path)` would say "missing".
    fn known_missing(&self, path: &Path) -> bool {
        let Some((dir, name)) = path_text::parent_and_name(path) else {
            return false;
        };
        // Exactly `DIR/NAME`: not `DIR/NAME/`, `DIR/NAME/.` or `DIR//NAME`,
        // which the kernel reads otherwise.
        let whole = path.as_os_str().len();
        let sep = usize::from(!dir.as_os_str().as_encoded_bytes().ends_with(b"/"));
        if dir.as_os_str().is_empty()
            || whole != dir.as_os_str().len() + sep + name.len()
            || !path
                .as_os_str()
                .as_encoded_bytes()
                .ends_with(name.as_encoded_bytes())
        {
            return false;
        }
        // The directory's own `lstat`, made now unless this analysis has it
        // or the directory is known not to be listed: one call that spares
        // one for every other name asked in it.
        let known = self.lstat.borrow().contains_key(dir.as_os_str());
        if !known && listing::unlisted(dir) {
            return false;
        }
        if !known && self.lstat_now(dir).is_err() {
            return false;
        }
        self.stored_dir_stamp(dir)
            .is_some_and(|stamp| listing::lacks(dir, stamp, name))
    }

    /// The stamp this analysis' `lstat` of `path` found, when it found a
    /// directory.
    fn stored_dir_stamp(&self, path: &Path) -> Option<Stamp> {
        match self.lstat.borrow().get(path.as_os_str()) {
            Some(Ok((EntryKind::Dir, _, stamp))) => *stamp,
            _ => None,
        }
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
