//! Protection by shape: programs load their configuration, hooks and start-up
//! code from dot-paths (`.husky/`, `.vscode/`, `.envrc`, `.yarnrc.yml`…), and
//! no list of names is ever complete. So beyond the table of
//! [`crate::protected`], a write to any path inside a location root with a
//! component that starts with a dot is protected, except
//!
//! - an inert dotfile, one of the short list [`INERT_DOTFILES`], each read by
//!   programs only as data that names no program;
//! - a path git ignores under the ignore rules as they stand before the write
//!   ([`is_ignored`]): build output and caches such as `node_modules/.bin`,
//!   `target/debug/.fingerprint`, `.pytest_cache` or `.venv`. The ignore
//!   files themselves (`.gitignore`, `.git/info/exclude`) are protected, by
//!   the table, since they decide what this exception spares;
//! - git's own directory, which the table judges (its data is written by
//!   every commit; its config and hooks are protected).
//!
//! This module states facts; [`crate::protected::ProtectedPaths::check`]
//! applies them to the paths of its roots.
//!
//! ```
//! use std::path::Path;
//! use toolgate_paths::shape::first_dot_component;
//! assert_eq!(first_dot_component(Path::new("src/.hidden/x.js")).as_deref(), Some(".hidden"));
//! assert_eq!(first_dot_component(Path::new("docs/.editorconfig")), None);
//! assert_eq!(first_dot_component(Path::new("src/main.rs")), None);
//! ```

use std::path::{Component, Path};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// Dotfiles that programs read only as data naming no program, so a write
/// to one never makes anything run code: `(name, why)`, names lowercase.
pub const INERT_DOTFILES: &[(&str, &str)] = &[
    (
        ".editorconfig",
        "indentation, charset and line-ending settings for editors; it names no program (https://editorconfig.org/)",
    ),
    (
        ".dockerignore",
        "which files `docker build` leaves out of the context; patterns only (https://docs.docker.com/build/concepts/context/#dockerignore-files)",
    ),
    (
        ".prettierignore",
        "which files Prettier skips; patterns only (https://prettier.io/docs/ignore)",
    ),
    (
        ".eslintignore",
        "which files ESLint skips; patterns only (https://eslint.org/docs/latest/use/configure/ignore-deprecated)",
    ),
    (
        ".stylelintignore",
        "which files Stylelint skips; patterns only (https://stylelint.io/user-guide/ignore-code)",
    ),
    (
        ".markdownlintignore",
        "which files markdownlint-cli skips; patterns only",
    ),
    (
        ".npmignore",
        "which files `npm pack` leaves out of a package; patterns only (https://docs.npmjs.com/cli/configuring-npm/package-json#files)",
    ),
    (
        ".gitkeep",
        "an empty placeholder that keeps a directory in git; nothing reads it",
    ),
    (
        ".keep",
        "an empty placeholder that keeps a directory in git; nothing reads it",
    ),
    (
        ".mailmap",
        "maps author names and addresses in git's output; names no program (https://git-scm.com/docs/gitmailmap)",
    ),
];

/// Why a dot-path of the location is protected, in words a person reads.
pub const DOT_PATH_WHY: &str = "a dot-path inside the location: programs load their configuration, hooks and start-up code from such places, so a write there may make them run code (only inert dotfiles and what git ignored before the write are spared)";

/// Whether `name` (any case) is an inert dotfile.
pub fn is_inert_dotfile(name: &str) -> bool {
    INERT_DOTFILES
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case(name))
}

/// The first component of `rest` (a path relative to a location root) that
/// starts with a dot, when that makes the path a dot-path the shape rule
/// protects: `None` when no component starts with a dot (names of dots
/// only, like `...`, aside), when one is
/// `.git` (git's directory follows the table), or when the only one is the
/// file name and that is an inert dotfile.
pub fn first_dot_component(rest: &Path) -> Option<String> {
    let names: Vec<String> = rest
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if names.iter().any(|n| n.eq_ignore_ascii_case(".git")) {
        return None;
    }
    // A name of dots only (`...`, Go's package pattern `./...` taken as a
    // path) is no program's configuration.
    let dots: Vec<usize> = (0..names.len())
        .filter(|&i| names[i].starts_with('.') && !names[i].bytes().all(|b| b == b'.'))
        .collect();
    match dots.as_slice() {
        [] => None,
        [only] if *only + 1 == names.len() && is_inert_dotfile(&names[*only]) => None,
        [first, ..] => Some(names[*first].clone()),
    }
}

/// The top of the git work tree that holds `root`: the nearest directory at
/// or above it with a `.git` entry.
fn work_tree_top(root: &Path) -> Option<&Path> {
    root.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
}

