//! # toolgate-tools
//!
//! The built-in tools of toolgate. Each returns its full domain output with an
//! output schema; bounding is the pipeline's job, and no tool asks the user itself.
//!
//! File tools (read, write, edit, apply_patch, list, glob, grep) live in
//! [`file_tools`]; process, web and session tools (bash, webfetch, websearch,
//! todowrite, question, skill) in [`process_tools`].

#![deny(missing_docs)]

pub mod file_tools;
pub mod process_tools;

use toolgate_core::{Registration, Registry, RegistryError};

/// Configuration of every built-in tool.
#[derive(Clone, Debug, Default)]
pub struct BuiltinConfig {
    /// Settings of the file tools.
    pub files: file_tools::FileToolsConfig,
    /// Settings of the process, web and session tools.
    pub process: process_tools::ProcessToolsConfig,
}

/// Registers every built-in tool in `registry` under its DESIGN.md name. The
/// returned guards keep the registrations alive.
pub fn register_builtins(
    registry: &Registry,
    config: &BuiltinConfig,
) -> Result<Vec<Registration>, RegistryError> {
    let mut guards = file_tools::register(registry, &config.files)?;
    guards.extend(process_tools::register(registry, &config.process)?);
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
