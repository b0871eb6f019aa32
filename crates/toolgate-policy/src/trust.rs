//! Trust in a project's config: a person's consent to one exact file.
//!
//! A project config (`.toolgate/config.toml`) comes with the repository, so
//! whoever wrote the repository wrote it. Until a person trusts it, the project
//! layer may only tighten the gate (see [`crate::policy`]). Trust is recorded as
//! the file's path and the sha256 of its exact bytes in a [`TrustStore`], a file
//! in the user's data directory (never in the repository): any change to the
//! config, one byte or more, makes it untrusted again.
//!
//! ```
//! use toolgate_policy::trust::{TrustStore, sha256_hex};
//! let dir = tempfile::tempdir().unwrap();
//! let store = TrustStore::new(dir.path().join("trusted-projects.json"));
//! let file = std::path::Path::new("/ws/.toolgate/config.toml");
//! let digest = sha256_hex(b"mode = \"plan\"\n");
//! assert!(!store.is_trusted(file, &digest));
//! store.trust(file, &digest).unwrap();
//! assert!(store.is_trusted(file, &digest));
//! assert!(!store.is_trusted(file, &sha256_hex(b"mode = \"plan\"\n\n")));
//! assert!(store.revoke(file).unwrap().is_some());
//! assert!(!store.is_trusted(file, &digest));
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The file name of the trust records inside the data directory.
pub const TRUST_FILE_NAME: &str = "trusted-projects.json";

/// One trusted project config.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    /// The config file's absolute path.
    pub path: String,
    /// The sha256 of its exact bytes, lowercase hex.
    pub sha256: String,
    /// When it was trusted (seconds since the Unix epoch).
    pub trusted_at: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    version: u32,
    trusted: Vec<TrustRecord>,
}

/// Why the trust records could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The trust file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// The file is not a trust file.
    #[error("{path}: not a toolgate trust file ({message}); remove it to start over")]
    Corrupt {
        /// The trust file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// The path a project config is trusted under: the project's directory
/// canonical (so that one project reached by two spellings is one record),
/// and `.toolgate/config.toml` below it as written, never resolved. Trust is
/// consent to these bytes as the policy of this project: a repository whose
/// `.toolgate` (or `config.toml`) is a symbolic link to a config trusted
/// for another project reaches the same bytes, but is another project, and
/// is not trusted by that record.
pub fn config_key(path: &Path) -> PathBuf {
    let mut tail = Vec::with_capacity(2);
    let mut dir = path;
    for _ in 0..2 {
        match (dir.parent(), dir.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name);
                dir = parent;
            }
            _ => break,
        }
    }
    let mut key = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    key.extend(tail.iter().rev());
    key
}

/// Config files larger than this are not read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Reads a config file that a repository may ship: only a regular file (a
/// symbolic link to one is followed), at most [`MAX_CONFIG_BYTES`], opened
/// without blocking. A link to `/dev/zero`, a FIFO, a terminal or a socket
/// is an error at once instead of a read that never ends.
pub fn read_config_bytes(path: &Path) -> std::io::Result<Vec<u8>> {
    toolgate_core::small_file::read(path, MAX_CONFIG_BYTES)
}

/// The sha256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    s
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The trust records: a small JSON file, replaced atomically on every change.
#[derive(Clone, Debug)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    /// The store kept in `path` (normally `<data dir>/trusted-projects.json`).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        TrustStore { path: path.into() }
    }

    /// The file it is kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every record; none when the file does not exist yet.
    pub fn list(&self) -> Result<Vec<TrustRecord>, TrustError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(TrustError::Io {
                    path: self.path.display().to_string(),
                    source,
                });
            }
        };
        let file: TrustFile = serde_json::from_str(&text).map_err(|e| TrustError::Corrupt {
            path: self.path.display().to_string(),
            message: e.to_string(),
        })?;
        Ok(file.trusted)
    }

    /// Whether `file` with content digest `sha256` is trusted. A store that
    /// cannot be read trusts nothing (and says so in the log).
    pub fn is_trusted(&self, file: &Path, sha256: &str) -> bool {
        match self.list() {
            Ok(records) => {
                let path = file.display().to_string();
                records.iter().any(|r| r.path == path && r.sha256 == sha256)
            }
            Err(e) => {
                tracing::warn!(
                    "cannot read the trust records, so no project config is trusted: {e}"
                );
                false
            }
        }
    }

    /// Records `file` with digest `sha256` as trusted, replacing any earlier
    /// record of the same file.
    pub fn trust(&self, file: &Path, sha256: &str) -> Result<(), TrustError> {
        let mut records = self.list()?;
        let path = file.display().to_string();
        records.retain(|r| r.path != path);
        let trusted_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        records.push(TrustRecord {
            path,
            sha256: sha256.to_string(),
            trusted_at,
        });
        self.write(records)
    }

    /// Removes the record of `file`; returns it, or `None` when there was none.
    pub fn revoke(&self, file: &Path) -> Result<Option<TrustRecord>, TrustError> {
        let mut records = self.list()?;
        let path = file.display().to_string();
        let Some(at) = records.iter().position(|r| r.path == path) else {
            return Ok(None);
        };
        let gone = records.remove(at);
        self.write(records)?;
        Ok(Some(gone))
    }

    /// Writes the records to a temporary file beside the store (mode 0600) and
    /// renames it over the store, so a reader never sees half a file.
    fn write(&self, trusted: Vec<TrustRecord>) -> Result<(), TrustError> {
        let io = |source| TrustError::Io {
            path: self.path.display().to_string(),
            source,
        };
        let text = serde_json::to_string_pretty(&TrustFile {
            version: 1,
            trusted,
        })
        .map_err(|e| io(std::io::Error::other(e)))?;
        let dir = self.path.parent().unwrap_or_else(|| Path::new("."));
        std::fs::create_dir_all(dir).map_err(io)?;
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            self.path
                .file_name()
                .map_or_else(|| "trust".into(), |n| n.to_string_lossy()),
            std::process::id()
        ));
        let mut f = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)
                .map_err(io)?
        };
        f.write_all(text.as_bytes()).map_err(io)?;
        f.write_all(b"\n").map_err(io)?;
        f.sync_all().map_err(io)?;
        drop(f);
        std::fs::rename(&tmp, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_sha256() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn records_survive_and_are_replaced_per_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore::new(dir.path().join("t.json"));
        assert!(store.list().unwrap().is_empty());
        let a = Path::new("/a/.toolgate/config.toml");
        let b = Path::new("/b/.toolgate/config.toml");
        store.trust(a, "11").unwrap();
        store.trust(b, "22").unwrap();
        store.trust(a, "33").unwrap();
        let again = TrustStore::new(dir.path().join("t.json"));
        let list = again.list().unwrap();
        assert_eq!(list.len(), 2);
        assert!(again.is_trusted(a, "33") && !again.is_trusted(a, "11"));
        assert!(again.is_trusted(b, "22") && !again.is_trusted(a, "22"));
        assert_eq!(again.revoke(Path::new("/c")).unwrap(), None);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("t.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_corrupt_store_trusts_nothing_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, "{\"trusted\": 5}").unwrap();
        let store = TrustStore::new(&path);
        assert!(!store.is_trusted(Path::new("/a"), "x"));
        let e = store.list().unwrap_err().to_string();
        assert!(e.contains("not a toolgate trust file"), "{e}");
        assert!(store.trust(Path::new("/a"), "x").is_err());
    }
}
