//! Values kept on disk between processes (walks, snapshots, readings), each
//! in a file of its own, written whole or not at all, and trusted only by
//! the build that wrote it: another build may judge names differently.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The running program's identity: its version, and its executable's size
/// and time.
fn writer_id() -> String {
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| format!("{}:{}:{}", m.len(), m.mtime(), m.mtime_nsec()))
        .unwrap_or_default();
    format!("{}:{exe}", env!("CARGO_PKG_VERSION"))
}

#[derive(Serialize)]
struct Written<'a, T> {
    writer: &'a str,
    value: &'a T,
}

#[derive(serde::Deserialize)]
struct Read<T> {
    writer: String,
    value: T,
}

/// The value kept at `path`, when it is there, readable, and written by
/// this program.
pub(crate) fn load<T: DeserializeOwned>(path: &Path) -> Option<T> {
    let bytes = std::fs::read(path).ok()?;
    let kept: Read<T> = postcard::from_bytes(&bytes).ok()?;
    (kept.writer == writer_id()).then_some(kept.value)
}

/// Keeps `value` at `path` (its directory made), whole or not at all: a
/// failure only means the next process does the work again.
pub(crate) fn keep<T: Serialize>(path: &Path, value: &T) -> bool {
    keep_as(path, &writer_id(), value)
}

/// As [`keep`], as if written by `writer`.
fn keep_as<T: Serialize>(path: &Path, writer: &str, value: &T) -> bool {
    let written = postcard::to_allocvec(&Written { writer, value })
        .ok()
        .and_then(|bytes| {
            std::fs::create_dir_all(path.parent()?).ok()?;
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, bytes).ok()?;
            std::fs::rename(&tmp, path).ok()
        });
    if written.is_none() {
        tracing::debug!(path = %path.display(), "not kept on disk");
    }
    written.is_some()
}

/// Keeps `value` at `path` as another build would have (tests).
#[cfg(test)]
pub(crate) fn keep_as_another_build<T: Serialize>(path: &Path, value: &T) -> bool {
    keep_as(path, "another build", value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_read_back_only_from_this_build_and_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/value");
        assert!(keep(&path, &(1u32, "one".to_string())));
        assert_eq!(load::<(u32, String)>(&path), Some((1, "one".into())));
        assert!(keep_as_another_build(&path, &(1u32, "one".to_string())));
        assert_eq!(load::<(u32, String)>(&path), None);
        std::fs::write(&path, b"damaged").unwrap();
        assert_eq!(load::<(u32, String)>(&path), None);
        assert_eq!(load::<(u32, String)>(&dir.path().join("missing")), None);
    }
}
