//! The places a repository's own git configuration names: files and
//! directories of the work tree that git reads as configuration or runs.
//!
//! `.git/config` is protected, but what it names is git's configuration
//! too: the target of `include.path` / `includeIf.*.path` is read as config
//! (an `fsmonitor` there runs at the next `git status`), `core.hooksPath` is
//! where the hooks are, and a filter's, a diff driver's or an `fsmonitor`'s
//! command is often a script of the work tree. A write to any of them is a
//! write to `.git/config`.
//!
//! Git's keys are many and grow, so no list of keys says which values are
//! paths: every value word that names an existing path, holds a `/`, or is
//! the value of a key whose name ends in `path` or `file`, counts (a word
//! that is not a path only protects a name nobody writes). Includes are
//! followed as git follows them (relative to the including file), at most
//! [`MAX_INCLUDE_DEPTH`] deep; a file larger than [`MAX_CONFIG_BYTES`] is
//! not read.
//!
//! ```
//! use toolgate_paths::git_config_paths::named_paths;
//! let dir = tempfile::tempdir().unwrap();
//! let ws = dir.path();
//! std::fs::create_dir_all(ws.join(".git")).unwrap();
//! std::fs::write(
//!     ws.join(".git/config"),
//!     "[core]\n\thooksPath = tools/hooks\n[include]\n\tpath = ../team.gitconfig\n",
//! )
//! .unwrap();
//! let named = named_paths(&ws.join(".git"), ws);
//! assert!(named.contains(&ws.join("tools/hooks")));
//! assert!(named.contains(&ws.join("team.gitconfig")));
//! ```

use std::path::{Path, PathBuf};

/// Config files larger than this are not read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// git's own limit on nested includes.
pub const MAX_INCLUDE_DEPTH: usize = 10;
/// At most this many places are reported for one repository.
pub const MAX_NAMED: usize = 4096;

/// The places the configuration of the repository whose git directory is
/// `git_dir` (work tree `work_tree`) names, lexically normalised: its
/// `config`, `config.worktree`, the common directory's `config` of a linked
/// worktree, and everything they include.
pub fn named_paths(git_dir: &Path, work_tree: &Path) -> Vec<PathBuf> {
    let mut files = vec![git_dir.join("config"), git_dir.join("config.worktree")];
    if let Some(common) = read_small(&git_dir.join("commondir")) {
        let common = git_dir.join(common.trim());
        files.push(common.join("config"));
        files.push(common.join("config.worktree"));
    }
    let mut out: Vec<PathBuf> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for f in files {
        read_config(&f, work_tree, 0, &mut seen, &mut out);
    }
    out.truncate(MAX_NAMED);
    out
}

/// Reads one config file and what it includes, adding what its values name.
fn read_config(
    file: &Path,
    work_tree: &Path,
    depth: usize,
    seen: &mut Vec<PathBuf>,
    out: &mut Vec<PathBuf>,
) {
    if depth > MAX_INCLUDE_DEPTH || seen.iter().any(|s| s == file) || out.len() >= MAX_NAMED {
        return;
    }
    seen.push(file.to_path_buf());
    let Some(text) = read_small(file) else {
        return;
    };
    let base = file.parent().unwrap_or(work_tree).to_path_buf();
    let mut section = String::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let head = rest.split(']').next().unwrap_or_default();
            section = head
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = unquote(value.trim());
        let include = key == "path" && (section == "include" || section == "includeif");
        if include {
            let target = under(&base, &value);
            add(out, target.clone());
            read_config(&target, work_tree, depth + 1, seen, out);
            continue;
        }
        let by_type = key.ends_with("path") || key.ends_with("file");
        for word in value.split_whitespace() {
            let word = word.trim_start_matches('!').trim_matches(['"', '\'']);
            if word.is_empty() || word.starts_with('-') || word.contains("://") {
                continue;
            }
            for at in [work_tree, base.as_path()] {
                let p = under(at, word);
                // A word naming the work tree or a directory above it (a
                // remote's `url = ..`) is not a file git runs.
                if work_tree.starts_with(&p) {
                    continue;
                }
                if by_type || word.contains('/') || std::fs::symlink_metadata(&p).is_ok() {
                    add(out, p);
                }
            }
        }
    }
}

/// `value` as git would find it from `base`: absolute as is, otherwise
/// joined; `.` and `..` resolved by the names.
fn under(base: &Path, value: &str) -> PathBuf {
    crate::path_text::lexical(&base.join(value))
}

fn add(out: &mut Vec<PathBuf>, p: PathBuf) {
    if out.len() < MAX_NAMED && !out.contains(&p) {
        out.push(p);
    }
}

/// A value without its surrounding quotes and its trailing comment.
fn unquote(value: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

/// The text of a small regular file, or `None` (read without ever waiting:
/// see [`crate::small_file`]).
fn read_small(file: &Path) -> Option<String> {
    crate::small_file::read_text(file, MAX_CONFIG_BYTES).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_driver_script_a_nested_include_and_a_missing_hooks_path_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::create_dir_all(ws.join("scripts")).unwrap();
        std::fs::write(ws.join("scripts/clean.sh"), "").unwrap();
        std::fs::write(
            ws.join(".git/config"),
            "[filter \"lint\"]\n\tclean = \"scripts/clean.sh %f\" # c\n\
             [includeIf \"gitdir:~/\"]\n\tpath = ../conf/a.inc\n\
             [core]\n\thooksPath = hooks-not-yet\n\tbare = false\n\
             [remote \"origin\"]\n\turl = ..\n\tfetch = .\n",
        )
        .unwrap();
        std::fs::create_dir_all(ws.join("conf")).unwrap();
        std::fs::write(ws.join("conf/a.inc"), "[include]\n\tpath = b.inc\n").unwrap();
        let named = named_paths(&ws.join(".git"), ws);
        for want in [
            "scripts/clean.sh",
            "conf/a.inc",
            "conf/b.inc",
            "hooks-not-yet",
        ] {
            assert!(named.contains(&ws.join(want)), "{want}: {named:?}");
        }
        assert!(!named.contains(&ws.join("false")), "{named:?}");
        assert!(!named.iter().any(|p| ws.starts_with(p)), "{named:?}");
    }

    #[test]
    fn an_include_cycle_ends() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(ws.join(".git/config"), "[include]\npath = ../a\n").unwrap();
        std::fs::write(ws.join("a"), "[include]\npath = .git/config\n").unwrap();
        let named = named_paths(&ws.join(".git"), ws);
        assert!(named.contains(&ws.join("a")), "{named:?}");
    }
}
