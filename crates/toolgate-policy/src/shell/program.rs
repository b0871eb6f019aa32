//! Which program a bare command name runs: the first `PATH` entry holding it.
//!
//! A name is the known program only when no `PATH` entry the workspace or the
//! home directory controls (an entry inside the location or the home, or a
//! relative one such as `.` or an empty entry) holds a file of that name: a
//! repository's `node_modules/.bin/ls` or a `~/bin/git` is not the system's.
//! Only those entries are looked at (usually none), so the common case costs
//! nothing.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use toolgate_core::Location;

/// The `PATH` entries the workspace or the home controls, for one `PATH`,
/// home and set of roots: computed once and kept (a decision looks up several
/// names, and most `PATH`s have no such entry at all).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Controlled {
    path_var: OsString,
    home: PathBuf,
    roots: Vec<PathBuf>,
    /// Absolute entries inside the home or a root.
    dirs: Vec<PathBuf>,
    /// Relative or empty entries (the command's own directory).
    relative: Vec<PathBuf>,
}

static LAST: Mutex<Option<Arc<Controlled>>> = Mutex::new(None);

fn controlled(path_var: &OsStr, location: &Location, home: &Path) -> Arc<Controlled> {
    let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(c) = last.as_ref() {
        if c.path_var == path_var
            && c.home == home
            && c.roots.iter().map(PathBuf::as_path).eq(location.roots())
        {
            return c.clone();
        }
    }
    let roots: Vec<PathBuf> = location.roots().map(Path::to_path_buf).collect();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut relative = Vec::new();
    for entry in std::env::split_paths(path_var) {
        if entry.as_os_str().is_empty() || entry.is_relative() {
            relative.push(entry);
        } else if (entry.starts_with(home) || roots.iter().any(|r| entry.starts_with(r)))
            && !dirs.contains(&entry)
        {
            dirs.push(entry);
        }
    }
    let c = Arc::new(Controlled {
        path_var: path_var.to_os_string(),
        home: home.to_path_buf(),
        roots,
        dirs,
        relative,
    });
    *last = Some(c.clone());
    c
}

/// The programs a read tool itself runs by name, through `PATH`: GNU tar
/// and bsdtar hand a compressed archive (detected from its first bytes when
/// listing, whatever the options) to the compressor of its format.
pub(crate) fn helper_programs(name: &str) -> &'static [&'static str] {
    match name {
        "tar" | "gtar" => &[
            "gzip",
            "gunzip",
            "bzip2",
            "xz",
            "lzip",
            "lzma",
            "lzop",
            "zstd",
            "compress",
            "uncompress",
        ],
        // bsdtar (libarchive) runs `lrzip -d -q` and `grzip -d` always, and
        // the others when it was built without their libraries.
        "bsdtar" => &[
            "gzip", "bzip2", "xz", "lzma", "lzip", "lzop", "lz4", "zstd", "lrzip", "grzip",
        ],
        // git checks a signature (`--format=%G?`, `format.pretty`) with
        // the program `gpg.format` names, found on PATH by default.
        "git" => &["gpg", "gpgsm", "ssh-keygen"],
        _ => &[],
    }
}

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
    let c = controlled(path_var?, location, home);
    for entry in &c.relative {
        // `PATH=.:…` or an empty entry: the command's own directory.
        let Some(cwd) = cwd else {
            return Some(entry.join(name));
        };
        let candidate = cwd.join(entry).join(name);
        if std::fs::symlink_metadata(&candidate).is_ok() {
            return Some(candidate);
        }
    }
    c.dirs
        .iter()
        .map(|dir| dir.join(name))
        .find(|candidate| std::fs::symlink_metadata(candidate).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace with `bin_dir/helper` planted and on PATH before
    /// `/usr/bin`: whether `program` itself is shadowed, and whether one of
    /// the helpers it runs by name is.
    fn planted_helper(bin_dir: &str, helper: &str, program: &str) -> (bool, bool) {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        let location = Location::new(&ws).unwrap();
        std::fs::create_dir_all(ws.join(bin_dir)).unwrap();
        std::fs::write(ws.join(bin_dir).join(helper), "#!/bin/sh\n").unwrap();
        let path = format!("{}/{bin_dir}:/usr/bin", ws.display());
        let p = Some(OsStr::new(&path));
        let shadowed = |name: &str| shadowing_program(name, p, &location, &ws, Some(&ws)).is_some();
        (
            shadowed(program),
            helper_programs(program).iter().any(|h| shadowed(h)),
        )
    }

    #[test]
    fn tar_runs_the_compressor_of_an_archive_by_name() {
        // `tar -tf a.tgz` detects gzip and runs `gzip -d` from PATH: a
        // workspace `gzip` on PATH runs as much as a workspace `tar` would.
        assert_eq!(planted_helper("bin", "gzip", "tar"), (false, true));
        assert!(helper_programs("cat").is_empty());
    }

    #[test]
    fn bsdtar_runs_the_decompressor_of_an_archive_by_name() {
        // `bsdtar -tf a.tar.lrz` (proven read since bsdtar got a listing
        // spec) runs `lrzip -d -q` from PATH: libarchive has no lrzip or
        // grzip decoder of its own, and runs `gzip -d`, `zstd -d`… when it
        // was built without their libraries.
        for helper in ["lrzip", "grzip", "lzop", "lz4", "zstd", "gzip", "xz"] {
            assert_eq!(
                planted_helper("bin", helper, "bsdtar"),
                (false, true),
                "{helper}"
            );
        }
    }

    #[test]
    fn git_log_runs_the_signature_checker_by_name() {
        // `git log --format=%G? -1` on a commit with a gpgsig header ran
        // `node_modules/.bin/gpg` (a workspace PATH entry), judged read.
        assert!(planted_helper("node_modules/.bin", "gpg", "git").1);
    }

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
