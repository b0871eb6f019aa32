//! The read ledger: which content each session last saw of each file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// A content hash (BLAKE3).
pub type ContentHash = [u8; 32];

/// Hashes file content.
pub fn hash_bytes(bytes: &[u8]) -> ContentHash {
    *blake3::hash(bytes).as_bytes()
}

/// Content hashes of the files each session read or wrote, keyed by session id
/// and canonical path. `edit` and `write` compare the file on disk with the entry:
/// a difference means someone else changed the file since the session saw it.
#[derive(Debug, Default)]
pub struct ReadLedger {
    seen: Mutex<HashMap<(String, PathBuf), ContentHash>>,
}

/// The result of a staleness check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// The session never read this file.
    Unseen,
    /// The file is what the session last saw.
    Fresh,
    /// The file changed since the session last saw it.
    Stale,
}

impl ReadLedger {
    /// Records that `session` has seen `path` with content hash `hash`.
    pub fn record(&self, session: &str, path: &Path, hash: ContentHash) {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((session.to_string(), path.to_path_buf()), hash);
    }

    /// Forgets `path` for `session` (after a delete).
    pub fn forget(&self, session: &str, path: &Path) {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&(session.to_string(), path.to_path_buf()));
    }

    /// Compares the current content hash of `path` with what `session` saw.
    pub fn check(&self, session: &str, path: &Path, current: &ContentHash) -> Freshness {
        let seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        match seen.get(&(session.to_string(), path.to_path_buf())) {
            None => Freshness::Unseen,
            Some(h) if h == current => Freshness::Fresh,
            Some(_) => Freshness::Stale,
        }
    }
}
