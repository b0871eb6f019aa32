//! A workspace in a temporary directory, removed when dropped.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::Location;

/// A temporary directory holding a workspace `ws` (the location's root) and
/// beside it the place for a data directory, `data` (not created: the
/// stores create it as they do in real use).
pub struct TempWorkspace {
    dir: tempfile::TempDir,
    location: Arc<Location>,
}

impl TempWorkspace {
    /// Creates the directory and its workspace.
    ///
    /// # Panics
    /// When the temporary directory cannot be made: the test cannot run.
    #[allow(clippy::expect_used)] // a test fixture: set-up failing fails the test
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).expect("the workspace directory");
        let location = Arc::new(Location::new(&ws).expect("the workspace is a location"));
        TempWorkspace { dir, location }
    }

    /// The temporary directory that holds everything.
    pub fn base(&self) -> &Path {
        self.dir.path()
    }

    /// The location whose root is the workspace.
    pub fn location(&self) -> Arc<Location> {
        Arc::clone(&self.location)
    }

    /// The data directory beside the workspace.
    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

impl Default for TempWorkspace {
    fn default() -> Self {
        Self::new()
    }
}
