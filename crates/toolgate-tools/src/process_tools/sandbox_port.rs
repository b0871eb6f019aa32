//! The port through which `bash` runs its command confined. The tool decides
//! nothing about confinement: the program that builds the tools passes an
//! implementation (or none) in [`ProcessToolsConfig`](super::ProcessToolsConfig).

use std::any::Any;
use std::path::{Path, PathBuf};

use toolgate_core::{Failure, Location, StagedChange};

/// What to confine.
#[derive(Debug)]
pub struct ConfineRequest<'a> {
    /// The program (`bash`).
    pub program: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// The location the call acts in.
    pub location: &'a Location,
    /// The directory to start in.
    pub workdir: &'a Path,
    /// The call's network request was allowed: keep the network.
    pub network: bool,
    /// The hosts the call's allowed network requests named: what the
    /// command may reach through the sandbox's proxy.
    pub hosts: &'a [String],
    /// The session the call belongs to (what the sandbox records, such as
    /// connections through its proxy, is attributed to it).
    pub session_id: &'a str,
    /// The call's id.
    pub call_id: &'a str,
}

/// A command ready to run confined.
pub struct ConfinedCommand {
    /// The command to spawn (the caller sets environment, stdio and group).
    pub command: std::process::Command,
    /// Held until the command has exited (the sandbox's per-run state).
    pub guard: Box<dyn Any + Send>,
    /// What the sandbox refuses, in one sentence, for failed commands.
    pub refuses: String,
    /// The command's staged writes, judged and landed after it exits;
    /// `None` when it writes the location directly.
    pub staged: Option<Box<dyn StagedRun>>,
    /// When set, the command inherits only the variables
    /// [`toolgate_core::sandbox_env::sandbox_env_allows`] admits with these
    /// extra names.
    pub env_allowlist: Option<Vec<String>>,
}

/// A confined run's staged writes.
pub trait StagedRun: Send {
    /// Every path the command changed.
    fn changes(&mut self) -> Result<Vec<StagedChange>, Failure>;
    /// Lands the changes at `accepted` as one change set (atomic, undoable);
    /// the rest is discarded. Returns the change set's checkpoint id, or
    /// `None` when nothing landed.
    fn land(&mut self, accepted: &[PathBuf]) -> Result<Option<String>, Failure>;
}

impl std::fmt::Debug for ConfinedCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfinedCommand")
            .field("command", &self.command)
            .field("refuses", &self.refuses)
            .finish_non_exhaustive()
    }
}

/// Confines bash commands.
pub trait CommandSandbox: Send + Sync + std::fmt::Debug {
    /// The confined command; `Ok(None)` runs it unconfined (sandbox off, or
    /// unavailable where that is allowed); `Err` refuses to run it, naming why
    /// and keeping the error underneath.
    fn confine(&self, request: &ConfineRequest<'_>) -> Result<Option<ConfinedCommand>, Failure>;
}
