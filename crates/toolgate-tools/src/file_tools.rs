//! The file tools: `read`, `write`, `edit`, `apply_patch`, `list`, `glob`, `grep`.
//!
//! Every tool resolves its paths through the [`Location`](toolgate_core::Location)
//! twice: once in `intent` (what the gate judges) and again in `execute` (what is
//! acted on), so a path string is never trusted between the two. The tools return
//! their full domain output; bounding is the pipeline's job.
//!
//! `read` records each file's content hash in a per-session [`ReadLedger`];
//! `edit` and `write` refuse to change a file whose content differs from what the
//! session last read (or wrote).
//!
//! ```
//! use std::sync::Arc;
//! use toolgate_core::{CallIdentity, Location, Tool, ToolContext};
//! use toolgate_tools::file_tools::{FileState, ReadInput, ReadTool, FileToolsConfig};
//! use tokio_util::sync::CancellationToken;
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
//! let location = Arc::new(Location::new(dir.path()).unwrap());
//! let tool = ReadTool::new(FileState::new(FileToolsConfig::default()));
//! let ctx = ToolContext::new(CallIdentity::default(), location, CancellationToken::new());
//! let input = ReadInput { path: "a.txt".into(), offset: None, limit: None };
//! let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! let out = rt.block_on(tool.execute(input, ctx)).unwrap();
//! assert_eq!(out.text.unwrap().total_lines, 2);
//! ```

mod apply_patch;
mod edit;
mod fsio;
mod glob;
mod grep;
mod ledger;
mod list;
mod location_paths;
mod path_globs;
mod read;
#[cfg(test)]
mod reference_walk;
mod text;
mod tree_walk;
mod walk_pool;
mod write;

use std::path::Path;
use std::sync::Arc;

use toolgate_core::{Registration, Registry, RegistryError, ToolError};

pub use apply_patch::{
    ApplyPatchInput, ApplyPatchOutput, ApplyPatchTool, MAX_PATCH_BYTES, MAX_PATCH_FILES,
    MatchLevel, PatchStatus, PatchedFile,
};
pub use edit::{EditInput, EditOutput, EditTool};
pub use glob::{GlobInput, GlobOutput, GlobTool};
pub use grep::{GrepInput, GrepLine, GrepOutput, GrepTool, IncludeGlobs, LINE_HEAP_MAX};
pub use ledger::ReadLedger;
pub use list::{ListInput, ListOutput, ListTool};
pub use read::{DirectoryListing, ImageRead, ReadInput, ReadKind, ReadOutput, ReadTool, TextRead};
pub use write::{WriteInput, WriteOutput, WriteTool};

/// Default number of lines `read` returns.
pub const DEFAULT_READ_LINES: usize = 2000;
/// Longest line (in characters) `read` and `grep` return before cutting it.
pub const MAX_LINE_CHARS: usize = 2000;
/// Default number of files (`list`, `glob`) or matches (`grep`) returned.
pub const DEFAULT_RESULT_LIMIT: usize = 100;
/// Longest side, in pixels, of an image returned by `read`.
pub const MAX_IMAGE_SIDE: u32 = 2000;

/// Files up to this size are read and written on the calling task's thread;
/// larger ones on the blocking pool. A hand-off to the pool and back costs more
/// CPU than reading or writing a small file, but a large one would hold up the
/// event loop (for `mcp` on stdio, the only thread serving messages).
pub const INLINE_FILE_BYTES: u64 = 256 * 1024;

/// Runs `work` right here when `inline`, else on the blocking pool.
async fn run_file_io<T, F>(inline: bool, tool: &str, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    if inline {
        return work();
    }
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::caused(format!("{tool} task failed"), e))?
}

