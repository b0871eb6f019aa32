//! Shared helpers for the file-tool tests: a real tempdir workspace and calls
//! through the type-erased handler (schema decoding and output validation
//! included), exactly as the pipeline makes them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_core::{
    CallIdentity, Location, PermissionRequest, PrepareError, RunError, Tool, ToolContext,
    ToolOutput, handler,
};
use toolgate_tools::file_tools::{FileState, FileToolsConfig};

/// A workspace in a fresh temporary directory.
pub struct Ws {
    pub dir: tempfile::TempDir,
    pub location: Arc<Location>,
    pub state: Arc<FileState>,
}

/// Why a call failed.
#[derive(Debug)]
pub enum CallFailure {
    Prepare(PrepareError),
    Run(RunError),
}

impl std::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallFailure::Prepare(e) => write!(f, "prepare: {e}"),
            CallFailure::Run(e) => write!(f, "run: {e}"),
        }
    }
}

impl Ws {
    pub fn new() -> Ws {
        Ws::with_config(FileToolsConfig::default())
    }

    pub fn with_config(config: FileToolsConfig) -> Ws {
        let dir = tempfile::tempdir().unwrap();
        let location = Arc::new(Location::new(dir.path()).unwrap());
        Ws {
            dir,
            location,
            state: FileState::new(config),
        }
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        self.location.root()
    }

    /// A path under the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }

    /// Writes a file (creating parents).
    pub fn put(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        p
    }

    /// Reads a file as a string.
    pub fn get(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn ctx(&self, session: &str) -> ToolContext {
        ToolContext::new(
            CallIdentity {
                session_id: session.to_string(),
                call_id: "call-1".into(),
                ..CallIdentity::default()
            },
            Arc::clone(&self.location),
            CancellationToken::new(),
        )
    }

    /// The requests `tool` computes for `input`.
    pub fn intent<T: Tool>(
        &self,
        tool: T,
        input: Value,
    ) -> Result<Vec<PermissionRequest>, CallFailure> {
        let h = handler(tool).unwrap();
        h.prepare(&input, &self.location)
            .map(|p| p.requests)
            .map_err(CallFailure::Prepare)
    }

    /// Prepares and runs `tool` with `input` in session `s1`.
    pub async fn call<T: Tool>(&self, tool: T, input: Value) -> Result<ToolOutput, CallFailure> {
        self.call_in("s1", tool, input).await
    }

    /// Prepares and runs `tool` with `input` in `session`.
    pub async fn call_in<T: Tool>(
        &self,
        session: &str,
        tool: T,
        input: Value,
    ) -> Result<ToolOutput, CallFailure> {
        let h = handler(tool).unwrap();
        let prepared = h
            .prepare(&input, &self.location)
            .map_err(CallFailure::Prepare)?;
        prepared
            .run(self.ctx(session))
            .await
            .map_err(CallFailure::Run)
    }
}

/// The text of all text blocks.
pub fn text(out: &ToolOutput) -> String {
    out.content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The error message of a failed call.
pub fn err(r: Result<ToolOutput, CallFailure>) -> String {
    match r {
        Ok(out) => panic!("expected failure, got {}", out.structured),
        Err(e) => e.to_string(),
    }
}

/// The canonical string of a path.
pub fn canon(p: &Path) -> String {
    toolgate_core::location::resolve_path(p)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}
