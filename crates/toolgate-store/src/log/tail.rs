//! The log's tail: events appended after the database's last one, in a plain
//! file beside it (`<log>.tail`), one line each.
//!
//! A SQLite commit per call (its file locks, the WAL frames of every page it
//! touches, the head row) was most of what the audit log cost a call, and a
//! short process (a hook) also paid for SQLite rebuilding the WAL index when
//! it opened the file. Appending a line to the tail is one `write` under an
//! advisory lock. Events move from the tail into the database in batches (a
//! *fold*): when the tail passes [`FOLD_BYTES`], and when a long-lived log
//! closes. Readers see both: the database's rows, then the tail's events
//! after the database's head.
//!
//! The file (UTF-8, each line ends with `\n`):
//!
//! - the start line, `toolgate-log-tail/1 TAB SEQ TAB HASH`: the database's
//!   head when this tail was started; the events below continue the chain
//!   from it;
//! - one line per event, `SEQ TAB TS_MS TAB KIND TAB SESSION TAB CALL TAB
//!   PREV_HASH TAB HASH TAB PAYLOAD`, where SESSION and CALL are JSON strings
//!   and PAYLOAD is the payload as the database stores it (JSON), so no field
//!   holds a raw tab or newline.
//!
//! A line counts only once its `\n` is there: a writer killed mid-write leaves
//! a torn last line, which readers ignore and the next writer cuts off (under
//! the lock nobody else can be writing it). Any other line that is not an
//! event is damage: nothing is appended after it, and `toolgate log verify`
//! names it.
//!
//! Writers hold an exclusive `flock` on the tail while they read its end and
//! append. A fold holds it while it moves the events into the database and
//! puts a fresh tail (its start line only) in place by renaming it over the
//! old one. A writer that waited on the replaced file's lock sees that its
//! file is no longer the one at the path, and opens the new one.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, params};

use super::Durability;
use super::head::{self, HeadFile};
use super::schema::LOG_FILE;
use super::writer::{Batch, Pending};
use crate::canonical::is_hash;
use crate::error::StoreError;
use crate::sqlite::{self, Access, BUSY_TIMEOUT};

/// The first field of a tail's start line (and the format's version).
pub(crate) const MAGIC: &str = "toolgate-log-tail/1";

/// Past this size, a tail is folded into the database: what a reader parses
/// and a fold holds the lock for stays small (about 250 events).
pub(crate) const FOLD_BYTES: u64 = 256 * 1024;

/// The tail of the log at `db`.
pub(crate) fn path_for(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push(".tail");
    PathBuf::from(name)
}

/// A point of the chain: an event's seq and hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Link {
    pub seq: i64,
    pub hash: String,
}

/// One event line of a tail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    pub seq: i64,
    pub ts_ms: i64,
    pub kind: &'a str,
    pub session_id: String,
    pub call_id: String,
    pub prev_hash: &'a str,
    pub hash: &'a str,
    pub payload: &'a str,
}

impl Line<'_> {
    /// Runs `insert`, a statement taking an event's eight columns in the
    /// order of [`EVENT_COLUMNS`](super::schema::EVENT_COLUMNS).
    pub(crate) fn insert(&self, insert: &mut rusqlite::Statement<'_>) -> rusqlite::Result<usize> {
        insert.execute(params![
            self.seq,
            self.ts_ms,
            self.kind,
            self.session_id,
            self.call_id,
            self.payload,
            self.prev_hash,
            self.hash
        ])
    }
}

/// The start line for a tail that continues the chain after `link`.
fn start_line(link: &Link) -> String {
    format!("{MAGIC}\t{}\t{}\n", link.seq, link.hash)
}

/// Parses a start line (without its `\n`).
pub(crate) fn parse_start(text: &str) -> Result<Link, String> {
    let mut fields = text.split('\t');
    if fields.next() != Some(MAGIC) {
        return Err(format!("the first line does not start with {MAGIC:?}"));
    }
    let seq = fields
        .next()
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|s| *s >= 0)
        .ok_or("the start line's seq is not a number")?;
    let hash = fields
        .next()
        .filter(|h| is_hash(h))
        .ok_or("the start line's hash is not 64 lowercase hex digits")?;
    if fields.next().is_some() {
        return Err("the start line has more than three fields".into());
    }
    Ok(Link {
        seq,
        hash: hash.to_string(),
    })
}

