//! Reading a small file that the gate looks into — an `.envrc`, a file it
//! loads, a git directory's `commondir` or `config`, a `.git` gitfile —
//! without ever waiting on it.
//!
//! These files are the repository's, so anything can be at their names: a
//! FIFO (opening one for reading waits for a writer), a link to `/dev/zero`
//! (a read that never ends) or to a terminal. The file is opened without
//! blocking, checked on that same handle to be a regular file of at most
//! the caller's limit, and read from it, so nothing swapped in between a
//! check and the read is read instead. Links are followed, as `git` and
//! `direnv` follow them.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! let dir = tempfile::tempdir()?;
//! let file = dir.path().join("commondir");
//! std::fs::write(&file, "../..\n")?;
//! assert_eq!(toolgate_paths::small_file::read(&file, 4096)?, b"../..\n");
//! assert!(toolgate_paths::small_file::read(std::path::Path::new("/dev/zero"), 4096).is_err());
//! # Ok(())
//! # }
//! ```

use std::fs::OpenOptions;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The bytes of the regular file at `path` (links followed), when it holds at
/// most `max` bytes. A missing file is `NotFound`; a directory, FIFO, device
/// or socket, or a file over `max` bytes, is an error naming why, at once.
pub fn read(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other(
            "not a regular file (a device, FIFO, socket or directory)",
        ));
    }
    let too_large = || io::Error::other(format!("larger than {max} bytes"));
    if meta.len() > max {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // One byte past the limit tells a file that grew since the check.
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read`] as UTF-8 text; text that is not UTF-8 is an error.
pub fn read_text(path: &Path, max: u64) -> io::Result<String> {
    String::from_utf8(read(path, max)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn mkfifo(path: &Path) {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: a C string this test owns.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn only_a_regular_file_within_the_limit_is_read_and_nothing_waits() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "hello").unwrap();
        assert_eq!(read(&plain, 5).unwrap(), b"hello");
        assert_eq!(read_text(&plain, 5).unwrap(), "hello");
        assert!(
            read(&plain, 4)
                .unwrap_err()
                .to_string()
                .contains("larger than 4")
        );
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&plain, &link).unwrap();
        assert_eq!(read(&link, 5).unwrap(), b"hello", "links are followed");
        let fifo = dir.path().join("fifo");
        mkfifo(&fifo);
        let (done, finished) = std::sync::mpsc::channel();
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let paths = [fifo, zero, dir.path().to_path_buf()];
        std::thread::spawn(move || {
            let kinds: Vec<String> = paths
                .iter()
                .map(|p| read(p, 4096).unwrap_err().to_string())
                .collect();
            drop(done.send(kinds));
        });
        let errors = finished
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("a read waited");
        for e in errors {
            assert!(e.contains("not a regular file"), "{e}");
        }
        let missing = read(&dir.path().join("missing"), 10).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        std::fs::write(&plain, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_text(&plain, 5).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
