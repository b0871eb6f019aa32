//! Opening and writing files exactly where they were judged.
//!
//! Every path the file tools act on was resolved first (symlinks followed,
//! `.`/`..` folded: see [`toolgate_core::Location`]), and that resolved path is
//! what the gate judged. Opening it again by name would follow whatever
//! symlink a concurrent call swapped in meanwhile. So the path is opened with
//! `openat2(RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`, and inside a
//! location root additionally beneath the root's directory handle
//! (`RESOLVE_BENEATH`): the kernel walks exactly the components that were
//! judged, and a symlink anywhere on the way (which the resolved path cannot
//! contain) fails the call with [`changed`] instead of being followed.
//!
//! Writes go through a temporary sibling created in the parent directory's
//! handle and renamed within that same handle (`renameat`), so the file that
//! replaces the old one is in the directory that was judged.
//!
//! On kernels without `openat2` (before Linux 5.6) the same walk is done one
//! component at a time with `openat(O_NOFOLLOW)`.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rustix::fs::{AtFlags, CWD, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use toolgate_core::{Location, ToolError};

static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);
/// Set once `openat2` said it does not exist here.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// The error for a path that no longer is what was judged: a symlink (or a
/// directory replaced by one) appeared on the way after the decision.
pub fn changed(path: &Path) -> ToolError {
    ToolError::Failed(format!(
        "{} changed after it was judged (a symbolic link appeared on the way); \
         nothing was done",
        path.display()
    ))
}

/// Whether an OS error means "a symlink was on the way" (`ELOOP` from
/// `RESOLVE_NO_SYMLINKS` or `O_NOFOLLOW`, `EXDEV` from `RESOLVE_BENEATH`,
/// `ENOTDIR` from `O_DIRECTORY|O_NOFOLLOW` on a link).
pub fn is_swap(e: &io::Error) -> bool {
    let code = e.raw_os_error();
    code == Some(Errno::LOOP.raw_os_error()) || code == Some(Errno::XDEV.raw_os_error())
}

/// Maps an open error on `path` to the tool's error: a swap is [`changed`].
pub fn open_error(path: &Path, what: &str, e: io::Error) -> ToolError {
    if is_swap(&e) {
        return changed(path);
    }
    if e.kind() == io::ErrorKind::NotFound {
        return ToolError::Failed(format!("file not found: {}", path.display()));
    }
    ToolError::io(format!("cannot {what} {}", path.display()), e)
}

/// Fails unless `path` is absolute and has only plain components: what the
/// resolver produces, and what opening without following symlinks needs.
fn check_resolved(path: &Path) -> io::Result<()> {
    let plain = path.is_absolute()
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if plain {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a resolved path", path.display()),
        ))
    }
}

/// The location root `path` lies under, and the rest of the path.
fn split_root<'p>(location: Option<&Location>, path: &'p Path) -> Option<(&'p Path, &'p Path)> {
    let location = location?;
    let root = location.roots().find(|r| path.starts_with(r))?;
    let rest = path.strip_prefix(root).ok()?;
    let len = root.as_os_str().len();
    let root = Path::new(OsStr::from_bytes(&path.as_os_str().as_bytes()[..len]));
    Some((root, rest))
}

/// Opens the resolved `path` with `flags`, following no symlink on the way:
/// beneath its location root when it lies inside one, else from `/`.
pub fn open_resolved(
    location: Option<&Location>,
    path: &Path,
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    check_resolved(path)?;
    let flags = flags | OFlags::CLOEXEC;
    let strict = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    if let Some((root, rest)) = split_root(location, path) {
        let dir = open_nofollow(
            CWD,
            root,
            OFlags::PATH | OFlags::DIRECTORY,
            Mode::empty(),
            strict,
        )?;
        if rest.as_os_str().is_empty() {
            return open_nofollow(dir.as_fd(), Path::new("."), flags, mode, strict);
        }
        return open_nofollow(
            dir.as_fd(),
            rest,
            flags,
            mode,
            strict | ResolveFlags::BENEATH,
        );
    }
    open_nofollow(CWD, path, flags, mode, strict)
}

