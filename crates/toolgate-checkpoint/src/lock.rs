//! A checkpoint held by one process: an advisory `flock` on its directory
//! (no file of its own to make), released when the process ends, so a crash
//! never leaves it held. It follows the directory when it is renamed.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

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
    ///
    /// A refusal is tried again for a short while: a lock this process just
    /// released can still be held for a moment by a child forked in between
    /// (it shares the descriptor until it runs its program, which closes
    /// it), and that is no other holder.
    pub(crate) fn try_take(dir: &Path) -> io::Result<Option<Lock>> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(dir)?;
        let deadline = Instant::now() + FORK_WINDOW;
        loop {
            // SAFETY: flock on a descriptor this function owns; no memory is shared.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc == 0 {
                return Ok(Some(Lock(file)));
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(err);
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// How long a held lock is tried again before it counts as another's.
const FORK_WINDOW: Duration = Duration::from_millis(200);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_held_elsewhere_is_refused_after_the_short_wait() {
        let dir = tempfile::tempdir().unwrap();
        let held = Lock::take(dir.path()).unwrap();
        assert!(Lock::try_take(dir.path()).unwrap().is_none());
        drop(held);
        assert!(Lock::try_take(dir.path()).unwrap().is_some());
    }

    #[test]
    fn a_lock_released_while_a_forked_child_still_shares_it_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let held = Lock::take(dir.path()).unwrap();
        // A child that holds the inherited descriptor (no exec, no
        // close-on-exec to close it) for 50 ms, then exits.
        // SAFETY: the child only sleeps and exits; no allocation or lock.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe {
                libc::usleep(50_000);
                libc::_exit(0);
            }
        }
        drop(held);
        let again = Lock::try_take(dir.path()).unwrap();
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(again.is_some());
    }
}
