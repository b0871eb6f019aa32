//! Workspaces and the path resolver of invariant 5.
//!
//! A path is resolved before it is judged: relative to a base inside the location,
//! `.`/`..`/`//` folded, every symlink followed (for a path that does not exist
//! yet, through its nearest existing ancestor), then classified as inside one of
//! the location's roots or external.
//!
//! `std::fs::canonicalize` cannot be used directly: it fails for paths that do not
//! exist yet, and folding `..` lexically before following symlinks gives the wrong
//! answer for `link/..`. So the walk below resolves one component at a time.
//!
//! ```
//! use toolgate_core::Location;
//! let dir = tempfile::tempdir().unwrap();
//! let loc = Location::new(dir.path()).unwrap();
//! let p = loc.resolve("src/../new.txt").unwrap();
//! assert!(p.inside);
//! assert!(p.path.ends_with("new.txt"));
//! let outside = loc.resolve("../../etc/passwd").unwrap();
//! assert!(!outside.inside);
//! ```

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// The longest path text, in bytes, the resolver accepts. Larger than Linux's
/// `PATH_MAX` (4096) on purpose: the text may fold to a much shorter path
/// (`a/../a/../…`), and each component is checked by the OS as it is resolved.
pub const MAX_PATH_BYTES: usize = 16 * 1024;
/// How many symlinks one resolution may follow (Linux `MAXSYMLINKS`).
pub const MAX_SYMLINKS: usize = 40;

/// Errors from path resolution; each names the path.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The path is empty.
    #[error("path is empty")]
    Empty,
    /// The path contains a NUL byte.
    #[error("path contains a NUL byte: {0:?}")]
    Nul(String),
    /// The path is longer than [`MAX_PATH_BYTES`].
    #[error("path is {len} bytes long; the limit is {MAX_PATH_BYTES}")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// The resolved path is longer than the system accepts (`PATH_MAX`).
    #[error(
        "{path} resolves to a path of {len} bytes; the system limit (PATH_MAX) is {} bytes",
        crate::credential::PATH_MAX - 1
    )]
    ResolvedTooLong {
        /// The path as given (its first 200 bytes).
        path: String,
        /// The resolved path's length in bytes.
        len: usize,
    },
    /// Too many symlinks (a loop).
    #[error("too many levels of symbolic links resolving {0}")]
    SymlinkLoop(PathBuf),
    /// A component could not be inspected.
    #[error("cannot resolve {path}: {source}")]
    Unreadable {
        /// The path that failed.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// A location root is not a usable directory.
    #[error("location root {path} is not a directory")]
    BadRoot {
        /// The root given.
        path: PathBuf,
    },
}

/// A workspace: one root directory plus optional extra roots, all canonical.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    root: PathBuf,
    extra_roots: Vec<PathBuf>,
}

/// A resolved path and where it lies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Absolute, symlinks resolved, no `.` or `..`.
    pub path: PathBuf,
    /// Whether something exists at `path` right now.
    pub exists: bool,
    /// Whether `path` is a directory right now.
    pub is_dir: bool,
    /// Whether `path` lies inside one of the location's roots.
    pub inside: bool,
    /// For an external path, the directory to ask `external_directory` for: the
    /// path itself when it is a directory, else its parent.
    pub external_dir: Option<PathBuf>,
}