/// Parses an event line (without its `\n`).
pub(crate) fn parse_event(text: &str) -> Result<Line<'_>, String> {
    let mut fields = text.splitn(8, '\t');
    let mut next = |name: &str| {
        fields
            .next()
            .ok_or_else(|| format!("the line has no {name} field"))
    };
    let seq = next("seq")?
        .parse::<i64>()
        .map_err(|e| format!("seq: {e}"))?;
    let ts_ms = next("ts_ms")?
        .parse::<i64>()
        .map_err(|e| format!("ts_ms: {e}"))?;
    let kind = next("kind")?;
    let session_id = serde_json::from_str::<String>(next("session_id")?)
        .map_err(|e| format!("session_id is not a JSON string: {e}"))?;
    let call_id = serde_json::from_str::<String>(next("call_id")?)
        .map_err(|e| format!("call_id is not a JSON string: {e}"))?;
    let prev_hash = next("prev_hash")?;
    let hash = next("hash")?;
    let payload = next("payload")?;
    Ok(Line {
        seq,
        ts_ms,
        kind,
        session_id,
        call_id,
        prev_hash,
        hash,
        payload,
    })
}

/// The seq and hash of an event line, checked no further than a writer needs.
fn parse_link(text: &str) -> Result<Link, String> {
    let mut fields = text.splitn(8, '\t');
    let seq = fields
        .next()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or("the line does not start with a seq")?;
    let hash = fields
        .nth(5)
        .filter(|h| is_hash(h))
        .ok_or("the line's hash is not 64 lowercase hex digits")?;
    if fields.next().is_none() {
        return Err("the line has no payload".into());
    }
    Ok(Link {
        seq,
        hash: hash.to_string(),
    })
}

/// Appends the line for `p`, at `seq`, to `out`.
fn encode_event(
    out: &mut Vec<u8>,
    seq: i64,
    p: &Pending,
    prev_hash: &str,
    hash: &str,
) -> Result<(), StoreError> {
    if p.kind.contains(['\t', '\n']) || p.payload.contains(['\t', '\n']) {
        // Neither can happen (kinds are fixed words, payloads JSON text), but
        // a line must never be split.
        return Err(StoreError::Serialize(serde::ser::Error::custom(
            "an event's kind or payload holds a raw tab or newline",
        )));
    }
    let session = serde_json::to_string(&p.session_id).map_err(StoreError::Serialize)?;
    let call = serde_json::to_string(&p.call_id).map_err(StoreError::Serialize)?;
    // Writing to a Vec cannot fail.
    let _ = writeln!(
        out,
        "{seq}\t{}\t{}\t{session}\t{call}\t{prev_hash}\t{hash}\t{}",
        p.ts_ms, p.kind, p.payload
    );
    Ok(())
}

/// The error for the tail at `path` damaged at `offset`.
pub(crate) fn damaged(path: &Path, offset: u64, detail: impl Into<String>) -> StoreError {
    StoreError::DamagedTail {
        path: path.to_path_buf(),
        offset,
        detail: detail.into(),
    }
}

/// The complete lines of `bytes` (which start at a line boundary, at file
/// offset `base`), each with its offset and without its `\n`, and the length
/// of the complete part.
pub(crate) fn complete_lines(
    bytes: &[u8],
    base: u64,
) -> (impl Iterator<Item = (u64, &[u8])>, usize) {
    let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
    let mut offset = base;
    let lines = bytes[..complete]
        .split_inclusive(|b| *b == b'\n')
        .map(move |line| {
            let at = offset;
            offset += line.len() as u64;
            (at, &line[..line.len() - 1])
        });
    (lines, complete)
}

