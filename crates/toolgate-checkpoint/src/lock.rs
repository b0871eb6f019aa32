//! A checkpoint held by one process: an advisory `flock` on its directory
//! (no file of its own to make), released when the process ends, so a crash
//! never leaves it held. It follows the directory when it is renamed.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// A held checkpoint lock.
#[derive(Debug)]
pub(crate) struct Lock(#[allow(dead_code)] File);

impl Lock {
    /// Takes the lock of the checkpoint in `dir`, waiting for no one: it
    /// was just made, so no one else holds it.
    pub(crate) fn take(dir: &Path) -> io::Result<Lock> {
        Lock::try_take(dir)?.ok_or_else(|| io::Error::other(format!("{} is locked", dir.display())))
    }

    /// The lock, or `None` when another process holds it.
    pub(crate) fn try_take(dir: &Path) -> io::Result<Option<Lock>> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(dir)?;
        // SAFETY: flock on a descriptor this function owns; no memory is shared.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(Some(Lock(file)));
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(None)
        } else {
            Err(err)
        }
    }
}
