//! Path helpers: resolving through the location and naming paths for the model.

use std::path::Path;

use toolgate_core::{Location, PermissionRequest, ResolvedPath, Risk, ToolError};

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
pub fn existing_dir(
    location: &Location,
    path: Option<&str>,
) -> Result<(std::path::PathBuf, String), ToolError> {
    let resolved = resolve(location, path)?;
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

/// A read-risk request for `resolved`.
pub fn read_request(action: &str, resolved: &ResolvedPath) -> PermissionRequest {
    PermissionRequest::new(action, resolved.path.to_string_lossy(), Risk::Read)
}

/// A write-risk `edit` request for `resolved` with a note.
pub fn edit_request(resolved: &ResolvedPath, note: &str) -> PermissionRequest {
    PermissionRequest::new("edit", resolved.path.to_string_lossy(), Risk::Write).with_note(note)
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