/// The whole tail at `path` as read now: its start, and the bytes of its
/// complete event lines (`None` when there is no tail, or it is empty). A
/// torn last line is left out; a damaged start line is an error.
pub(crate) fn read_all(path: &Path) -> Result<Option<(Link, Vec<u8>)>, StoreError> {
    let path = path.to_path_buf();
    match std::fs::metadata(&path) {
        Ok(m) if m.len() > MAX_READ_BYTES => {
            return Err(damaged(
                &path,
                0,
                format!("it holds {} bytes, far past its fold size", m.len()),
            ));
        }
        _ => {}
    }
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StoreError::Io {
                context: "reading the log's tail",
                path,
                source,
            });
        }
    };
    let (mut lines, complete) = complete_lines(&bytes, 0);
    let Some((_, first)) = lines.next() else {
        return Ok(None);
    };
    let start = std::str::from_utf8(first)
        .map_err(|_| "the start line is not UTF-8".to_string())
        .and_then(parse_start)
        .map_err(|detail| StoreError::DamagedTail {
            path: path.clone(),
            offset: 0,
            detail,
        })?;
    let body_from = first.len() + 1;
    drop(lines);
    let mut body = bytes;
    body.truncate(complete);
    body.drain(..body_from);
    Ok(Some((start, body)))
}

/// The most a writer, a reader or a fold reads of a tail at once: a tail
/// folds at [`FOLD_BYTES`], so anything near this was written behind the log's
/// back, and is refused rather than read into memory.
pub(crate) const MAX_READ_BYTES: u64 = 64 * 1024 * 1024;

/// The first bytes read for a start line, and the first chunk read back from
/// the end for the last line (grown fourfold until a whole line is in it).
const START_READ: u64 = 512;
const END_CHUNK: u64 = 16 * 1024;

/// For a writer new to the tail in `file` of `len` bytes: the end of its
/// complete lines and the chain's last link, read from the file's two ends.
/// The start line is checked; the lines between are not read (`verify` and
/// folds read them). `Ok(None)` when the file holds no complete start line
/// (the caller reads it whole); `Err` names a damaged line.
fn ends(file: &File, len: u64) -> Result<Option<(u64, Link)>, (u64, String)> {
    let io = |e: std::io::Error| (0, format!("cannot read it: {e}"));
    let mut head = vec![0; usize::try_from(len.min(START_READ)).unwrap_or(0)];
    file.read_exact_at(&mut head, 0).map_err(io)?;
    let Some(nl) = head.iter().position(|b| *b == b'\n') else {
        return Ok(None);
    };
    let start_end = nl as u64 + 1;
    let start = std::str::from_utf8(&head[..nl])
        .map_err(|_| "the start line is not UTF-8".to_string())
        .and_then(parse_start)
        .map_err(|d| (0, d))?;
    let mut chunk = END_CHUNK;
    loop {
        let lo = len.saturating_sub(chunk).max(start_end);
        if len - lo > MAX_READ_BYTES {
            return Err((lo, "its last line is longer than any event".into()));
        }
        let mut buf = vec![0; usize::try_from(len - lo).unwrap_or(0)];
        file.read_exact_at(&mut buf, lo).map_err(io)?;
        let Some(last_nl) = buf.iter().rposition(|b| *b == b'\n') else {
            if lo == start_end {
                // Nothing but a torn line after the start line.
                return Ok(Some((start_end, start)));
            }
            chunk = chunk.saturating_mul(4);
            continue;
        };
        let line_start = match buf[..last_nl].iter().rposition(|b| *b == b'\n') {
            Some(p) => lo + p as u64 + 1,
            None if lo == start_end => start_end,
            None => {
                chunk = chunk.saturating_mul(4);
                continue;
            }
        };
        let complete_end = lo + last_nl as u64 + 1;
        let from = usize::try_from(line_start - lo).unwrap_or(0);
        let link = std::str::from_utf8(&buf[from..last_nl])
            .map_err(|_| "the line is not UTF-8".to_string())
            .and_then(parse_link)
            .map_err(|d| (line_start, d))?;
        return Ok(Some((complete_end, link)));
    }
}

