//! # toolgate-tools
//!
//! The built-in tools of toolgate. Each returns its full domain output with an
//! output schema; bounding is the pipeline's job, and no tool asks the user itself.
//!
//! The tools are grouped by what they touch:
//!
//! - [`file_tools`]: files under the location (read, write, edit, apply_patch,
//!   list, glob, grep);
//! - [`process_tools`]: processes (bash);
//! - [`web_tools`]: the web (webfetch, websearch);
//! - [`session_tools`]: the session and its user (todowrite, question, skill).

#![deny(missing_docs)]

pub mod file_tools;
pub mod process_tools;
pub mod session_tools;
pub mod web_tools;

use std::path::{Path, PathBuf};

use toolgate_core::{Registration, Registry, RegistryError};

/// Configuration of every built-in tool.
#[derive(Clone, Debug, Default)]
pub struct BuiltinConfig {
    /// Settings of the file tools.
    pub files: file_tools::FileToolsConfig,
    /// Settings of the process tools.
    pub process: process_tools::ProcessToolsConfig,
    /// Settings of the web tools.
    pub web: web_tools::WebToolsConfig,
    /// Settings of the session tools.
    pub session: session_tools::SessionToolsConfig,
}

impl BuiltinConfig {
    /// Keeps every tool's files (bash spills, todo lists) under `dir`.
    pub fn set_data_dir(&mut self, dir: &Path) {
        self.process.data_dir = dir.to_path_buf();
        self.session.data_dir = dir.to_path_buf();
    }
}

/// Registers every built-in tool in `registry` under its built-in name. The
/// returned guards keep the registrations alive.
pub fn register_builtins(
    registry: &Registry,
    config: &BuiltinConfig,
) -> Result<Vec<Registration>, RegistryError> {
    let mut guards = file_tools::register(registry, &config.files)?;
    guards.extend(process_tools::register(registry, &config.process)?);
    guards.extend(web_tools::register(registry, &config.web)?);
    guards.extend(session_tools::register(registry, &config.session)?);
    Ok(guards)
}

/// The names of the built-in tools, as [`register_builtins`] registers them.
pub const BUILTIN_TOOL_NAMES: &[&str] = &[
    "read",
    "write",
    "edit",
    "apply_patch",
    "bash",
    "list",
    "glob",
    "grep",
    "webfetch",
    "websearch",
    "todowrite",
    "question",
    "skill",
];

/// Where the tools keep their files unless told otherwise:
/// `$XDG_DATA_HOME/toolgate`, else `~/.local/share/toolgate`, else
/// `<temp dir>/toolgate`.
pub(crate) fn default_data_dir() -> PathBuf {
    env_dir("XDG_DATA_HOME")
        .map(|d| d.join("toolgate"))
        .or_else(|| env_dir("HOME").map(|h| h.join(".local/share/toolgate")))
        .unwrap_or_else(|| std::env::temp_dir().join("toolgate"))
}

/// The directory named by environment variable `var`, if it is absolute.
fn env_dir(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}
