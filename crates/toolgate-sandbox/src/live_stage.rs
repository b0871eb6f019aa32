//! Staged writes of a process that outlives one call: a long-running server
//! (an upstream MCP server) writes into an overlay of each root for its
//! whole life, and what it changed is judged, and landed or set back, at
//! each settling (after each of its calls, and at the end).
//!
//! # Why this design
//!
//! The kernel's overlay documentation says that changing the lower or the
//! upper layer of a mounted overlay is undefined. A one-shot command's
//! staging ([`crate::stage`]) never does: the overlay is gone when the
//! command exits, and only then is the upper layer read and renamed from.
//! A server keeps its overlay mounted, so here:
//!
//! - **The upper layer is only read while mounted**, never changed:
//!   [`Staging::changes_with`] reads it without the clean-ups the one-shot
//!   walk makes in it, and what is accepted lands by **copying** out of it
//!   into the real location ([`Staging::land_with`]), not by renaming.
//! - **What did not land is set back through the overlay itself**: the
//!   overlay as the server sees it is reached from toolgate through
//!   `/proc/PID/root` of the sandbox's outermost process (bubblewrap, which
//!   runs in the mount namespace where the overlay is mounted), and each
//!   refused path is made there what the real location holds — a created
//!   file removed, a modified one written back, a deleted one made again.
//!   These are ordinary writes to a mounted overlay (the kernel copies up
//!   and makes whiteouts itself), so they are defined, and the server then
//!   sees of its refused writes exactly what the location holds: not its
//!   own version, and not a file that is not there. Every step is
//!   relative to a directory descriptor and resolved with `openat2`
//!   beneath it, following no symbolic link and crossing no mount, so a
//!   link the server planted leads nowhere.
//! - **The lower layer is the live location.** The person and other tools
//!   change it while the server runs, as they do while a bash command runs;
//!   the kernel promises no crash or deadlock for that, and a path the
//!   server has copied up (written, or set back) is served from the upper
//!   layer, so landing a copy of it into the location does not change what
//!   the server sees. A real path changed by someone else since the last
//!   settling is never overwritten ([`crate::Change::changed_outside`]); it is
//!   set back in the overlay to the person's version.
//!
//! After a settling, every changed path either landed (the location holds
//! the upper layer's version) or was set back (the overlay holds the
//! location's): both sides agree, and the next settling does not look into
//! those files again unless either side changed since (status change times).

use std::collections::HashSet;
use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::SandboxError;
use crate::stage::{Change, ChangeKind, LandingJournal, Staging};

/// `statfs`'s file-system type of an overlay.
const OVERLAYFS_SUPER_MAGIC: i64 = 0x794c_7630;

/// The staged writes of a long-running confined process: made from the
/// [`Staging`] of its [`crate::Confined`], then [`LiveStaging::attach`]ed to
/// the process once it runs.
#[derive(Debug)]
pub struct LiveStaging {
    staging: Staging,
    /// Per root: the root itself, and the overlay over it as the process
    /// sees it (a descriptor of the overlay's root directory).
    views: Vec<(PathBuf, OwnedFd)>,
    /// When the last settled reading of the upper layers began, by the
    /// file system's clock ([`Staging::fs_now`]): a file whose status
    /// changed on neither side since then is settled. (The start, not the
    /// end, of the settling: what the process wrote while it was being
    /// settled is read again.)
    settled_from: i128,
    /// When the reading in progress began.
    reading_from: i128,
    /// Every path that landed (and was not deleted by a later landing).
    landed: HashSet<PathBuf>,
}

/// A path that could not be set back in the process's view, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotReset {
    /// The path in the real location.
    pub path: PathBuf,
    /// Why.
    pub error: String,
}

impl LiveStaging {
    /// Wraps the staging of a command that will outlive a call.
    pub fn new(staging: Staging) -> LiveStaging {
        let from = staging.fs_now();
        LiveStaging {
            staging,
            views: Vec::new(),
            settled_from: from,
            reading_from: from,
            landed: HashSet::new(),
        }
    }

    /// The staging underneath (for reading staged content).
    pub fn staging(&self) -> &Staging {
        &self.staging
    }