/// What [`TailWriter::append`] did.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Appended {
    /// The seq of the first event appended.
    pub first_seq: u64,
    /// The tail's size afterwards.
    pub size: u64,
}

/// The open tail file, and what this writer knows of it.
#[derive(Debug)]
struct Known {
    file: File,
    /// (device, inode) of `file`.
    id: (u64, u64),
    /// The length of the complete lines this writer has read or written,
    /// and the chain's last link in them; `None` until it has looked.
    seen: Option<(u64, Link)>,
}

/// Appends to the tail of one log, and folds it into the database.
#[derive(Debug)]
pub(crate) struct TailWriter {
    db: PathBuf,
    path: PathBuf,
    durability: Durability,
    known: Option<Known>,
    /// The log's head file, opened with the first append.
    head: Option<HeadFile>,
    /// The database, opened when first needed (a fold, or an empty tail's start).
    conn: Option<Connection>,
}

impl TailWriter {
    /// A writer for the log at `db`; `conn`, if given, is an open read-write
    /// connection to it (else one is opened when needed).
    pub(crate) fn new(db: &Path, durability: Durability, conn: Option<Connection>) -> TailWriter {
        TailWriter {
            db: db.to_path_buf(),
            path: path_for(db),
            durability,
            known: None,
            head: None,
            conn,
        }
    }

    /// The database connection, opened now if it is not yet.
    pub(crate) fn conn(&mut self) -> Result<&mut Connection, StoreError> {
        if self.conn.is_none() {
            let conn = sqlite::open(&self.db, LOG_FILE, Access::ReadWrite)?;
            conn.execute_batch(&super::writer_settings())
                .map_err(StoreError::sqlite("setting durability"))?;
            self.conn = Some(conn);
        }
        self.conn.as_mut().ok_or(StoreError::WriterStopped)
    }

    fn io(&self, context: &'static str) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
        move |source| StoreError::Io {
            context,
            path: self.path.clone(),
            source,
        }
    }

    fn damaged(&self, offset: u64, detail: impl Into<String>) -> StoreError {
        damaged(&self.path, offset, detail)
    }

