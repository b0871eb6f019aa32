//! Writing files safely: atomically through a temporary sibling and a rename.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically: readers see the old or the new content,
/// never a mix (not synced to disk: a power loss may lose the change). An existing file keeps its permissions. Missing parent
/// directories are created; the ones created are returned, outermost first, so a
/// rollback can remove them.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<Vec<PathBuf>> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    let created = create_dirs(parent)?;
    let permissions = fs::metadata(path).ok().map(|m| m.permissions());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = parent.join(format!(
        ".{name}.toolgate-{}-{}.tmp",
        std::process::id(),
        NEXT_TEMP.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        if let Some(p) = &permissions {
            file.set_permissions(p.clone())?;
        }
        // No fsync: the rename makes the change atomic for readers, and an fsync
        // per file made a 50-file patch take ~0.5 s on a busy disk.
        fs::rename(&temp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    Ok(created)
}

/// Creates `dir` and its missing ancestors; returns those created, outermost first.
fn create_dirs(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut cur = Some(dir);
    while let Some(d) = cur {
        match fs::symlink_metadata(d) {
            Ok(m) if m.is_dir() => break,
            Ok(_) => match fs::metadata(d) {
                Ok(m) if m.is_dir() => break,
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::NotADirectory,
                        format!("{} exists and is not a directory", d.display()),
                    ));
                }
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(d.to_path_buf()),
            Err(e) => return Err(e),
        }
        cur = d.parent();
    }
    missing.reverse();
    let mut created = Vec::new();
    for d in missing {
        match fs::create_dir(&d) {
            Ok(()) => created.push(d),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                remove_dirs(&created);
                return Err(e);
            }
        }
    }
    Ok(created)
}

/// Removes directories created by [`write_atomic`] (innermost first), if empty.
pub fn remove_dirs(created: &[PathBuf]) {
    for d in created.iter().rev() {
        let _ = fs::remove_dir(d);
    }
}