/// The ignore rules of one directory's `.gitignore` (and, for the top of
/// the work tree, `.git/info/exclude` first, which the `.gitignore` files
/// override). A file that cannot be read or parsed adds nothing.
fn rules_of(dir: &Path, top: bool) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    let mut any = false;
    if top && std::fs::symlink_metadata(dir.join(".git")).is_ok_and(|m| m.is_dir()) {
        let exclude = dir.join(".git/info/exclude");
        if exclude.is_file() {
            any |= builder.add(exclude).is_none();
        }
    }
    let own = dir.join(".gitignore");
    if own.is_file() {
        any |= builder.add(own).is_none();
    }
    if !any {
        return None;
    }
    builder.build().ok().filter(|g| !g.is_empty())
}

/// Whether git ignores `rest` (a path relative to the location `root`)
/// under the ignore rules as they are on disk now: `.git/info/exclude` and
/// the `.gitignore` files from the top of the work tree down, the deepest
/// deciding, and everything beneath an ignored directory ignored (git never
/// looks into one). A location outside any git work tree ignores nothing;
/// the user's global excludes file is not read (a stricter answer).
///
/// The last component is judged as a directory when it is one on disk, or
/// when it does not exist and `named_dir` says the write makes one.
pub fn is_ignored(root: &Path, rest: &Path, named_dir: bool) -> bool {
    let Some(top) = work_tree_top(root) else {
        return false;
    };
    let Ok(above) = root.strip_prefix(top) else {
        return false;
    };
    let names: Vec<&std::ffi::OsStr> = above
        .components()
        .chain(rest.components())
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let mut rules: Vec<Gitignore> = rules_of(top, true).into_iter().collect();
    let mut at = top.to_path_buf();
    for (i, name) in names.iter().enumerate() {
        at.push(name);
        let last = i + 1 == names.len();
        let is_dir = !last || std::fs::symlink_metadata(&at).map_or(named_dir, |m| m.is_dir());
        for r in rules.iter().rev() {
            match r.matched(&at, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => break,
                Match::None => {}
            }
        }
        if !last {
            rules.extend(rules_of(&at, false));
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_components() {
        for (rest, want) in [
            (".husky/pre-commit", Some(".husky")),
            ("a/.config/x.toml", Some(".config")),
            (".foo/.editorconfig", Some(".foo")),
            (".eslintrc.js", Some(".eslintrc.js")),
            (".editorconfig", None),
            ("pkg/.Dockerignore", None),
            (".git/hooks/x", None),
            ("...", None),
            ("cmd/...", None),
            ("src/lib.rs", None),
        ] {
            assert_eq!(
                first_dot_component(Path::new(rest)).as_deref(),
                want,
                "{rest}"
            );
        }
    }

    #[test]
    fn every_inert_dotfile_says_why() {
        for (name, why) in INERT_DOTFILES {
            assert!(name.starts_with('.') && *name == name.to_ascii_lowercase());
            assert!(!why.is_empty());
        }
    }

    fn repo(ignore: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git/info")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), ignore).unwrap();
        dir
    }

    #[test]
    fn ignored_paths_follow_gits_rules() {
        let dir = repo("node_modules/\n/target\n.venv\n.pytest_cache/\n.cache\n!keep/.cache\n");
        let root = dir.path();
        std::fs::write(root.join(".git/info/exclude"), ".local-notes\n").unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/.gitignore"), ".tool/\n").unwrap();
        for p in [
            "node_modules/.bin/eslint",
            "node_modules/.package-lock.json",
            "target/debug/.fingerprint/x",
            ".venv/bin/python",
            ".venv",
            ".pytest_cache/v/cache/nodeids",
            ".pytest_cache/",
            "a/.cache/x",
            ".local-notes",
            "sub/.tool/x",
        ] {
            assert!(is_ignored(root, Path::new(p), p.ends_with('/')), "{p}");
        }
        for p in [
            ".husky/pre-commit",
            ".pytest_cache",
            "keep/.cache",
            "src/target/x",
            ".tool/x",
            ".gitignore",
        ] {
            assert!(!is_ignored(root, Path::new(p), p.ends_with('/')), "{p}");
        }
    }

    #[test]
    fn outside_a_work_tree_nothing_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*\n").unwrap();
        assert!(!is_ignored(dir.path(), Path::new(".venv/x"), false));
    }

    #[test]
    fn a_root_below_the_top_reads_the_rules_above_it() {
        let dir = repo("build/\n");
        let root = dir.path().join("pkg");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join(".gitignore"), ".out/\n").unwrap();
        assert!(is_ignored(&root, Path::new("build/.x"), false));
        assert!(is_ignored(&root, Path::new(".out/y"), false));
        assert!(!is_ignored(&root, Path::new(".other/y"), false));
    }
}
