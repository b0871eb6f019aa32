//! The files an agent's multi-file read (Gemini's `read_many_files`) will
//! read: each of its items is a path, a directory (everything below it) or
//! a glob, and the agent reads the content of every file it matches. Each
//! such file is then judged as a read, as if it were named, so a glob or a
//! directory that reaches `.env` is judged as reading `.env`.
//!
//! Matching is a superset of the agent's: `*` and `?` stay within one name,
//! `**` crosses directories, and names starting with a dot match like any
//! other. The walk does not follow symbolic links to directories and stops
//! at [`MAX_ENTRIES`] entries or [`MAX_FILES`] matches; past either, or for
//! a glob that climbs out with `..`, the item cannot be judged file by file.

use std::path::{Component, Path, PathBuf};

use globset::GlobBuilder;

/// At most this many directory entries are looked at for one item.
pub const MAX_ENTRIES: usize = 20_000;
/// At most this many files are judged for one call.
pub const MAX_FILES: usize = 500;

/// The files `item` (relative to `base`, or absolute) names; `Err` says
/// why they cannot be listed (too many, or a glob toolgate cannot follow).
pub fn files_read(base: &Path, item: &str) -> Result<Vec<PathBuf>, String> {
    let is_glob = item.contains(['*', '?', '[', '{']);
    let joined = toolgate_core::path_text::lexical(&base.join(item));
    if !is_glob {
        if !joined.is_dir() || joined.is_symlink() {
            return Ok(vec![joined]);
        }
        let mut out = Vec::new();
        walk(&joined, &|_| true, &mut out)?;
        return Ok(out);
    }
    // The directories before the first name with a glob character: the
    // walk starts there.
    let mut start = PathBuf::new();
    let mut globbed = false;
    for c in joined.components() {
        let text = c.as_os_str().to_string_lossy();
        if globbed || text.contains(['*', '?', '[', '{']) {
            globbed = true;
            continue;
        }
        start.push(c);
    }
    if Path::new(item)
        .components()
        .skip_while(|c| {
            !c.as_os_str()
                .to_string_lossy()
                .contains(['*', '?', '[', '{'])
        })
        .any(|c| c == Component::ParentDir)
    {
        return Err(format!(
            "the glob `{item}` climbs with `..` after a wildcard"
        ));
    }
    let glob = GlobBuilder::new(&joined.to_string_lossy())
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| format!("the glob `{item}` does not parse: {e}"))?
        .compile_matcher();
    let mut out = Vec::new();
    if start.is_dir() {
        walk(&start, &|p| glob.is_match(p), &mut out)?;
    }
    Ok(out)
}

/// Adds the files (and links) below `dir` that `keep` accepts to `out`.
fn walk(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Err(format!(
                    "more than {MAX_ENTRIES} entries below {}",
                    dir.display()
                ));
            }
            let path = e.path();
            let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                stack.push(path);
            } else if keep(&path) {
                out.push(path);
                if out.len() > MAX_FILES {
                    return Err(format!("more than {MAX_FILES} files"));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_glob_a_directory_and_a_dotfile() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir_all(ws.join("config/deep")).unwrap();
        std::fs::write(ws.join("config/deep/.env"), "").unwrap();
        std::fs::write(ws.join("config/a.toml"), "").unwrap();
        std::fs::write(ws.join(".env"), "").unwrap();
        let mut got = files_read(ws, "**/.env").unwrap();
        got.sort();
        assert_eq!(got, vec![ws.join(".env"), ws.join("config/deep/.env")]);
        assert_eq!(files_read(ws, "config").unwrap().len(), 2);
        assert_eq!(
            files_read(ws, "config/*").unwrap(),
            vec![ws.join("config/a.toml")]
        );
        assert_eq!(files_read(ws, ".en?").unwrap(), vec![ws.join(".env")]);
        assert!(files_read(ws, "*/../x*").is_err());
    }
}