/// `openat2` with `resolve`, or the component walk where it is missing.
pub(super) fn open_nofollow(
    dir: BorrowedFd<'_>,
    path: &Path,
    flags: OFlags,
    mode: Mode,
    resolve: ResolveFlags,
) -> io::Result<OwnedFd> {
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        match rustix::fs::openat2(dir, path, flags, mode, resolve) {
            Ok(fd) => return Ok(fd),
            // Not there (before Linux 5.6): walk instead, from now on.
            Err(Errno::NOSYS) => NO_OPENAT2.store(true, Ordering::Relaxed),
            // Refused, perhaps by a seccomp filter: the walk is as strict.
            Err(Errno::PERM) => {}
            // Interrupted by a concurrent rename somewhere: try once more.
            Err(Errno::AGAIN) => {
                return rustix::fs::openat2(dir, path, flags, mode, resolve).map_err(Into::into);
            }
            Err(e) => return Err(e.into()),
        }
    }
    walk_nofollow(dir, path, flags, mode)
}

/// Opens `path` below `dir` one component at a time, never following a
/// symlink (`O_NOFOLLOW`); `path` has only plain components (relative to `dir`
/// or absolute).
fn walk_nofollow(
    dir: BorrowedFd<'_>,
    path: &Path,
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    let mut parts: Vec<&OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s),
            _ => None,
        })
        .collect();
    let mut current: OwnedFd = if path.is_absolute() {
        rustix::fs::openat(
            CWD,
            "/",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?
    } else {
        rustix::fs::openat(
            dir,
            ".",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?
    };
    let Some(last) = parts.pop() else {
        return Ok(rustix::fs::openat(&current, ".", flags, mode)?);
    };
    for part in parts {
        let next = rustix::fs::openat(
            &current,
            part,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| if e == Errno::NOTDIR { Errno::LOOP } else { e })?;
        current = next;
    }
    Ok(rustix::fs::openat(
        &current,
        last,
        flags | OFlags::NOFOLLOW,
        mode,
    )?)
}

/// Opens the resolved `path` for reading (see [`open_resolved`]); without
/// blocking on a FIFO (the caller checks the kind before reading).
pub fn open_read(location: Option<&Location>, path: &Path) -> io::Result<File> {
    open_resolved(
        location,
        path,
        OFlags::RDONLY | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map(File::from)
}

/// The error of a write to `path`: a swap is [`changed`].
pub fn write_error(path: &Path, e: io::Error) -> ToolError {
    if is_swap(&e) {
        return changed(path);
    }
    ToolError::io(format!("cannot write {}", path.display()), e)
}

/// The current content of the resolved file `path` before it is replaced:
/// `None` when nothing is there (or a parent is not a directory: the write
/// reports it). A directory or a special file is an error naming it; so is a
/// hard link to a credential that was not judged as one
/// ([`location_paths::check_opened`](super::location_paths::check_opened)).
pub fn read_existing(
    location: &Location,
    path: &Path,
    judged: Option<&toolgate_core::PermissionRequest>,
) -> Result<Option<Vec<u8>>, ToolError> {
    use std::io::Read;
    let display = path.display();
    let mut file = match open_read(Some(location), path) {
        Ok(f) => f,
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(open_error(path, "inspect", e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| ToolError::io(format!("cannot inspect {display}"), e))?;
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "{display} is a directory, not a file"
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::Failed(format!(
            "{display} is {}; only regular files can be written",
            super::location_paths::special_kind(&meta)
        )));
    }
    super::location_paths::check_opened(location, path, &meta, judged)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(format!("cannot read {display}"), e))?;
    Ok(Some(bytes))
}

/// Writes `bytes` to the resolved `path` atomically: readers see the old or
/// the new content, never a mix (not synced to disk: a power loss may lose the
/// change). An existing file keeps its permissions. Missing parent directories
/// are created; the ones created are returned, outermost first, so a rollback
/// can remove them. The temporary file is created, and renamed over `path`,
/// within the handle of the parent directory opened as judged.
pub fn write_atomic(
    location: Option<&Location>,
    path: &Path,
    bytes: &[u8],
) -> io::Result<Vec<PathBuf>> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let created = create_dirs(location, parent)?;
    let result = write_in(location, parent, name, bytes);
    if result.is_err() {
        remove_dirs(&created);
    }
    result.map(|()| created)
}