    /// Reaches the overlays through `pid`, the sandbox's outermost process
    /// (the one the confined command spawned: bubblewrap, in the mount
    /// namespace where the overlays are mounted). Call it as soon as the
    /// process runs. Fails when a root is not an overlay there.
    pub fn attach(&mut self, pid: u32) -> Result<(), SandboxError> {
        let mut views = Vec::new();
        for root in self.staging.roots() {
            let at = Path::new("/proc")
                .join(pid.to_string())
                .join("root")
                .join(root.strip_prefix("/").unwrap_or(root));
            let fd = open_path(&at).map_err(|e| {
                SandboxError::Setup(format!(
                    "staging: cannot reach the overlay of {} in process {pid}: {e}",
                    root.display()
                ))
            })?;
            if fs_type(&fd) != Some(OVERLAYFS_SUPER_MAGIC) {
                return Err(SandboxError::Setup(format!(
                    "staging: {} is not an overlay in process {pid}",
                    root.display()
                )));
            }
            views.push((root.to_path_buf(), fd));
        }
        self.views = views;
        Ok(())
    }

    /// Every path the process changed that is not settled: changed since
    /// the last settling, on either side (see [`Staging::changes`]). Follow
    /// it with [`LiveStaging::land`] and [`LiveStaging::reset`].
    pub fn changes(&mut self) -> Result<Vec<Change>, SandboxError> {
        self.reading_from = self.staging.fs_now();
        let mut changes = self.staging.changes_with(Some(self.settled_from))?;
        if changes.is_empty() {
            self.settled_from = self.reading_from;
        }
        // A path that landed at an earlier settling and shows as created
        // now was removed from the location since (a person deleted it):
        // that removal stands, and what is below it is not the process's
        // to bring back.
        let mut gone: Vec<PathBuf> = Vec::new();
        for c in &mut changes {
            if gone.iter().any(|g| c.path.starts_with(g)) {
                c.changed_outside = true;
                continue;
            }
            if c.kind != ChangeKind::Created {
                continue;
            }
            if self.landed.contains(&c.path) {
                c.changed_outside = true;
                if c.dir {
                    gone.push(c.path.clone());
                }
            }
        }
        Ok(changes)
    }

    /// Lands the accepted changes by copying them out of the upper layer
    /// (see [`Staging::land`]).
    pub fn land(
        &mut self,
        changes: &[Change],
        accepted: &HashSet<PathBuf>,
        journal: Box<dyn LandingJournal>,
    ) -> Result<Option<String>, SandboxError> {
        let id = self.staging.land_with(changes, accepted, journal, true)?;
        if id.is_some() {
            for c in changes
                .iter()
                .filter(|c| accepted.contains(&c.path) && !c.changed_outside)
            {
                if c.kind == ChangeKind::Deleted {
                    self.landed.remove(&c.path);
                } else {
                    self.landed.insert(c.path.clone());
                }
            }
        }
        Ok(id)
    }

    /// Sets each of `changes` whose path is not in `landed` (or that was
    /// changed outside) back, in the
    /// process's view, to what the real location holds, in path order;
    /// then starts the clock for the next settling. Returns the paths that
    /// could not be set back (the process then still sees its own version
    /// there; nothing of it is in the location).
    pub fn reset(&mut self, changes: &[Change], landed: &HashSet<PathBuf>) -> Vec<NotReset> {
        let mut failed = Vec::new();
        // A path changed outside never lands, whatever the verdict.
        let set_back_here = |c: &&Change| c.changed_outside || !landed.contains(&c.path);
        for c in changes.iter().filter(set_back_here) {
            let Some((root, view)) = self
                .views
                .iter()
                .filter(|(r, _)| c.path.starts_with(r))
                .max_by_key(|(r, _)| r.as_os_str().len())
            else {
                continue;
            };
            if let Err(e) = set_back(root, view, &c.path) {
                tracing::warn!(path = %c.path.display(), error = %e, "could not set a refused write back in the server's view");
                failed.push(NotReset {
                    path: c.path.clone(),
                    error: e.to_string(),
                });
            }
        }
        // From now on a change of a real path is someone else's (this
        // settling's own landing is done); and what was read is settled.
        self.staging.restart_clock(crate::now_nanos());
        self.settled_from = self.reading_from;
        failed
    }
}

/// What is at a path, without following a link.
enum Entry {
    Absent,
    Dir(u32),
    File(u32),
    Link(PathBuf),
    Other,
}

fn entry_at(dir: &OwnedFd, name: &CString) -> io::Result<Entry> {
    // SAFETY: a zeroed `stat` is a valid buffer for fstatat to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor, C string and buffer.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::NotFound {
            Ok(Entry::Absent)
        } else {
            Err(e)
        };
    }
    let mode = st.st_mode & 0o7777;
    Ok(match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR => Entry::Dir(mode),
        libc::S_IFREG => Entry::File(mode),
        libc::S_IFLNK => Entry::Link(read_link_at(dir, name)?),
        _ => Entry::Other,
    })
}