    fn open_file(&self) -> Result<Known, StoreError> {
        // Never through a symlink: the tail is toolgate's own file.
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&self.path)
            .map_err(self.io("opening the log's tail"))?;
        let meta = file
            .metadata()
            .map_err(self.io("reading the metadata of"))?;
        Ok(Known {
            file,
            id: (meta.dev(), meta.ino()),
            seen: None,
        })
    }

    /// Opens the tail now at the path and locks it. False when `wait` is
    /// false and another holds the lock; with `wait`, retries until the busy
    /// timeout.
    fn lock(&mut self, wait: bool) -> Result<bool, StoreError> {
        let deadline = Instant::now() + BUSY_TIMEOUT;
        let mut pause = Duration::from_micros(100);
        loop {
            let known = match self.known.take() {
                Some(k) => k,
                None => self.open_file()?,
            };
            match known.file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    self.known = Some(known);
                    if !wait {
                        return Ok(false);
                    }
                    if Instant::now() >= deadline {
                        return Err(StoreError::TailBusy(self.path.clone()));
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(5));
                    continue;
                }
                Err(TryLockError::Error(e)) => return Err(self.io("locking")(e)),
            }
            // A fold may have put a fresh tail in place while we waited.
            match std::fs::metadata(&self.path) {
                Ok(m) if (m.dev(), m.ino()) == known.id => {
                    self.known = Some(known);
                    return Ok(true);
                }
                // Dropping the file releases its lock.
                Ok(_) => drop(known),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => drop(known),
                Err(e) => return Err(self.io("checking")(e)),
            }
        }
    }

    fn unlock(&mut self) {
        if let Some(k) = &self.known {
            if let Err(e) = k.file.unlock() {
                // Closing the file releases it for certain.
                tracing::warn!(error = %e, "cannot unlock the log's tail; closing it");
                self.known = None;
            }
        }
    }

    /// Appends every event of `batches` in one `write`, continuing the chain
    /// after the tail's last event. `None` when `wait` is false and another
    /// process holds the tail.
    pub(crate) fn append(
        &mut self,
        batches: &[Batch],
        wait: bool,
    ) -> Result<Option<Appended>, StoreError> {
        if !self.lock(wait)? {
            return Ok(None);
        }
        let result = self.append_locked(batches);
        self.unlock();
        result.map(Some)
    }

    fn append_locked(&mut self, batches: &[Batch]) -> Result<Appended, StoreError> {
        let (end, last, unchanged) = self.catch_up()?;
        // Never append over the evidence of events removed from the end. A
        // tail as this writer left it holds the head it recorded last.
        if self.head.is_none() || !unchanged {
            self.check_head(&last)?;
        }
        let mut buf = Vec::with_capacity(
            batches
                .iter()
                .flat_map(|b| &b.events)
                .map(|p| p.payload.len() + 256)
                .sum(),
        );
        let mut seq = last.seq;
        let mut prev = last.hash;
        for p in batches.iter().flat_map(|b| &b.events) {
            seq += 1;
            let hash = p.hash(seq, &prev);
            encode_event(&mut buf, seq, p, &prev, &hash)?;
            prev = hash;
        }
        let full = self.durability == Durability::Full;
        let Some(known) = self.known.as_mut() else {
            return Err(StoreError::WriterStopped);
        };
        if let Err(source) = known.file.write_all(&buf) {
            // Part of it may be there: read the file again next time.
            known.seen = None;
            return Err(StoreError::Io {
                context: "appending to the log's tail",
                path: self.path.clone(),
                source,
            });
        }
        let size = end + buf.len() as u64;
        let new_last = Link { seq, hash: prev };
        known.seen = Some((size, new_last.clone()));
        if full {
            known.file.sync_data().map_err(|source| StoreError::Io {
                context: "syncing the log's tail",
                path: self.path.clone(),
                source,
            })?;
        }
        // After the lines: a crash leaves the head behind them, never ahead.
        if let Some(head_file) = self.head.as_ref() {
            head_file
                .write(&new_last)
                .map_err(|source| StoreError::Io {
                    context: "recording the log's head",
                    path: head::path_for(&self.db),
                    source,
                })?;
        }
        Ok(Appended {
            first_seq: u64::try_from(last.seq + 1).unwrap_or(1),
            size,
        })
    }

    /// With the lock held: that the recorded head is not past `last`, the
    /// tail's last event (opening the head file on first use).
    fn check_head(&mut self, last: &Link) -> Result<(), StoreError> {
        if self.head.is_none() {
            let path = head::path_for(&self.db);
            let file = HeadFile::open(&path).map_err(|source| StoreError::Io {
                context: "opening the log's head",
                path,
                source,
            })?;
            self.head = Some(file);
        }
        let Some(head_file) = self.head.as_ref() else {
            return Err(StoreError::WriterStopped);
        };
        let head_path = || head::path_for(&self.db);
        head_file
            .read()
            .map_err(|source| StoreError::Io {
                context: "reading the log's head",
                path: head_path(),
                source,
            })?
            .and_then(|recorded| head::check(recorded.as_ref(), last))
            .map_err(|detail| damaged(&head_path(), 0, detail))
    }

    /// With the lock held: the length of the tail's complete lines, the
    /// chain's last link, and whether the tail is as this writer left it;
    /// reads whatever other processes appended since this writer last
    /// looked. Starts an empty tail from the database's head and cuts off a
    /// torn last line.
    fn catch_up(&mut self) -> Result<(u64, Link, bool), StoreError> {
        let Some(known) = self.known.as_ref() else {
            return Err(StoreError::WriterStopped);
        };
        let len = known
            .file
            .metadata()
            .map_err(self.io("reading the metadata of"))?
            .len();
        let (from, mut last) = match &known.seen {
            Some((end, last)) if *end == len => return Ok((len, last.clone(), true)),
            // Only this writer's own failed write or a torn line can have
            // shrunk it; read it all again then.
            Some((end, last)) if *end < len => (*end, Some(last.clone())),
            _ => (0, None),
        };
        // A writer new to this tail (each hook process) reads its two ends,
        // not the few hundred events between them: the start line, and the
        // last complete line, whose link the next event continues.
        let (from, complete_to, bytes) = match (&last, ends(&known.file, len)) {
            (None, Ok(Some((end, link)))) => {
                last = Some(link);
                (end, end, Vec::new())
            }
            (None, Err((offset, detail))) => return Err(self.damaged(offset, detail)),
            _ => {
                if len - from > MAX_READ_BYTES {
                    return Err(self.damaged(
                        from,
                        format!("{} bytes were added behind the log's back", len - from),
                    ));
                }
                let mut bytes = vec![0; usize::try_from(len - from).unwrap_or(0)];
                known
                    .file
                    .read_exact_at(&mut bytes, from)
                    .map_err(self.io("reading the log's tail"))?;
                let complete = complete_lines(&bytes, from).1;
                (from, from + complete as u64, bytes)
            }
        };
        let (lines, _) = complete_lines(&bytes, from);
        for (offset, line) in lines {
            let text = std::str::from_utf8(line).map_err(|_| self.damaged(offset, "not UTF-8"))?;
            last = Some(match last {
                None => parse_start(text).map_err(|d| self.damaged(offset, d))?,
                Some(prev) => {
                    let link = parse_link(text).map_err(|d| self.damaged(offset, d))?;
                    if link.seq != prev.seq + 1 {
                        return Err(self.damaged(
                            offset,
                            format!("event {} follows event {}", link.seq, prev.seq),
                        ));
                    }
                    link
                }
            });
        }
        let mut end = complete_to;
        if end < len {
            tracing::warn!(path = %self.path.display(), at = end, "cutting a torn last line off the log's tail");
            known
                .file
                .set_len(end)
                .map_err(self.io("cutting a torn line off"))?;
        }
        let last = match last {
            Some(l) => l,
            None => {
                // An empty tail (new, or a fold's replacement lost in a crash):
                // it continues from the database's head.
                let head = read_head(self.conn()?)?;
                let line = start_line(&head);
                let Some(known) = self.known.as_mut() else {
                    return Err(StoreError::WriterStopped);
                };
                known
                    .file
                    .write_all(line.as_bytes())
                    .map_err(|source| StoreError::Io {
                        context: "starting the log's tail",
                        path: self.path.clone(),
                        source,
                    })?;
                end = line.len() as u64;
                head
            }
        };
        if let Some(known) = self.known.as_mut() {
            known.seen = Some((end, last.clone()));
        }
        Ok((end, last, false))
    }

    /// Moves the tail's events into the database and puts a fresh tail in
    /// its place. Returns how many events moved, or `None` when `wait` is
    /// false and another process holds the tail.
    pub(crate) fn fold(&mut self, wait: bool) -> Result<Option<usize>, StoreError> {
        if !self.lock(wait)? {
            return Ok(None);
        }
        let result = self.fold_locked();
        self.unlock();
        if matches!(result, Ok(n) if n > 0) {
            // Its lock is released; the next append opens the fresh tail.
            self.known = None;
        }
        result.map(Some)
    }

    fn fold_locked(&mut self) -> Result<usize, StoreError> {
        let Some(known) = self.known.as_ref() else {
            return Err(StoreError::WriterStopped);
        };
        let len = known
            .file
            .metadata()
            .map_err(self.io("reading the metadata of"))?
            .len();
        if len > MAX_READ_BYTES {
            return Err(self.damaged(0, format!("it holds {len} bytes, far past its fold size")));
        }
        let mut bytes = vec![0; usize::try_from(len).unwrap_or(0)];
        known
            .file
            .read_exact_at(&mut bytes, 0)
            .map_err(self.io("reading the log's tail"))?;
        let (mut lines, _) = complete_lines(&bytes, 0);
        let Some((_, first)) = lines.next() else {
            return Ok(0);
        };
        std::str::from_utf8(first)
            .map_err(|_| "not UTF-8".to_string())
            .and_then(parse_start)
            .map_err(|d| self.damaged(0, d))?;
        let mut events = Vec::new();
        for (offset, line) in lines {
            let parsed = std::str::from_utf8(line)
                .map_err(|_| "not UTF-8".to_string())
                .and_then(parse_event)
                .map_err(|d| self.damaged(offset, d))?;
            events.push((offset, parsed));
        }
        if events.is_empty() {
            return Ok(0);
        }
        let path = self.path.clone();
        let conn = self.conn()?;
        let (moved, head) = move_into(conn, &events, &path)?;
        // A fresh tail after the moved events, complete before it is in place.
        let fresh = {
            let mut name = path.as_os_str().to_os_string();
            name.push(format!(".new-{}", std::process::id()));
            PathBuf::from(name)
        };
        let written = (|| -> std::io::Result<()> {
            // A new file of our own, whatever a crashed fold (or anyone else)
            // left at that name: never truncate or write through a link.
            match std::fs::remove_file(&fresh) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&fresh)?;
            file.write_all(start_line(&head).as_bytes())?;
            if self.durability == Durability::Full {
                file.sync_all()?;
            }
            std::fs::rename(&fresh, &path)?;
            if self.durability == Durability::Full {
                if let Some(dir) = path.parent() {
                    File::open(dir)?.sync_all()?;
                }
            }
            Ok(())
        })();
        if let Err(source) = written {
            let _ = std::fs::remove_file(&fresh);
            // The events are in the database; the old tail still holds them
            // too, and later folds and readers skip what the database has.
            return Err(StoreError::Io {
                context: "starting a fresh log tail at",
                path,
                source,
            });
        }
        Ok(moved)
    }
}