impl Location {
    /// A location rooted at `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, PathError> {
        Ok(Location {
            root: canonical_dir(root.as_ref())?,
            extra_roots: Vec::new(),
        })
    }

    /// Adds an extra root (an existing directory).
    pub fn with_extra_root(mut self, root: impl AsRef<Path>) -> Result<Self, PathError> {
        self.extra_roots.push(canonical_dir(root.as_ref())?);
        Ok(self)
    }

    /// The main root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// All roots, main first.
    pub fn roots(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.root.as_path()).chain(self.extra_roots.iter().map(PathBuf::as_path))
    }

    /// Whether an already-canonical path lies inside one of the roots.
    pub fn contains(&self, canonical: &Path) -> bool {
        self.roots()
            .any(|r| crate::path_text::starts_with(canonical, r))
    }

    /// Resolves `path` relative to the main root.
    pub fn resolve(&self, path: &str) -> Result<ResolvedPath, PathError> {
        self.resolve_from(path, &self.root)
    }

    /// Resolves `path` relative to `base` (an absolute directory, for example the
    /// working directory of a shell command). `~` and `~/…` mean the home directory.
    pub fn resolve_from(&self, path: &str, base: &Path) -> Result<ResolvedPath, PathError> {
        self.resolve_with(&FileSystem, path, base)
    }

    /// [`Location::resolve_from`], asking `lookup` instead of the file system
    /// directly, for example through a cache that lives for one analysis.
    pub fn resolve_with(
        &self,
        lookup: &impl PathLookup,
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
        let (resolved, end) = walk(lookup, &joined)?;
        let len = resolved.as_os_str().len();
        if len >= crate::credential::PATH_MAX {
            let mut shown: String = path.chars().take(200).collect();
            if shown.len() < path.len() {
                shown.push('…');
            }
            return Err(PathError::ResolvedTooLong { path: shown, len });
        }
        let (exists, is_dir) = match end {
            Some(EntryKind::Dir) => (true, true),
            Some(EntryKind::Other) => (true, false),
            Some(EntryKind::Missing) => (false, false),
            // Not looked at on the way (`/`, or a `..` at the end): ask.
            Some(EntryKind::Symlink) | None => match lookup.kind(&resolved) {
                Ok(EntryKind::Dir) => (true, true),
                Ok(EntryKind::Other) => (true, false),
                Ok(EntryKind::Missing) | Err(_) => (false, false),
                // A symlink that appeared meanwhile: where it leads decides.
                Ok(EntryKind::Symlink) => match std::fs::metadata(&resolved) {
                    Ok(m) => (true, m.is_dir()),
                    Err(_) => (false, false),
                },
            },
        };
        Ok(self.classify(resolved, exists, is_dir))
    }

    fn classify(&self, path: PathBuf, exists: bool, is_dir: bool) -> ResolvedPath {
        let inside = self.contains(&path);
        let external_dir = if inside {
            None
        } else if is_dir {
            Some(path.clone())
        } else {
            Some(crate::path_text::parent(&path).map_or_else(|| path.clone(), Path::to_path_buf))
        };
        ResolvedPath {
            path,
            exists,
            is_dir,
            inside,
            external_dir,
        }
    }
}

/// Refuses path text no resolver should walk: empty, with a NUL byte, or longer
/// than [`MAX_PATH_BYTES`].
pub fn check_path_text(path: &str) -> Result<(), PathError> {
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    if path.contains('\0') {
        return Err(PathError::Nul(path.replace('\0', "\\0")));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong { len: path.len() });
    }
    Ok(())
}

/// `~` and `~/…` from the process's `HOME`; any other text as it is.
pub fn expand_home(path: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    if path == "~" {
        if let Some(h) = home() {
            return h;
        }
    } else if let Some(rest) = path.strip_prefix("~/") {
        if let Some(h) = home() {
            return h.join(rest);
        }
    }
    PathBuf::from(path)
}

fn canonical_dir(root: &Path) -> Result<PathBuf, PathError> {
    let text = root.to_string_lossy();
    check_path_text(&text)?;
    let abs = if root.is_absolute() {
        root.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|source| PathError::Unreadable {
                path: root.to_path_buf(),
                source,
            })?
            .join(root)
    };
    let resolved = resolve_path(&abs)?;
    if !resolved.is_dir() {
        return Err(PathError::BadRoot {
            path: root.to_path_buf(),
        });
    }
    Ok(resolved)
}

/// Resolves an absolute path: every existing symlink followed, `.`/`..` folded,
/// components after the nearest existing ancestor appended lexically.
///
/// ```
/// let p = toolgate_core::location::resolve_path(std::path::Path::new("/tmp/../tmp//./x")).unwrap();
/// assert!(p.ends_with("x"));
/// ```
pub fn resolve_path(abs: &Path) -> Result<PathBuf, PathError> {
    walk(&FileSystem, abs).map(|(path, _)| path)
}

/// What `lstat` says is at a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// Anything else: a file, a socket, a device.
    Other,
    /// Nothing there, nor below (`ENOENT`, or `ENOTDIR` under a file).
    Missing,
}