/// Makes `path` in the view (the overlay over `root`) what it is in the
/// real location: one path, not what is below it (a refused change below
/// it is its own).
fn set_back(root: &Path, view: &OwnedFd, path: &Path) -> io::Result<()> {
    let rel = path
        .strip_prefix(root)
        .map_err(|_| io::Error::other("outside the root"))?;
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Ok(());
    };
    let name = CString::new(name.as_bytes()).map_err(io::Error::other)?;
    let real_root = open_path(root)?;
    // What the location holds: a parent reached through a link is not the
    // place the overlay shows, so it counts as absent.
    let real_parent = match open_beneath(&real_root, parent, libc::O_PATH | libc::O_DIRECTORY) {
        Ok(fd) => Some(fd),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::ENOENT | libc::ELOOP | libc::ENOTDIR)
            ) =>
        {
            None
        }
        Err(e) => return Err(e),
    };
    let real = match &real_parent {
        Some(p) => entry_at(p, &name)?,
        None => Entry::Absent,
    };
    let view_parent = match open_beneath(view, parent, libc::O_PATH | libc::O_DIRECTORY) {
        Ok(fd) => fd,
        // Nothing to take away where the parent is gone; and nothing can be
        // put back below a parent that is not there (its own change, set
        // back first, would have made it).
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::ENOENT | libc::ELOOP | libc::ENOTDIR)
            ) =>
        {
            return match real {
                Entry::Absent => Ok(()),
                _ => Err(e),
            };
        }
        Err(e) => return Err(e),
    };
    let seen = entry_at(&view_parent, &name)?;
    match (real, &real_parent) {
        (Entry::Absent | Entry::Other, _) | (_, None) => remove_at(&view_parent, &name, &seen),
        (Entry::Dir(mode), _) => {
            if !matches!(seen, Entry::Dir(_)) {
                remove_at(&view_parent, &name, &seen)?;
                // SAFETY: a valid descriptor and C string.
                if unsafe { libc::mkdirat(view_parent.as_raw_fd(), name.as_ptr(), 0o700) } != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            chmod_at(&view_parent, &name, mode)
        }
        (Entry::File(mode), Some(real_parent)) => {
            let tmp = temp_name(&name);
            let result = write_copy(real_parent, &name, &view_parent, &tmp, mode)
                .and_then(|()| replace_at(&view_parent, &tmp, &name, &seen));
            if result.is_err() {
                // SAFETY: a valid descriptor and C string.
                unsafe { libc::unlinkat(view_parent.as_raw_fd(), tmp.as_ptr(), 0) };
            }
            result
        }
        (Entry::Link(target), _) => {
            let tmp = temp_name(&name);
            let target = CString::new(target.as_os_str().as_bytes()).map_err(io::Error::other)?;
            // SAFETY: valid C strings and descriptor.
            if unsafe { libc::symlinkat(target.as_ptr(), view_parent.as_raw_fd(), tmp.as_ptr()) }
                != 0
            {
                return Err(io::Error::last_os_error());
            }
            let result = replace_at(&view_parent, &tmp, &name, &seen);
            if result.is_err() {
                // SAFETY: as above.
                unsafe { libc::unlinkat(view_parent.as_raw_fd(), tmp.as_ptr(), 0) };
            }
            result
        }
    }
}

/// A name beside `name` for a copy being made.
fn temp_name(name: &CString) -> CString {
    let mut bytes = b".toolgate-setback-".to_vec();
    bytes.extend_from_slice(crate::now_nanos().to_string().as_bytes());
    bytes.push(b'-');
    bytes.extend_from_slice(name.as_bytes());
    bytes.truncate(255);
    CString::new(bytes).unwrap_or_else(|_| c".toolgate-setback".to_owned())
}

