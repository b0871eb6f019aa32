//! The secret files an agent's own content search reads.
//!
//! toolgate's `grep` leaves credential files out of its walk, so judging an
//! agent's `Grep` as toolgate's `grep` of the same directory would judge a
//! search that skips them. The agents' own searches (ripgrep, `git grep`,
//! `grep -r`) skip none: they print the matching lines of a private key or
//! a `.env` below the directory like any other file's. So the credential
//! files below a searched directory are found here and each is judged as a
//! read, as if it were named.
//!
//! The walk is a superset of what the agents search: hidden files are
//! included (some pass `--hidden`), and only what git ignores is left out
//! (`.gitignore` files and `.git/info/exclude`, which ripgrep and `git
//! grep` both honour, in a git work tree). It does not follow symbolic
//! links and stops at [`MAX_ENTRIES`] entries; past that the search cannot
//! be judged file by file.

use std::path::{Path, PathBuf};

use toolgate_core::credential::is_credential;

/// At most this many entries are looked at for one searched directory.
pub const MAX_ENTRIES: usize = 100_000;

/// The credential files below `dir` that a content search of it reads
/// (none when `dir` is not a directory: a named file is judged as named);
/// `Err` says why they cannot be listed.
pub fn secrets_below(dir: &Path) -> Result<Vec<PathBuf>, String> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"));
    let walk = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .parents(true)
        .ignore(false)
        .git_global(false)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(true)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut out = Vec::new();
    for (seen, entry) in walk.enumerate() {
        if seen >= MAX_ENTRIES {
            return Err(format!("it holds more than {MAX_ENTRIES} entries"));
        }
        let Ok(entry) = entry else {
            continue;
        };
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        if is_credential(entry.path(), &home).is_some() {
            out.push(entry.into_path());
        }
    }
    Ok(out)
}