/// The two questions the resolver asks the file system. [`FileSystem`] asks
/// it directly; an implementation may remember answers, as long as it never
/// keeps them across decisions (a symlink swapped in between must be seen).
pub trait PathLookup {
    /// `lstat(path)`, as an [`EntryKind`]; "missing" is not an error.
    fn kind(&self, path: &Path) -> io::Result<EntryKind>;
    /// `readlink(path)`.
    fn read_link(&self, path: &Path) -> io::Result<PathBuf>;
}

/// The file system itself, asked every time.
#[derive(Clone, Copy, Debug, Default)]
pub struct FileSystem;

impl FileSystem {
    /// `lstat(path)`: the kind, with the metadata when something is there. For
    /// a caller that needs more of the answer than [`PathLookup::kind`] keeps.
    pub fn entry(&self, path: &Path) -> io::Result<(EntryKind, Option<std::fs::Metadata>)> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) => Ok((entry_kind(&meta.file_type()), Some(meta))),
            Err(e) if is_missing(&e) => Ok((EntryKind::Missing, None)),
            Err(e) => Err(e),
        }
    }
}

impl PathLookup for FileSystem {
    fn kind(&self, path: &Path) -> io::Result<EntryKind> {
        self.entry(path).map(|(kind, _)| kind)
    }

    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::read_link(path)
    }
}

fn entry_kind(t: &std::fs::FileType) -> EntryKind {
    if t.is_symlink() {
        EntryKind::Symlink
    } else if t.is_dir() {
        EntryKind::Dir
    } else {
        EntryKind::Other
    }
}

/// The component walk behind [`resolve_path`]; also returns what `lstat` said
/// about the final component when the walk looked at it (`None` after a final
/// `..`, or for `/`).
fn walk(lookup: &impl PathLookup, abs: &Path) -> Result<(PathBuf, Option<EntryKind>), PathError> {
    let mut pending: Vec<OsString> = Vec::new();
    push_components_rev(abs, &mut pending);
    let mut current = PathBuf::from("/");
    let mut links = 0usize;
    // Once a component is missing, nothing below it can be a symlink.
    let mut missing = false;
    let mut end = None;
    while let Some(part) = pending.pop() {
        if part == "." {
            continue;
        }
        if part == ".." {
            current.pop();
            end = None;
            continue;
        }
        if part == "/" {
            current = PathBuf::from("/");
            end = None;
            continue;
        }
        current.push(&part);
        if missing {
            // Below a missing component nothing is there, unless a `..` came
            // back up, which left the end unknown.
            if end.is_some() {
                end = Some(EntryKind::Missing);
            }
            continue;
        }
        match lookup.kind(&current) {
            Ok(EntryKind::Symlink) => {
                links += 1;
                if links > MAX_SYMLINKS {
                    return Err(PathError::SymlinkLoop(abs.to_path_buf()));
                }
                let target =
                    lookup
                        .read_link(&current)
                        .map_err(|source| PathError::Unreadable {
                            path: current.clone(),
                            source,
                        })?;
                current.pop();
                end = None;
                // The target's components replace this one; an absolute target
                // restarts from `/`.
                push_components_rev(&target, &mut pending);
            }
            Ok(EntryKind::Missing) => {
                missing = true;
                end = Some(EntryKind::Missing);
            }
            Ok(kind) => end = Some(kind),
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

fn is_missing(e: &io::Error) -> bool {
    // ENOTDIR: a component below a regular file; it cannot exist either.
    e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(20)
}

/// Pushes `path`'s components onto `stack` so that popping yields them in
/// order: the work list of a component-by-component walk such as
/// [`resolve_path`]'s (`/` restarts from the root, `.` and `..` stay as text).
pub fn push_components_rev(path: &Path, stack: &mut Vec<OsString>) {
    let start = stack.len();
    stack.extend(path.components().map(|c| match c {
        Component::RootDir | Component::Prefix(_) => OsString::from("/"),
        Component::CurDir => OsString::from("."),
        Component::ParentDir => OsString::from(".."),
        Component::Normal(s) => s.to_os_string(),
    }));
    stack[start..].reverse();
}
