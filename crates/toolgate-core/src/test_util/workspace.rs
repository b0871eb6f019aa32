//! A workspace in a temporary directory, removed when dropped.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::Location;

/// A temporary directory, canonical (so that resolved paths compare equal),
/// holding a workspace `ws` (the location's root) and a home `home`, both
/// created, and beside them the place for a data directory `data` (not
/// created: the stores create it as they do in real use).
pub struct TempWorkspace {
    _dir: tempfile::TempDir,
    base: PathBuf,
    location: Arc<Location>,
}

impl TempWorkspace {
    /// Creates the directory, its workspace and its home.
    ///
    /// # Panics
    /// When the directories cannot be made: the test cannot run.
    #[allow(clippy::expect_used)] // a test fixture: set-up failing fails the test
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let base = std::fs::canonicalize(dir.path()).expect("the temporary directory");
        let ws = base.join("ws");
        std::fs::create_dir(&ws).expect("the workspace directory");
        std::fs::create_dir(base.join("home")).expect("the home directory");
        let location = Arc::new(Location::new(&ws).expect("the workspace is a location"));
        TempWorkspace {
            _dir: dir,
            base,
            location,
        }
    }

    /// The temporary directory that holds everything.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The location whose root is the workspace.
    pub fn location(&self) -> Arc<Location> {
        Arc::clone(&self.location)
    }

    /// The workspace, the location's root.
    pub fn ws(&self) -> PathBuf {
        self.base.join("ws")
    }

    /// The home directory beside the workspace.
    pub fn home(&self) -> PathBuf {
        self.base.join("home")
    }

    /// The data directory beside the workspace.
    pub fn data(&self) -> PathBuf {
        self.base.join("data")
    }

    /// Writes `text` to `path`, creating the directories it needs.
    ///
    /// # Panics
    /// When the file cannot be written: the test cannot run.
    #[allow(clippy::expect_used)] // a test fixture: set-up failing fails the test
    pub fn write(&self, path: impl AsRef<Path>, text: &str) {
        let path = path.as_ref();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("the file's directory");
        }
        std::fs::write(path, text).expect("the file is written");
    }
}

impl Default for TempWorkspace {
    fn default() -> Self {
        Self::new()
    }
}
