//! What can go wrong while building a [`crate::Toolgate`], checking a call or
//! settling one. Each error names the file or directory at fault and keeps its
//! cause as its `source`.

use std::path::PathBuf;

use toolgate_core::{CallError, PathError, RegistryError};
use toolgate_policy::config::ConfigError;
use toolgate_store::StoreError;

/// Why a [`crate::Builder`] could not build, or a [`crate::Toolgate`] could not
/// start its engine (open the audit log, the approvals, register the tools).
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The builder was given no location.
    #[error("no location: give the builder the workspace's root directory (Builder::location)")]
    NoLocation,
    /// The location's root is not a directory that can be opened.
    #[error("bad location {}", path.display())]
    Location {
        /// The root as given.
        path: PathBuf,
        /// Why it was refused.
        #[source]
        source: PathError,
    },
    /// A config layer is broken; the error names its file, line and fix.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// No data directory was given and none could be derived from the environment.
    #[error("no data directory: set --data-dir, TOOLGATE_DATA_DIR, XDG_DATA_HOME or HOME")]
    NoDataDir,
    /// The data directory was given as an empty path.
    #[error("the data directory path is empty")]
    EmptyDataDir,
    /// The data directory does not exist and cannot be created.
    #[error("cannot create data directory {}", path.display())]
    CreateDataDir {
        /// The directory.
        path: PathBuf,
        /// Why it could not be created.
        #[source]
        source: std::io::Error,
    },
    /// The audit log cannot be opened, for example because the data directory
    /// is not writable.
    #[error("cannot open the audit log {}", path.display())]
    AuditLog {
        /// The database file.
        path: PathBuf,
        /// Why it could not be opened.
        #[source]
        source: StoreError,
    },
    /// The saved approvals cannot be opened.
    #[error("cannot open {}", path.display())]
    Approvals {
        /// The database file.
        path: PathBuf,
        /// Why it could not be opened.
        #[source]
        source: StoreError,
    },
    /// `[store]` or `[identity]` is wrong, or the store they choose cannot
    /// be opened.
    #[error("cannot open the audit log and approvals as [store] says")]
    Team(#[from] crate::team::TeamError),
    /// The built-in tools could not be registered.
    #[error("cannot register the built-in tools")]
    Register(#[source] RegistryError),
}

/// Why a call could not be checked.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// No built-in tool has this name.
    #[error("unknown tool {tool:?}; the built-in tools are: {known}")]
    UnknownTool {
        /// The name asked for.
        tool: String,
        /// The built-in tools' names, comma-separated.
        known: String,
    },
    /// The tool refuses the input (it does not decode, or fails its checks),
    /// with the error a real call would give.
    #[error(transparent)]
    Input(CallError),
    /// The policy or the tools could not be prepared.
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// Why a call was not settled.
#[derive(Debug, thiserror::Error)]
pub enum SettleError {
    /// The engine could not be started (the audit log, the approvals, the tools).
    #[error(transparent)]
    Start(#[from] BuildError),
    /// The pipeline refused or failed the call; the message is meant for the model.
    #[error(transparent)]
    Call(#[from] CallError),
}
