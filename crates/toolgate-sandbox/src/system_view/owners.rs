//! The system's trees shown with no file owned by the command's user, so
//! that the kernel's own permission check hides what other users may not
//! read: no walk, no list, nothing to keep fresh.
//!
//! A command run as root owns every root-owned file, and file modes do not
//! stop an owner: `/usr/lib/app/secret.key` with mode 0600 is readable by a
//! root command whatever the sandbox masks, and the packaged trees (`/usr`,
//! `/bin`, `/lib`…, `/nix`, `/snap`) hold tens of thousands of directories,
//! too many to walk or even to `stat` on every run. So, when toolgate runs
//! as root, each system top-level directory is shown through an *idmapped*
//! mount (Linux 5.12+, `mount_setattr(MOUNT_ATTR_IDMAP)`) under which uid 0
//! and gid 0 appear as `nobody` (65534) and every other owner as unmapped:
//! the command is never the owner nor in the group of a file there, and the
//! kernel grants it exactly the *other* permission bits — what any other
//! user of the machine may read, at any depth, created a moment ago or
//! long since.
//!
//! The mounts are made by the parent (creating an idmapped mount takes
//! `CAP_SYS_ADMIN` over the file system, i.e. root outside any user
//! namespace) as detached trees (`open_tree(OPEN_TREE_CLONE)`), and attached
//! by the child in its own mount namespace before bubblewrap starts
//! (`move_mount`), so bubblewrap's view of the host carries them.
//! Where the kernel or the file system refuses (a container without
//! `CAP_SYS_ADMIN`, a file system without idmap support), the tree is not
//! mapped and the caller walks it as before.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The uid and gid that root's files appear to have: the kernel's usual
/// overflow id (`nobody`/`nogroup`), never the caller's (root).
const SHOWN_OWNER: u32 = 65534;

/// The system's trees, mapped and ready to attach in the child.
#[derive(Debug, Default)]
pub(crate) struct OthersView {
    /// `(detached mount, where it goes)`.
    trees: Vec<(OwnedFd, CString)>,
    /// The top-level directories mapped.
    tops: Vec<PathBuf>,
}

impl OthersView {
    /// Maps each of `tops` (directories) that the kernel lets this process
    /// map; the others are left out (see [`OthersView::tops`]). Nothing is
    /// tried unless this process runs as root: for any other user the
    /// kernel refuses, and a user's own files are its own.
    pub(crate) fn prepare(tops: &[PathBuf]) -> OthersView {
        let mut view = OthersView::default();
        // SAFETY: geteuid has no preconditions and cannot fail.
        if tops.is_empty() || unsafe { libc::geteuid() } != 0 {
            return view;
        }
        let userns = match mapping_namespace() {
            Ok(fd) => fd,
            Err(e) => {
                tracing::debug!("no idmapped system view: cannot make its user namespace: {e}");
                return view;
            }
        };
        for top in tops {
            match mapped_tree(top, &userns) {
                Ok(tree) => {
                    let Ok(target) = CString::new(top.as_os_str().as_bytes()) else {
                        continue;
                    };
                    view.trees.push((tree, target));
                    view.tops.push(top.clone());
                }
                Err(e) => {
                    tracing::debug!(top = %top.display(), "not idmapped, walked instead: {e}");
                }
            }
        }
        view
    }

    /// The top-level directories whose files the command sees as any other
    /// user does, by the kernel's permission check.
    pub(crate) fn tops(&self) -> &[PathBuf] {
        &self.tops
    }

