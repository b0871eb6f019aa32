//! Shared test fixtures for confined commands, compiled only with the
//! `test-util` feature: where a test's files must live for the sandbox to
//! show them as the host's.
//!
//! A crate's tests enable it through their dev-dependency:
//!
//! ```toml
//! [dev-dependencies]
//! toolgate-sandbox = { workspace = true, features = ["test-util"] }
//! ```

use std::path::{Path, PathBuf};

/// The directory to make a test's temporary directories in: `target_tmpdir`
/// (the test's `CARGO_TARGET_TMPDIR`), unless it is under `/tmp` or
/// `/var/tmp`, which the sandbox replaces with private ones (a checkout
/// under `/tmp` would make "outside" and "home" vanish inside the sandbox
/// instead of being read-only); then `~/.cache/toolgate-sandbox-tests`,
/// created if need be.
pub fn scratch_parent(target_tmpdir: &Path) -> std::io::Result<PathBuf> {
    if !(target_tmpdir.starts_with("/tmp") || target_tmpdir.starts_with("/var/tmp")) {
        return Ok(target_tmpdir.to_path_buf());
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
    let dir = home.join(".cache/toolgate-sandbox-tests");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
