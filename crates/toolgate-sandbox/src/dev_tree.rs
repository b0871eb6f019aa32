//! The sandbox's `/dev`, made by the child that mounts the staging overlays
//! (in its own user and mount namespace, before bubblewrap starts) instead
//! of by bubblewrap's `--dev`, and handed to bubblewrap whole with one
//! `--dev-bind /dev /dev`.
//!
//! It holds exactly what `--dev` makes (bubblewrap 0.8): an empty tmpfs
//! with the host's `null`, `zero`, `full`, `random`, `urandom` and `tty`
//! bound in, the `stdin`, `stdout`, `stderr`, `fd` and `core` links, an
//! empty `shm` directory, a new `devpts` instance with the `ptmx` link, and
//! `console` bound to the terminal on the standard output when there is
//! one. Why: bubblewrap reads the whole mount table again after every bind
//! it makes (to remount it with its flags), six times for `--dev`'s device
//! nodes; here each node is one `move_mount`, and bubblewrap binds the
//! finished tree once.

use std::ffi::CStr;
use std::io;

/// The device nodes shown, as bubblewrap's `--dev` shows them.
const DEVICES: [(&CStr, &CStr); 6] = [
    (c"/dev/null", c"null"),
    (c"/dev/zero", c"zero"),
    (c"/dev/full", c"full"),
    (c"/dev/random", c"random"),
    (c"/dev/urandom", c"urandom"),
    (c"/dev/tty", c"tty"),
];

/// The links made in the new `/dev`: `(link, target)`.
const LINKS: [(&CStr, &CStr); 5] = [
    (c"/dev/stdin", c"/proc/self/fd/0"),
    (c"/dev/stdout", c"/proc/self/fd/1"),
    (c"/dev/stderr", c"/proc/self/fd/2"),
    (c"/dev/fd", c"/proc/self/fd"),
    (c"/dev/core", c"/proc/kcore"),
];

/// Whether this kernel has the mount API the tree is made with
/// (`open_tree` and `move_mount`, Linux 5.2): asked with a call that can
/// only fail, `ENOSYS` when it is missing.
pub(crate) fn supported() -> bool {
    // SAFETY: a bad descriptor and an empty C string; the call fails
    // before touching anything.
    let rc = unsafe { libc::syscall(libc::SYS_open_tree, -1, c"".as_ptr(), 0) };
    rc >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS)
}

/// In the forked child, in its own user and mount namespace: covers
/// `/dev` with the sandbox's own (see the module). Only system calls on
/// static strings and the stack: safe in a `pre_exec` hook.
pub(crate) fn mount_in_child() -> io::Result<()> {
    // The host's nodes and terminal are taken before `/dev` is covered.
    let mut nodes = [-1; DEVICES.len()];
    for (fd, (source, _)) in nodes.iter_mut().zip(DEVICES) {
        *fd = clone_tree(source)?;
    }
    let console = terminal_on_stdout();
    let result = fill(&nodes, console);
    for fd in nodes.into_iter().chain(console) {
        // SAFETY: descriptors this function opened.
        unsafe { libc::close(fd) };
    }
    result
}

/// The new `/dev`, with the cloned nodes (and terminal) attached.
fn fill(nodes: &[libc::c_int], console: Option<libc::c_int>) -> io::Result<()> {
    let (tmpfs, devpts) = (c"tmpfs", c"devpts");
    // SAFETY: valid C strings; a tmpfs takes its option string.
    check(unsafe {
        libc::mount(
            tmpfs.as_ptr(),
            c"/dev".as_ptr(),
            tmpfs.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            c"mode=0755".as_ptr().cast(),
        )
    })?;
    for (&fd, (source, _)) in nodes.iter().zip(DEVICES) {
        attach_file(fd, source)?;
    }
    for (link, target) in LINKS {
        // SAFETY: valid C strings.
        check(unsafe { libc::symlink(target.as_ptr(), link.as_ptr()) })?;
    }
    for dir in [c"/dev/shm", c"/dev/pts"] {
        // SAFETY: a valid C string.
        check(unsafe { libc::mkdir(dir.as_ptr(), 0o755) })?;
    }
    // SAFETY: valid C strings; devpts takes its option string.
    check(unsafe {
        libc::mount(
            devpts.as_ptr(),
            c"/dev/pts".as_ptr(),
            devpts.as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            c"newinstance,ptmxmode=0666,mode=620".as_ptr().cast(),
        )
    })?;
    // SAFETY: valid C strings.
    check(unsafe { libc::symlink(c"pts/ptmx".as_ptr(), c"/dev/ptmx".as_ptr()) })?;
    if let Some(fd) = console {
        attach_file(fd, c"/dev/console")?;
    }
    Ok(())
}

/// A detached copy of the mount at `path` (a file).
fn clone_tree(path: &CStr) -> io::Result<libc::c_int> {
    // SAFETY: a valid C string; flags only.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    libc::c_int::try_from(fd).map_err(|_| io::ErrorKind::InvalidData.into())
}

/// Makes the empty file `at` (read-only, as bubblewrap makes a node's
/// place) and attaches the detached tree `fd` over it.
fn attach_file(fd: libc::c_int, at: &CStr) -> io::Result<()> {
    // SAFETY: a valid C string; flags only.
    let file = unsafe {
        libc::open(
            at.as_ptr(),
            libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
            0o444,
        )
    };
    check(file)?;
    // SAFETY: the descriptor just opened.
    unsafe { libc::close(file) };
    // SAFETY: a valid descriptor and C strings; flags only.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            at.as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The terminal on the standard output, cloned (bubblewrap shows it as
/// `/dev/console`, which makes `ttyname` work inside); `None` when the
/// standard output is not a terminal or cannot be named.
fn terminal_on_stdout() -> Option<libc::c_int> {
    // SAFETY: `termios` is plain data; the call only fills it.
    let mut termios: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a `termios`.
    if unsafe { libc::tcgetattr(1, &mut termios) } != 0 {
        return None;
    }
    let mut name = [0u8; 256];
    // SAFETY: a valid C string and a buffer one byte shorter than given,
    // so the name stays NUL-terminated.
    let n = unsafe {
        libc::readlink(
            c"/proc/self/fd/1".as_ptr(),
            name.as_mut_ptr().cast(),
            name.len() - 1,
        )
    };
    if n <= 0 || name[0] != b'/' {
        return None;
    }
    let name = CStr::from_bytes_until_nul(&name).ok()?;
    clone_tree(name).ok()
}

/// A system call's `-1` as the error it set.
fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
