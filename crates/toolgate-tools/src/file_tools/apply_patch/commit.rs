//! Committing a plan atomically: on any failure every change already made is
//! undone — changed files restored, created files and directories removed.

use std::path::PathBuf;

use toolgate_core::{Location, ToolError};

use super::plan::Change;
use crate::file_tools::fsio;

/// Applies `changes` in order, or none of them. `shown` names a path for errors.
/// Each file is written (or removed) within its parent directory's handle,
/// opened without following symlinks (see [`fsio`]).
pub fn commit(
    location: &Location,
    changes: &[Change],
    shown: impl Fn(&PathBuf) -> String,
) -> Result<(), ToolError> {
    let mut done: Vec<(usize, Vec<PathBuf>)> = Vec::new();
    for (i, change) in changes.iter().enumerate() {
        let result = match &change.after {
            Some(bytes) => fsio::write_atomic(Some(location), &change.path, bytes),
            None => fsio::remove_file(Some(location), &change.path).map(|()| Vec::new()),
        };
        match result {
            Ok(created_dirs) => done.push((i, created_dirs)),
            Err(e) => {
                let verb = if change.after.is_some() {
                    "write"
                } else {
                    "delete"
                };
                let failures = rollback(location, changes, &done, &shown);
                let outcome = if failures.is_empty() {
                    format!(
                        "{} earlier change(s) were rolled back; nothing was changed",
                        done.len()
                    )
                } else {
                    format!(
                        "rolling back failed for: {}; those files may be left changed",
                        failures.join("; ")
                    )
                };
                return Err(ToolError::Failed(format!(
                    "cannot {verb} {}: {e}; {outcome}",
                    shown(&change.path)
                )));
            }
        }
    }
    Ok(())
}

/// Undoes `done` in reverse; returns a description of each undo that failed.
fn rollback(
    location: &Location,
    changes: &[Change],
    done: &[(usize, Vec<PathBuf>)],
    shown: &impl Fn(&PathBuf) -> String,
) -> Vec<String> {
    let mut failures = Vec::new();
    for (i, created_dirs) in done.iter().rev() {
        let change = &changes[*i];
        let result = match &change.before {
            Some(bytes) => {
                fsio::write_atomic(Some(location), &change.path, bytes).and_then(|_| match &change
                    .before_permissions
                {
                    Some(p) => std::fs::set_permissions(&change.path, p.clone()),
                    None => Ok(()),
                })
            }
            None => fsio::remove_file(Some(location), &change.path),
        };
        fsio::remove_dirs(created_dirs);
        if let Err(e) = result {
            tracing::error!(path = %change.path.display(), error = %e, "apply_patch rollback failed");
            failures.push(format!("{} ({e})", shown(&change.path)));
        }
    }
    failures
}
