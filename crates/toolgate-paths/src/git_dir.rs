//! Inside a `.git` directory, what git writes as a repository's ordinary
//! state: objects, refs, logs, the index and the markers of a commit, merge
//! or rebase in progress. None of it makes git run a program or read from
//! elsewhere, so a confined `git commit` or `git rebase` lands unasked.
//! Everything else in `.git` stays protected: `config`, `hooks/`, `info/`
//! (attributes, exclude), `commondir`, `objects/info/` (alternates),
//! `modules/` (submodules' configs and hooks), `worktrees/` (gitdir files),
//! `rebase-merge/` and `sequencer/` (todo lists with `exec` lines), and any
//! name git may add later. An allowlist: a new name is protected until it
//! is known to be inert.
//!
//! Names are compared in lower case, as the protected table is.
//!
//! ```
//! use toolgate_paths::git_dir::is_inert;
//! let rest = |p: &str| p.split('/').map(String::from).collect::<Vec<_>>();
//! assert!(is_inert(&rest("objects/ab/cdef")));
//! assert!(is_inert(&rest("refs/heads/main")));
//! assert!(!is_inert(&rest("objects/info/alternates")));
//! assert!(!is_inert(&rest("config")));
//! assert!(!is_inert(&rest("hooks/pre-commit")));
//! ```

/// Directories of `.git` whose whole content is data git reads as data
/// (gitrepository-layout(5)), with the subdirectory that is not.
const INERT_DIRS: &[(&str, Option<&str>)] = &[
    // Loose and packed objects; `objects/info/alternates` points git at
    // other object stores, so `info` is excepted.
    ("objects", Some("info")),
    // Branches, tags, remotes' refs, the stash; not `refs/replace/`, whose
    // refs make git show one object in place of another everywhere (a
    // commit's tree, a file's content) without a trace in `git status`.
    ("refs", Some("replace")),
    // Reflogs.
    ("logs", None),
    // Git LFS's object store (its config is `.lfsconfig`, outside `.git`).
    ("lfs", None),
    // Recorded conflict resolutions (`git rerere`).
    ("rr-cache", None),
];

/// Files at the top of `.git` that hold state, not instructions
/// (gitrepository-layout(5), git-commit(1), git-merge(1), git-rebase(1)).
const INERT_FILES: &[&str] = &[
    "index",
    "head",
    "orig_head",
    "fetch_head",
    "merge_head",
    "merge_msg",
    "merge_mode",
    "merge_autostash",
    "auto_merge",
    "cherry_pick_head",
    "revert_head",
    "rebase_head",
    "commit_editmsg",
    "tag_editmsg",
    "squash_msg",
    "packed-refs",
    "description",
    "shallow",
    "gc.pid",
    "gc.log",
    "bisect_log",
    "bisect_start",
    "bisect_expected_rev",
    "bisect_ancestors_ok",
    "bisect_names",
    "bisect_terms",
    "bisect_first_parent",
];

/// Whether the path below a `.git` directory (`rest`, its components in
/// lower case, not empty) is ordinary repository state.
pub fn is_inert(rest: &[String]) -> bool {
    match rest {
        [] => false,
        [file] => {
            INERT_FILES.contains(&file.as_str())
                || INERT_DIRS.iter().any(|(d, _)| d == file)
                // The split index's shared files.
                || file.starts_with("sharedindex.")
        }
        [dir, next, ..] => INERT_DIRS
            .iter()
            .any(|(d, except)| d == dir && *except != Some(next.as_str())),
    }
}

#[cfg(test)]
mod tests {
    use super::is_inert;

    fn rest(p: &str) -> Vec<String> {
        p.split('/').map(|s| s.to_ascii_lowercase()).collect()
    }

    #[test]
    fn what_git_commit_and_rebase_write_is_inert() {
        for p in [
            "index",
            "HEAD",
            "ORIG_HEAD",
            "COMMIT_EDITMSG",
            "objects/0b/5b8f89ecbf8562c7810cde8678cb45bfb12dbd",
            "objects/pack/pack-1.pack",
            "objects",
            "refs/heads/main",
            "refs/stash",
            "logs/HEAD",
            "logs/refs/heads/topic",
            "packed-refs",
            "sharedindex.abc",
        ] {
            assert!(is_inert(&rest(p)), "{p}");
        }
    }

    #[test]
    fn what_makes_git_run_code_or_look_elsewhere_is_not() {
        for p in [
            "config",
            "CONFIG",
            "hooks/pre-commit",
            "hooks",
            "info/attributes",
            "info/exclude",
            "commondir",
            "objects/info/alternates",
            "objects/info/http-alternates",
            "modules/sub/config",
            "modules/sub/hooks/post-checkout",
            "worktrees/w/gitdir",
            "rebase-merge/git-rebase-todo",
            "sequencer/todo",
            "a-name-git-adds-later",
            "fsmonitor--daemon.ipc",
            "refs/replace/0b5b8f89ecbf8562c7810cde8678cb45bfb12dbd",
            "REFS/Replace",
        ] {
            assert!(!is_inert(&rest(p)), "{p}");
        }
    }
}