/// The database's head (seq, hash).
pub(crate) fn read_head(conn: &Connection) -> Result<Link, StoreError> {
    conn.prepare_cached("SELECT seq, hash FROM log_head WHERE id = 1")
        .and_then(|mut s| {
            s.query_row([], |r| {
                Ok(Link {
                    seq: r.get(0)?,
                    hash: r.get(1)?,
                })
            })
        })
        .map_err(StoreError::sqlite("reading the log head"))
}

/// Inserts the events after the database's head in one transaction; returns
/// how many and the new head. An event that does not continue the chain
/// stops the fold with nothing moved.
fn move_into(
    conn: &mut Connection,
    events: &[(u64, Line<'_>)],
    path: &Path,
) -> Result<(usize, Link), StoreError> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(StoreError::sqlite("starting a fold of the log's tail"))?;
    let mut head = read_head(&tx)?;
    let mut moved = 0;
    {
        let mut insert = tx
            .prepare_cached(
                "INSERT INTO events (seq, ts_ms, kind, session_id, call_id, payload, prev_hash, hash)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )
            .map_err(StoreError::sqlite("folding the log's tail"))?;
        // Events the database already has (a fold that stopped between its
        // commit and the fresh tail) are skipped.
        let already = head.seq;
        for (offset, e) in events.iter().filter(|(_, e)| e.seq > already) {
            if e.seq != head.seq + 1 || e.prev_hash != head.hash {
                return Err(StoreError::DamagedTail {
                    path: path.to_path_buf(),
                    offset: *offset,
                    detail: format!(
                        "event {} does not continue the database's chain, which ends at event {}",
                        e.seq, head.seq
                    ),
                });
            }
            e.insert(&mut insert)
                .map_err(StoreError::sqlite("folding the log's tail"))?;
            head = Link {
                seq: e.seq,
                hash: e.hash.to_string(),
            };
            moved += 1;
        }
    }
    tx.execute(
        "UPDATE log_head SET seq = ?1, hash = ?2 WHERE id = 1",
        params![head.seq, head.hash],
    )
    .map_err(StoreError::sqlite("folding the log's tail"))?;
    tx.commit()
        .map_err(StoreError::sqlite("committing a fold of the log's tail"))?;
    Ok((moved, head))
}

#[cfg(test)]
mod tests;
