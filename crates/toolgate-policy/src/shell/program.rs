//! Which program a bare command name runs: the first `PATH` entry holding it.
//!
//! A name is the known program only when no `PATH` entry the workspace or the
//! home directory controls (an entry inside the location or the home, or a
//! relative one such as `.` or an empty entry) holds a file of that name: a
//! repository's `node_modules/.bin/ls` or a `~/bin/git` is not the system's.
//! Only those entries are looked at (usually none), so the common case costs
//! nothing.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use toolgate_core::Location;

/// The file a `PATH` entry controlled by the workspace or the home holds
/// under `name`, if any: the command may run it instead of the known program.
pub(crate) fn shadowing_program(
    name: &str,
    path_var: Option<&OsStr>,
    location: &Location,
    home: &Path,
    cwd: Option<&Path>,
) -> Option<PathBuf> {
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let path_var = path_var?;
    for entry in std::env::split_paths(path_var) {
        let dir = if entry.as_os_str().is_empty() || entry.is_relative() {
            // `PATH=.:…` or an empty entry: the command's own directory.
            match cwd {
                Some(cwd) => cwd.join(&entry),
                None => return Some(entry.join(name)),
            }
        } else {
            entry
        };
        let controlled = dir.starts_with(home) || location.roots().any(|r| dir.starts_with(r));
        if !controlled {
            continue;
        }
        let candidate = dir.join(name);
        if std::fs::symlink_metadata(&candidate).is_ok() {
            return Some(candidate);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_in_a_workspace_path_entry_shadows_the_known_one() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        let location = Location::new(&ws).unwrap();
        let home = ws.join("home");
        std::fs::create_dir_all(ws.join("node_modules/.bin")).unwrap();
        std::fs::write(ws.join("node_modules/.bin/ls"), "#!/bin/sh\n").unwrap();
        std::fs::create_dir_all(home.join("bin")).unwrap();
        std::fs::write(home.join("bin/git"), "#!/bin/sh\n").unwrap();
        let path = format!(
            "/usr/bin:{}/node_modules/.bin:{}/bin",
            ws.display(),
            home.display()
        );
        let p = Some(OsStr::new(&path));
        assert!(shadowing_program("ls", p, &location, &home, Some(&ws)).is_some());
        assert!(shadowing_program("git", p, &location, &home, Some(&ws)).is_some());
        assert!(shadowing_program("cat", p, &location, &home, Some(&ws)).is_none());
        std::fs::write(ws.join("cat"), "#!/bin/sh\n").unwrap();
        let dot = Some(OsStr::new(".:/usr/bin"));
        assert!(shadowing_program("cat", dot, &location, &home, Some(&ws)).is_some());
        assert!(
            shadowing_program(
                "cat",
                Some(OsStr::new("/usr/bin:/bin")),
                &location,
                &home,
                Some(&ws)
            )
            .is_none()
        );
    }
}
