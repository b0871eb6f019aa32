//! The command's exit code as bubblewrap reports it (`--json-status-fd`),
//! which comes before bubblewrap itself exits.
//!
//! When a confined command exits, bubblewrap's monitor reaps the sandbox's
//! init (by then every process of the sandbox is gone and its mount
//! namespace torn down), writes `{ "exit-code": N }` to the status channel,
//! and exits. Its own exit then tears down the namespace the staging
//! overlays were mounted in, which takes milliseconds (the kernel waits for
//! a grace period before it frees the mounts). A caller that reads the
//! code here can judge and land the staged writes meanwhile, and reap
//! bubblewrap afterwards; nothing of the sandbox can write by then.

use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

/// The read end of bubblewrap's status channel, and the write end until the
/// command is spawned. Keep it until the command has exited: bubblewrap
/// writing to a channel nobody reads would be killed by `SIGPIPE`.
#[derive(Debug)]
pub struct ExitReport {
    read: UnixStream,
    write: Option<OwnedFd>,
    /// Whether a first read has returned (the low-water mark is 1 since).
    woken: bool,
}

/// How many bytes wake the first read. Bubblewrap writes its first
/// document (`{ "child-pid": …, "ipc-namespace": …, … }`, at least 135
/// bytes: the five namespaces a confined command always gets, ten-digit
/// ids each) in eight writes while the sandbox's init waits for it to
/// finish; a reader woken by each would take the processor from it eight
/// times on the way to the command. (Were it shorter, the code would still
/// be read, once bubblewrap is gone.)
const FIRST_WAKE: libc::c_int = 128;

/// Sets the socket's receive low-water mark: a read waits until that many
/// bytes are there (or the writer is gone).
fn set_low_water(socket: &UnixStream, bytes: libc::c_int) -> io::Result<()> {
    // SAFETY: a valid descriptor and an int option of the size given.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVLOWAT,
            (&raw const bytes).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl ExitReport {
    /// A new status channel (both ends close on `exec`; the write end is
    /// passed to bubblewrap by [`ExitReport::inherit_in_child`]): a socket
    /// pair rather than a pipe, so that the reader is woken only once
    /// bubblewrap's first document is mostly written ([`FIRST_WAKE`]).
    pub(crate) fn new() -> io::Result<ExitReport> {
        let (read, write) = UnixStream::pair()?;
        set_low_water(&read, FIRST_WAKE)?;
        Ok(ExitReport {
            read,
            write: Some(write.into()),
            woken: false,
        })
    }

    /// The write end's number, for `--json-status-fd`.
    pub(crate) fn write_fd(&self) -> Option<RawFd> {
        self.write.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// In the forked child, before `exec`: keeps the write end open across
    /// it. Only `fcntl`: safe in a `pre_exec` hook.
    pub(crate) fn inherit_in_child(fd: RawFd) -> io::Result<()> {
        // SAFETY: flags only on a descriptor this process holds.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Once the command is spawned: waits until bubblewrap reports the
    /// command's exit code (128 + the signal for a command killed by one,
    /// as bubblewrap's own exit status says). `None` when bubblewrap exited
    /// without reporting one (it failed to set the sandbox up): the caller
    /// then takes bubblewrap's own exit status.
    pub fn exit_code(&mut self) -> Option<i32> {
        // Only bubblewrap holds the write end from here on, so the channel
        // ends when it exits.
        self.write = None;
        let mut text = Vec::new();
        let mut buf = [0u8; 1024];
        loop {
            if let Some(code) = parse_exit_code(&text) {
                return Some(code);
            }
            match self.read.read(&mut buf) {
                Ok(0) => return None,
                Ok(n) => {
                    text.extend_from_slice(&buf[..n]);
                    // From here on every byte counts: the exit code's
                    // document is short and comes last.
                    if !self.woken {
                        self.woken = true;
                        if set_low_water(&self.read, 1).is_err() {
                            return None;
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
    }
}

/// The number after `"exit-code":` in bubblewrap's status documents, once
/// it is complete (a `}` follows).
fn parse_exit_code(text: &[u8]) -> Option<i32> {
    const KEY: &[u8] = b"\"exit-code\"";
    let at = text.windows(KEY.len()).position(|w| w == KEY)? + KEY.len();
    let rest = &text[at..];
    let end = rest.iter().position(|b| *b == b'}')?;
    let value = std::str::from_utf8(&rest[..end]).ok()?;
    value.trim().strip_prefix(':')?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_code_is_read_from_bubblewraps_status_documents() {
        let docs =
            b"{ \"child-pid\": 12, \"mnt-namespace\": 4026532214 }\n{ \"exit-code\": 143 }\n";
        assert_eq!(parse_exit_code(docs), Some(143));
        assert_eq!(parse_exit_code(b"{ \"exit-code\": 1"), None, "incomplete");
        assert_eq!(parse_exit_code(b"{ \"child-pid\": 12 }\n"), None);
    }

    /// The first read waits for most of bubblewrap's first document (at
    /// least 135 bytes), never past the exit code that follows it: the
    /// code is read while the writer still holds its end. A first document
    /// shorter than the wait (no bubblewrap writes one) still gives the
    /// code, once the writer is gone.
    #[test]
    fn the_exit_code_is_read_before_the_writer_is_gone() {
        #![allow(clippy::unwrap_used)]
        use std::io::Write;
        for (first, held) in [
            (
                format!(
                    "{{ \"child-pid\": 7{} }}\n",
                    ", \"ipc-namespace\": 4026532214".repeat(5)
                ),
                true,
            ),
            ("{ \"child-pid\": 7 }\n".to_string(), false),
        ] {
            let mut report = ExitReport::new().unwrap();
            let fd = report.write.as_ref().unwrap().try_clone().unwrap();
            let (done, closed) = std::sync::mpsc::channel::<()>();
            let writer = std::thread::spawn(move || {
                let mut w = std::fs::File::from(fd);
                for chunk in first.as_bytes().chunks(29) {
                    w.write_all(chunk).unwrap();
                }
                w.write_all(b"{ \"exit-code\": 3 }\n").unwrap();
                if !held {
                    return true;
                }
                // Held until the code is read (or long after, if the
                // reader waited for the end instead).
                closed
                    .recv_timeout(std::time::Duration::from_secs(20))
                    .is_ok()
            });
            assert_eq!(report.exit_code(), Some(3));
            let _ = done.send(());
            assert!(writer.join().unwrap(), "the code was read only at the end");
        }
    }
}