/// Renames `tmp` over `name` in `dir`; a directory there (`seen`) goes first.
fn replace_at(dir: &OwnedFd, tmp: &CString, name: &CString, seen: &Entry) -> io::Result<()> {
    if matches!(seen, Entry::Dir(_)) {
        remove_at(dir, name, seen)?;
    }
    // SAFETY: valid descriptors and C strings.
    if unsafe {
        libc::renameat(
            dir.as_raw_fd(),
            tmp.as_ptr(),
            dir.as_raw_fd(),
            name.as_ptr(),
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Removes what `seen` says is at `name` in `dir`: a whole tree for a
/// directory, walked by descriptors.
fn remove_at(dir: &OwnedFd, name: &CString, seen: &Entry) -> io::Result<()> {
    match seen {
        Entry::Absent => Ok(()),
        Entry::Dir(_) => {
            let sub = open_beneath(
                dir,
                Path::new(OsStr::from_bytes(name.as_bytes())),
                libc::O_RDONLY | libc::O_DIRECTORY,
            )?;
            for child in list_dir(&sub)? {
                let entry = entry_at(&sub, &child)?;
                remove_at(&sub, &child, &entry)?;
            }
            // SAFETY: a valid descriptor and C string.
            if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) } != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        }
        _ => {
            // SAFETY: a valid descriptor and C string.
            if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } != 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::NotFound {
                    return Err(e);
                }
            }
            Ok(())
        }
    }
}

/// The names in an open directory.
fn list_dir(dir: &OwnedFd) -> io::Result<Vec<CString>> {
    // Read through our own descriptor's /proc link: the directory it is,
    // wherever that is now.
    let at = PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()));
    let mut out = Vec::new();
    for e in std::fs::read_dir(at)? {
        out.push(CString::new(e?.file_name().as_bytes()).map_err(io::Error::other)?);
    }
    Ok(out)
}

fn chmod_at(dir: &OwnedFd, name: &CString, mode: u32) -> io::Result<()> {
    // Through a descriptor opened beneath, so that a link swapped in
    // meanwhile is not followed.
    let fd = open_beneath(
        dir,
        Path::new(OsStr::from_bytes(name.as_bytes())),
        libc::O_RDONLY | libc::O_DIRECTORY,
    )?;
    std::fs::File::from(fd).set_permissions(std::fs::Permissions::from_mode(mode))
}

/// Copies the real file `name` of `real_dir` into a new file `tmp` of
/// `view_dir` with `mode`.
fn write_copy(
    real_dir: &OwnedFd,
    name: &CString,
    view_dir: &OwnedFd,
    tmp: &CString,
    mode: u32,
) -> io::Result<()> {
    // SAFETY: a valid descriptor and C string; the result is checked.
    let src = unsafe {
        libc::openat(
            real_dir.as_raw_fd(),
            name.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if src < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened and owned by nobody else.
    let mut src = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(src) });
    // SAFETY: as above.
    let dst = unsafe {
        libc::openat(
            view_dir.as_raw_fd(),
            tmp.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o600 as libc::c_uint,
        )
    };
    if dst < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    let mut dst = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(dst) });
    io::copy(&mut src, &mut dst)?;
    dst.set_permissions(std::fs::Permissions::from_mode(mode))
}

fn read_link_at(dir: &OwnedFd, name: &CString) -> io::Result<PathBuf> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: a valid descriptor, C string and buffer of the given length.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
    buf.truncate(n);
    Ok(PathBuf::from(OsStr::from_bytes(&buf)))
}

/// Opens a directory by an absolute path of ours (`O_PATH`).
fn open_path(p: &Path) -> io::Result<OwnedFd> {
    let c = CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: a valid C string; the result is checked.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens `rel` beneath `dir` with `openat2`: no `..`, no symbolic link, no
/// magic link and no other mount on the way. An empty `rel` is `dir`
/// itself.
fn open_beneath(dir: &OwnedFd, rel: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(io::Error::from_raw_os_error(libc::EXDEV));
    }
    let path = if rel.as_os_str().is_empty() {
        CString::new(".").map_err(io::Error::other)?
    } else {
        CString::new(rel.as_os_str().as_bytes()).map_err(io::Error::other)?
    };
    // SAFETY: `open_how` is plain integers; all zero is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = u64::try_from(flags | libc::O_CLOEXEC | libc::O_NOFOLLOW).unwrap_or(0);
    how.resolve = libc::RESOLVE_BENEATH
        | libc::RESOLVE_NO_SYMLINKS
        | libc::RESOLVE_NO_MAGICLINKS
        | libc::RESOLVE_NO_XDEV;
    // SAFETY: a valid descriptor, C string and `open_how` of the size given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            path.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = RawFd::try_from(fd).map_err(io::Error::other)?;
    // SAFETY: a descriptor just opened and owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The file-system type of an open descriptor.
fn fs_type(fd: &OwnedFd) -> Option<i64> {
    // SAFETY: a zeroed `statfs` is a valid buffer for fstatfs to fill.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and buffer.
    if unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    Some(st.f_type as i64)
}