/// Whether `path` is missing or a regular file of at most [`INLINE_FILE_BYTES`]
/// (one `stat`; anything else, a directory or a FIFO, goes to the pool).
fn small_or_missing(path: &std::path::Path) -> bool {
    match std::fs::metadata(path) {
        Ok(m) => m.is_file() && m.len() <= INLINE_FILE_BYTES,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// Settings of the file tools.
#[derive(Clone, Debug)]
pub struct FileToolsConfig {
    /// Whether `list`, `glob` and `grep` include hidden credential files
    /// (`.env`, `.env.local`, … but never `.env.example`, which is always
    /// included). The binary sets this from policy: true only when the policy
    /// allows reading them.
    pub allow_credential_files: bool,
    /// Files (`list`, `glob`) or matching lines (`grep`) returned before the
    /// "more results" note.
    pub result_limit: usize,
    /// Threads that work on a large tree's files beside the thread walking
    /// it (`grep` searching them, `glob` reading their times); 0 means one
    /// per core.
    pub threads: usize,
    /// Where `write`, `edit` and `apply_patch` record each change set
    /// before it lands (for `toolgate undo`); `None`: not recorded.
    pub checkpoints: Option<std::sync::Arc<dyn toolgate_core::ChangeRecorder>>,
}

impl FileToolsConfig {
    /// The worker threads [`threads`](Self::threads) asks for.
    pub(crate) fn walk_threads(&self) -> usize {
        match self.threads {
            0 => path_globs::cores(),
            n => n,
        }
    }
}

impl Default for FileToolsConfig {
    fn default() -> Self {
        FileToolsConfig {
            allow_credential_files: false,
            result_limit: DEFAULT_RESULT_LIMIT,
            threads: 0,
            checkpoints: None,
        }
    }
}

/// Runs `change`, which replaces or removes `paths`, as one checkpoint when
/// the tools record them: each path saved first, the set rolled back when
/// `change` fails.
pub(crate) fn as_checkpoint<T>(
    state: &FileState,
    call_id: &str,
    tool: &str,
    paths: &[&Path],
    change: impl FnOnce() -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    let Some(recorder) = &state.config.checkpoints else {
        return change();
    };
    let mut set = recorder.begin(call_id, tool).map_err(ToolError::Caused)?;
    for p in paths {
        set.save(p).map_err(ToolError::Caused)?;
    }
    set.applying().map_err(ToolError::Caused)?;
    match change() {
        Ok(out) => {
            set.landed().map_err(ToolError::Caused)?;
            Ok(out)
        }
        Err(e) => {
            if let Err(r) = set.roll_back() {
                tracing::warn!(error = %r, "rolling back a failed change set failed");
            }
            Err(e)
        }
    }
}

/// What the file tools share: their settings and the read ledger.
#[derive(Debug)]
pub struct FileState {
    /// The settings.
    pub config: FileToolsConfig,
    /// Content hashes of files read, per session.
    pub ledger: ReadLedger,
}

impl FileState {
    /// Shared state with an empty ledger.
    pub fn new(config: FileToolsConfig) -> Arc<Self> {
        Arc::new(FileState {
            config,
            ledger: ReadLedger::default(),
        })
    }
}

/// Registers `read`, `write`, `edit`, `apply_patch`, `list`, `glob` and `grep`,
/// sharing one ledger.
pub fn register(
    registry: &Registry,
    config: &FileToolsConfig,
) -> Result<Vec<Registration>, RegistryError> {
    let state = FileState::new(config.clone());
    Ok(vec![
        registry.register("read", ReadTool::new(Arc::clone(&state)))?,
        registry.register("write", WriteTool::new(Arc::clone(&state)))?,
        registry.register("edit", EditTool::new(Arc::clone(&state)))?,
        registry.register("apply_patch", ApplyPatchTool::new(Arc::clone(&state)))?,
        registry.register("list", ListTool::new(Arc::clone(&state)))?,
        registry.register("glob", GlobTool::new(Arc::clone(&state)))?,
        registry.register("grep", GrepTool::new(state))?,
    ])
}