    /// In the child, in its own user and mount namespace (before
    /// bubblewrap): puts each mapped tree over its directory. Only system
    /// calls on memory made before the fork: safe in a `pre_exec` hook.
    pub(crate) fn attach(&self) -> io::Result<()> {
        for (tree, target) in &self.trees {
            // SAFETY: a valid descriptor and C strings; flags only.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_move_mount,
                    tree.as_raw_fd(),
                    c"".as_ptr(),
                    libc::AT_FDCWD,
                    target.as_ptr(),
                    libc::MOVE_MOUNT_F_EMPTY_PATH,
                )
            };
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// `top` cloned as a detached tree (with the mounts below it) and mapped
/// through `userns`.
fn mapped_tree(top: &Path, userns: &OwnedFd) -> io::Result<OwnedFd> {
    let path = CString::new(top.as_os_str().as_bytes()).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: a valid C string; flags only.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC | libc::AT_RECURSIVE as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| io::ErrorKind::InvalidData)?;
    // SAFETY: open_tree returned this new descriptor, owned by nobody else.
    let tree = unsafe { OwnedFd::from_raw_fd(fd) };
    let attr = libc::mount_attr {
        attr_set: libc::MOUNT_ATTR_IDMAP,
        attr_clr: 0,
        propagation: 0,
        userns_fd: u64::try_from(userns.as_raw_fd()).map_err(|_| io::ErrorKind::InvalidData)?,
    };
    // SAFETY: a valid descriptor, an empty C string with AT_EMPTY_PATH, and
    // a `mount_attr` of the size given.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH | libc::AT_RECURSIVE,
            &attr as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(tree)
}

/// A user namespace that maps uid 0 and gid 0 to [`SHOWN_OWNER`] and
/// nothing else: the mapping of the idmapped trees. A process is needed to
/// make one; it is cloned sharing this one's memory (nothing to copy), only
/// waits until the namespace is open, and exits.
fn mapping_namespace() -> io::Result<OwnedFd> {
    let mut pipe = [0; 2];
    // SAFETY: a valid array of two ints.
    if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 returned these new descriptors.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(pipe[0]), OwnedFd::from_raw_fd(pipe[1])) };
    let mut stack = vec![0u8; 64 * 1024];
    let mut fds = Box::new([read.as_raw_fd(), write.as_raw_fd()]);
    extern "C" fn wait_for_parent(arg: *mut libc::c_void) -> libc::c_int {
        // The only thing this process does: block until the parent has
        // opened the namespace (a byte) or is gone (its end closed), then
        // return (the clone wrapper exits). Its own copy of the write end
        // is closed first, so that a parent killed meanwhile ends it too.
        // SAFETY: `arg` points at the parent's two descriptors, alive until
        // the parent has waited for this process (the memory is shared).
        let [read, write] = unsafe { *arg.cast::<[libc::c_int; 2]>() };
        let mut byte = 0u8;
        // SAFETY: closes this process's own copy of a descriptor, then
        // reads at most one byte into a valid local.
        unsafe {
            libc::close(write);
            libc::read(read, (&raw mut byte).cast(), 1)
        };
        0
    }
    // SAFETY: the stack and `fds` stay valid for the child's whole life
    // (the parent waits for it below before dropping them); the child only
    // calls `close` and `read`.
    let pid = unsafe {
        let top = stack.as_mut_ptr().add(stack.len());
        let top = top.sub(top as usize % 16);
        libc::clone(
            wait_for_parent,
            top.cast(),
            libc::CLONE_NEWUSER | libc::CLONE_VM | libc::SIGCHLD,
            fds.as_mut_ptr().cast(),
        )
    };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    let opened = (|| {
        let map = format!("0 {SHOWN_OWNER} 1");
        std::fs::write(format!("/proc/{pid}/uid_map"), &map)?;
        std::fs::write(format!("/proc/{pid}/gid_map"), &map)?;
        std::fs::File::open(format!("/proc/{pid}/ns/user")).map(OwnedFd::from)
    })();
    // SAFETY: writes one byte from a valid local.
    unsafe { libc::write(write.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
    drop(write);
    let mut status = 0;
    // SAFETY: waits for the child just cloned; `status` is a valid int.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    drop((stack, fds));
    opened
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn nothing_is_mapped_for_an_ordinary_user_or_without_tops() {
        assert!(OthersView::prepare(&[]).tops().is_empty());
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            assert!(
                OthersView::prepare(&[PathBuf::from("/usr")])
                    .tops()
                    .is_empty()
            );
        }
    }

    #[test]
    fn a_tree_that_is_not_a_directory_is_left_out() {
        let view = OthersView::prepare(&[PathBuf::from("/nonexistent-toolgate-top")]);
        assert!(view.tops().is_empty());
    }
}
