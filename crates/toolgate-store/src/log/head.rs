//! The log's head file (`<log>.head`): the seq and hash of the last event
//! written, rewritten after every append to the tail.
//!
//! While every append was a SQLite transaction, the database's `log_head` row
//! did this in the same transaction: events removed from the end of the log
//! showed up as a head ahead of the last event. The tail is a plain file, so
//! the head is kept beside it. It is written after the tail's lines, so a
//! crash leaves it behind the tail, never ahead; a head ahead of the tail's
//! last event means events were removed from its end (or, with durability
//! `normal`, lost in a power cut), and no writer appends over that evidence.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::tail::Link;
use crate::canonical::is_hash;

/// The most a head file holds: a seq, a tab, a hash and a newline.
const MAX_LEN: usize = 128;

/// The head file of the log at `db`.
pub(crate) fn path_for(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push(".head");
    PathBuf::from(name)
}

/// An open head file.
#[derive(Debug)]
pub(crate) struct HeadFile {
    file: File,
}

impl HeadFile {
    /// Opens (creating) the head file at `path`, never through a symlink.
    pub(crate) fn open(path: &Path) -> std::io::Result<HeadFile> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?;
        Ok(HeadFile { file })
    }

    /// The recorded head; `None` while nothing was recorded.
    pub(crate) fn read(&self) -> std::io::Result<Result<Option<Link>, String>> {
        let mut buf = [0u8; MAX_LEN];
        let n = self.file.read_at(&mut buf, 0)?;
        Ok(parse(&buf[..n]))
    }

    /// Records `link` as the head. Seqs only grow, so the new text is never
    /// shorter than the old one and covers it whole.
    pub(crate) fn write(&self, link: &Link) -> std::io::Result<()> {
        self.file
            .write_all_at(format!("{}\t{}\n", link.seq, link.hash).as_bytes(), 0)
    }
}

/// The head recorded in `bytes` (a head file's content).
pub(crate) fn parse(bytes: &[u8]) -> Result<Option<Link>, String> {
    if bytes.is_empty() {
        return Ok(None);
    }
    let line = bytes
        .iter()
        .position(|b| *b == b'\n')
        .map(|n| &bytes[..n])
        .ok_or("the head file holds no complete line")?;
    let text = std::str::from_utf8(line).map_err(|_| "the head file is not UTF-8")?;
    let (seq, hash) = text
        .split_once('\t')
        .ok_or("the head file is not a seq and a hash")?;
    let seq = seq
        .parse::<i64>()
        .map_err(|_| "the head file's seq is not a number")?;
    if !is_hash(hash) {
        return Err("the head file's hash is not 64 lowercase hex digits".into());
    }
    Ok(Some(Link {
        seq,
        hash: hash.to_string(),
    }))
}

/// The head recorded at `path` (`None` when there is no head file or it is
/// empty).
pub(crate) fn read_at(path: &Path) -> std::io::Result<Result<Option<Link>, String>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(parse(&bytes[..bytes.len().min(MAX_LEN)])),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Ok(None)),
        Err(e) => Err(e),
    }
}

/// Whether the tail, whose last event is `last`, still holds the recorded
/// head `recorded`: `Err` says what is missing or changed.
pub(crate) fn check(recorded: Option<&Link>, last: &Link) -> Result<(), String> {
    match recorded {
        Some(h) if h.seq > last.seq => Err(format!(
            "the log's head records event {} but the log ends at event {}: events were removed from its end (or lost in a power cut)",
            h.seq, last.seq
        )),
        Some(h) if h.seq == last.seq && h.hash != last.hash => Err(format!(
            "event {} does not match the hash recorded in the log's head",
            h.seq
        )),
        _ => Ok(()),
    }
}
