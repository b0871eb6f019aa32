//! Bounded capture of a command's output: the first [`MEMORY_LIMIT_BYTES`] in
//! memory; past that, everything (from the first byte) streams to a spill file,
//! and only the head and a short tail stay in memory.

use std::path::{Path, PathBuf};

use tokio::fs::File;
use tokio::io::{AsyncWriteExt, BufWriter};
use toolgate_core::ToolError;

/// Output kept in memory before spilling to disk (1 MiB).
pub const MEMORY_LIMIT_BYTES: usize = 1024 * 1024;

/// The last bytes kept in memory once output spills, so the end is visible.
pub const TAIL_BYTES: usize = 64 * 1024;

const SPILL_BUFFER: usize = 256 * 1024;

/// Collects output chunks in arrival order.
#[derive(Debug)]
pub struct Capture {
    limit: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    total: u64,
    spill_dir: PathBuf,
    spill_prefix: String,
    spill: Option<(PathBuf, BufWriter<File>)>,
}

/// What was captured.
#[derive(Debug)]
pub struct Captured {
    /// The first bytes, up to the memory limit.
    pub head: Vec<u8>,
    /// When spilled: the last bytes (at most [`TAIL_BYTES`]).
    pub tail: Option<Vec<u8>>,
    /// Every byte received.
    pub total: u64,
    /// The file holding all output, when it outgrew memory.
    pub spill_path: Option<PathBuf>,
}

impl Capture {
    /// A capture keeping `limit` bytes in memory and spilling to a new file in
    /// `spill_dir` whose name starts with `spill_prefix`.
    pub fn new(limit: usize, spill_dir: &Path, spill_prefix: &str) -> Self {
        Capture {
            limit,
            head: Vec::new(),
            tail: Vec::new(),
            total: 0,
            spill_dir: spill_dir.to_path_buf(),
            spill_prefix: spill_prefix.to_string(),
            spill: None,
        }
    }

    /// Bytes received so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Appends a chunk; spills when the memory limit is passed. A spill that
    /// cannot be written fails the capture (the output would be lost).
    pub async fn push(&mut self, chunk: &[u8]) -> Result<(), ToolError> {
        self.total += chunk.len() as u64;
        let mut rest = chunk;
        if self.spill.is_none() {
            let room = self.limit - self.head.len();
            if chunk.len() <= room {
                self.head.extend_from_slice(chunk);
                return Ok(());
            }
            self.head.extend_from_slice(&chunk[..room]);
            self.start_spill().await?;
            rest = &chunk[room..];
        }
        self.write_spill(rest).await?;
        self.keep_tail(rest);
        Ok(())
    }

    async fn start_spill(&mut self) -> Result<(), ToolError> {
        std::fs::create_dir_all(&self.spill_dir).map_err(|e| {
            ToolError::io(
                format!(
                    "creating output spill directory {}",
                    self.spill_dir.display()
                ),
                e,
            )
        })?;
        let (file, path) = tempfile::Builder::new()
            .prefix(&self.spill_prefix)
            .suffix(".log")
            .tempfile_in(&self.spill_dir)
            .and_then(|f| f.keep().map_err(|e| e.error))
            .map_err(|e| {
                ToolError::io(
                    format!("creating output spill file in {}", self.spill_dir.display()),
                    e,
                )
            })?;
        tracing::debug!(path = %path.display(), "command output spills to disk");
        let writer = BufWriter::with_capacity(SPILL_BUFFER, File::from_std(file));
        self.spill = Some((path, writer));
        let head = std::mem::take(&mut self.head);
        let written = self.write_spill(&head).await;
        self.head = head;
        let start = self.head.len().saturating_sub(TAIL_BYTES);
        self.tail.extend_from_slice(&self.head[start..]);
        written
    }

    async fn write_spill(&mut self, bytes: &[u8]) -> Result<(), ToolError> {
        if let Some((path, writer)) = &mut self.spill {
            writer
                .write_all(bytes)
                .await
                .map_err(|e| ToolError::io(format!("writing output to {}", path.display()), e))?;
        }
        Ok(())
    }

    fn keep_tail(&mut self, chunk: &[u8]) {
        self.tail.extend_from_slice(chunk);
        // Trim in batches so the copy is amortised.
        if self.tail.len() > 2 * TAIL_BYTES {
            let cut = self.tail.len() - TAIL_BYTES;
            self.tail.drain(..cut);
        }
    }

    /// Flushes the spill file and returns what was captured.
    pub async fn finish(mut self) -> Result<Captured, ToolError> {
        let spill_path = match self.spill.take() {
            Some((path, mut writer)) => {
                writer.flush().await.map_err(|e| {
                    ToolError::io(format!("writing output to {}", path.display()), e)
                })?;
                writer
                    .into_inner()
                    .sync_all()
                    .await
                    .map_err(|e| ToolError::io(format!("syncing {}", path.display()), e))?;
                Some(path)
            }
            None => None,
        };
        let tail = spill_path.as_ref().map(|_| {
            let cut = self.tail.len().saturating_sub(TAIL_BYTES);
            self.tail.split_off(cut)
        });
        Ok(Captured {
            head: self.head,
            tail,
            total: self.total,
            spill_path,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn small_output_stays_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Capture::new(16, dir.path(), "t-");
        c.push(b"hello ").await.unwrap();
        c.push(b"world").await.unwrap();
        let got = c.finish().await.unwrap();
        assert_eq!(got.head, b"hello world");
        assert!(got.spill_path.is_none() && got.tail.is_none());
        assert_eq!(got.total, 11);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[tokio::test]
    async fn large_output_spills_everything() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = Capture::new(10, dir.path(), "t-");
        let mut all = Vec::new();
        for i in 0..50u8 {
            let chunk = vec![b'a' + (i % 26); 7];
            all.extend_from_slice(&chunk);
            c.push(&chunk).await.unwrap();
        }
        let got = c.finish().await.unwrap();
        assert_eq!(got.head, all[..10]);
        assert_eq!(got.total, all.len() as u64);
        let path = got.spill_path.unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), all);
        assert!(all.ends_with(&got.tail.unwrap()));
    }

    #[tokio::test]
    async fn unwritable_spill_dir_fails() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain-file");
        std::fs::write(&file, "x").unwrap();
        let mut c = Capture::new(4, &file.join("sub"), "t-");
        let err = c.push(b"0123456789").await.unwrap_err();
        assert!(err.to_string().contains("spill directory"), "{err}");
    }
}
