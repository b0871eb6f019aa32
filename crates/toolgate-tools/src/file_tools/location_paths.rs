//! Path helpers: resolving through the location and naming paths for the model.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use toolgate_core::credential::{self, CredentialInodes};
use toolgate_core::{Location, PermissionRequest, ResolvedPath, Risk, ToolContext, ToolError};

/// Resolves `path` (relative to the location root) or the root itself.
pub fn resolve(location: &Location, path: Option<&str>) -> Result<ResolvedPath, ToolError> {
    let text = match path {
        Some(p) => p,
        None => return Ok(location.resolve(".")?),
    };
    Ok(location.resolve(text)?)
}

/// Resolves `path` (or the root) as a directory to search: fails, naming the
/// path, when nothing is there or it is a file. Returns the directory and its
/// text for messages.
///
/// The directory must be what the call's `action` request judged (see [`judged`]).
pub fn existing_dir(
    ctx: &ToolContext,
    action: &str,
    path: Option<&str>,
) -> Result<(std::path::PathBuf, String), ToolError> {
    let resolved = resolve(&ctx.location, path)?;
    judged(ctx, action, &resolved)?;
    let display = resolved.path.display().to_string();
    if !resolved.exists {
        return Err(ToolError::Failed(format!("directory not found: {display}")));
    }
    if !resolved.is_dir {
        return Err(ToolError::Failed(format!(
            "{display} is a file, not a directory"
        )));
    }
    Ok((resolved.path, display))
}

/// Whether `resolved` is a credential (core's classifier): by its name, or as
/// a hard link to a credential file of the home or of the location.
pub fn is_credential(location: &Location, resolved: &ResolvedPath) -> bool {
    let home = credential::home_dir();
    if credential::is_credential(&resolved.path, &home).is_some() {
        return true;
    }
    let roots: Vec<&Path> = location.roots().collect();
    credential::hard_link_of(&resolved.path, &home, &roots).is_some()
}

/// A read-risk request for `resolved` (`credential` when it is one).
pub fn read_request(
    location: &Location,
    action: &str,
    resolved: &ResolvedPath,
) -> PermissionRequest {
    let risk = if is_credential(location, resolved) {
        Risk::Credential
    } else {
        Risk::Read
    };
    PermissionRequest::path(action, resolved.path.to_string_lossy(), risk)
}

/// A write-risk `edit` request for `resolved` with a note (`credential` when
/// it is one).
pub fn edit_request(location: &Location, resolved: &ResolvedPath, note: &str) -> PermissionRequest {
    let risk = if is_credential(location, resolved) {
        Risk::Credential
    } else {
        Risk::Write
    };
    PermissionRequest::path("edit", resolved.path.to_string_lossy(), risk).with_note(note)
}

/// The judged request of `action` for `resolved`, when the call runs after a
/// judgement: fails with a clear error when the path resolves now to
/// something that was not judged (a symlink swapped since). `Ok(None)` when
/// the tool runs without a judgement (called directly).
pub fn judged<'c>(
    ctx: &'c ToolContext,
    action: &str,
    resolved: &ResolvedPath,
) -> Result<Option<&'c PermissionRequest>, ToolError> {
    let Some(judged) = ctx.judged() else {
        return Ok(None);
    };
    let text = resolved.path.to_string_lossy();
    match judged
        .iter()
        .find(|r| r.action == action && r.resource == text)
    {
        Some(r) => Ok(Some(r)),
        None => {
            let was: Vec<&str> = judged
                .iter()
                .filter(|r| r.action == action)
                .map(|r| r.resource.as_str())
                .collect();
            Err(ToolError::Failed(format!(
                "{text} is not what was judged ({}): the path changed after the decision \
                 (a symbolic link swapped?); nothing was done",
                was.join(", ")
            )))
        }
    }
}

/// Fails when the opened file (its metadata `meta`) is a hard link to a
/// credential file while the judged request did not say `credential`: a link
/// made after the decision. Nothing to compare when the tool runs directly.
pub fn check_opened(
    location: &Location,
    path: &Path,
    meta: &std::fs::Metadata,
    judged: Option<&PermissionRequest>,
) -> Result<(), ToolError> {
    let Some(judged) = judged else {
        return Ok(());
    };
    if judged.risk == Risk::Credential || !meta.is_file() || meta.nlink() < 2 {
        return Ok(());
    }
    let roots: Vec<&Path> = location.roots().collect();
    let snapshot = CredentialInodes::snapshot(&credential::home_dir(), &roots);
    match snapshot.link_of(meta) {
        Some(of) if of != path => Err(ToolError::Failed(format!(
            "{} became a hard link to {}, which holds secrets, after it was judged; \
             nothing was done",
            path.display(),
            of.display()
        ))),
        _ => Ok(()),
    }
}

/// `path` relative to `base` when inside it, else absolute; `/` separated.
pub fn relative(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// Fails unless `path` is an existing regular file (naming what it is).
pub fn require_file(path: &Path, display: &str) -> Result<(), ToolError> {
    let meta = std::fs::metadata(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ToolError::Failed(format!("file not found: {display}"))
        } else {
            ToolError::io(format!("cannot inspect {display}"), e)
        }
    })?;
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "{display} is a directory, not a file"
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::Failed(format!(
            "{display} is not a regular file ({})",
            special_kind(&meta)
        )));
    }
    Ok(())
}

/// Names a special file's kind.
pub fn special_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_char_device() {
        "a character device"
    } else {
        "not a regular file"
    }
}
