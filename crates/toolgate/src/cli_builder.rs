//! The one place the commands turn their flags into a [`toolgate::Builder`]:
//! `call`, `check`, `policy`, `mcp`, `serve` and `sandbox exec` all build
//! their engine here.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use toolgate::{BuildError, Builder, DataDir, Durability, Mode, Toolgate};
use toolgate_core::Location;

/// The workspace root of a command: `--root`, or the current directory.
pub fn root(root: Option<&Path>) -> Result<PathBuf> {
    match root {
        Some(r) => Ok(r.to_path_buf()),
        None => std::env::current_dir().context("cannot read the current directory"),
    }
}

/// The location of `--root` (or the current directory), for the commands that
/// need no engine (`trust`, `approvals list`).
pub fn location(root_flag: Option<&Path>) -> Result<Location> {
    let root = root(root_flag)?;
    Location::new(&root).with_context(|| format!("bad --root {}", root.display()))
}

/// The builder for `--root`, `--config` and `--mode`, in `data` with
/// `durability`.
pub fn builder(
    root_flag: Option<&Path>,
    config: &[PathBuf],
    mode: Option<Mode>,
    data: &DataDir,
    durability: Durability,
) -> Result<Builder> {
    let mut builder = Builder::new()
        .location(root(root_flag)?)
        .located_data_dir(data.clone())
        .durability(durability);
    for file in config {
        builder = builder.config_file(file);
    }
    if let Some(mode) = mode {
        builder = builder.mode(mode);
    }
    Ok(builder)
}

/// Builds, naming the flag at fault when the location is bad.
pub fn build(builder: Builder) -> Result<Toolgate> {
    builder.build().map_err(|e| match e {
        BuildError::Location { path, source } => {
            anyhow::Error::new(source).context(format!("bad --root {}", path.display()))
        }
        other => anyhow::Error::new(other),
    })
}

/// Starts the engine of a command that runs tools (`call`, `mcp`, `serve`),
/// first saying on stderr what a person should know: project config entries
/// ignored, and bash commands that will not run confined.
pub fn start_noting(toolgate: &Toolgate) -> Result<&toolgate::Started> {
    if let Some(notice) = toolgate.project_notice() {
        eprintln!("toolgate: {notice}");
    }
    let started = toolgate.start()?;
    if let Some(line) = started.sandbox_notice() {
        eprintln!("{line}");
    }
    Ok(started)
}