fn write_in(
    location: Option<&Location>,
    parent: &Path,
    name: &OsStr,
    bytes: &[u8],
) -> io::Result<()> {
    let dir = open_resolved(
        location,
        parent,
        OFlags::PATH | OFlags::DIRECTORY,
        Mode::empty(),
    )?;
    let permissions = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st)
            if rustix::fs::FileType::from_raw_mode(st.st_mode)
                == rustix::fs::FileType::RegularFile =>
        {
            Some(Mode::from_raw_mode(st.st_mode & 0o7777))
        }
        _ => None,
    };
    let temp = format!(
        ".{}.toolgate-{}-{}.tmp",
        name.to_string_lossy(),
        std::process::id(),
        NEXT_TEMP.fetch_add(1, Ordering::Relaxed)
    );
    let result = (|| {
        let fd = rustix::fs::openat(
            &dir,
            temp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )?;
        let mut file = File::from(fd);
        file.write_all(bytes)?;
        if let Some(mode) = permissions {
            file.set_permissions(fs::Permissions::from_mode(mode.as_raw_mode()))?;
        }
        // No fsync: the rename makes the change atomic for readers, and an fsync
        // per file made a 50-file patch take ~0.5 s on a busy disk.
        rustix::fs::renameat(&dir, temp.as_str(), &dir, name)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(&dir, temp.as_str(), AtFlags::empty());
    }
    result
}

/// Removes the resolved file `path` (not following a symlink there) within
/// the handle of its parent directory opened as judged.
pub fn remove_file(location: Option<&Location>, path: &Path) -> io::Result<()> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let dir = open_resolved(
        location,
        parent,
        OFlags::PATH | OFlags::DIRECTORY,
        Mode::empty(),
    )?;
    rustix::fs::unlinkat(&dir, name, AtFlags::empty()).map_err(Into::into)
}

/// Creates `dir` and its missing ancestors, each within the handle of the
/// one above (`mkdirat`), starting from the nearest existing ancestor opened
/// as judged; returns those created, outermost first.
fn create_dirs(location: Option<&Location>, dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut missing: Vec<&OsStr> = Vec::new();
    let mut cur = dir;
    loop {
        match fs::symlink_metadata(cur) {
            Ok(m) if m.is_dir() => break,
            Ok(m) if m.file_type().is_symlink() => return Err(Errno::LOOP.into()),
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} exists and is not a directory", cur.display()),
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name);
                cur = parent;
            }
            _ => break,
        }
    }
    if missing.is_empty() {
        return Ok(Vec::new());
    }
    let mut fd = open_resolved(
        location,
        cur,
        OFlags::PATH | OFlags::DIRECTORY,
        Mode::empty(),
    )?;
    let mut path = cur.to_path_buf();
    let mut created = Vec::new();
    for name in missing.into_iter().rev() {
        path.push(name);
        match rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(0o777)) {
            Ok(()) => created.push(path.clone()),
            Err(Errno::EXIST) => {}
            Err(e) => {
                remove_dirs(&created);
                return Err(e.into());
            }
        }
        fd = match rustix::fs::openat(
            &fd,
            name,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(next) => next,
            Err(e) => {
                remove_dirs(&created);
                return Err(if e == Errno::NOTDIR { Errno::LOOP } else { e }.into());
            }
        };
    }
    Ok(created)
}

/// Removes directories created by [`write_atomic`] (innermost first), if empty.
pub fn remove_dirs(created: &[PathBuf]) {
    for d in created.iter().rev() {
        let _ = fs::remove_dir(d);
    }
}
