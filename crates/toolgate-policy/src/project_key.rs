//! Which project saved approvals belong to.
//!
//! "Always" saves an approval for a project. Keyed by the checkout's path, an
//! approval made in `/home/ana/src/app` would never apply to the same
//! repository checked out at `/home/ben/work/app` — and a team sharing one
//! approval store checks out everywhere. So a location inside a git
//! repository with an `origin` remote is keyed by that remote, normalised
//! (`git:github.com/acme/app`, whatever the scheme, user, port-less form or
//! `.git` suffix), plus the location's path inside the repository when it is
//! not the top (`git:github.com/acme/app#services/api`). Anything else is
//! keyed by its canonical path, as before.
//!
//! The remote is read from the repository's own `config` (the common one of a
//! linked worktree) with git's syntax; nothing runs `git`. An unreadable or
//! unparseable config falls back to the path: that only means asking again.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::create_dir_all(dir.path().join(".git")).unwrap();
//! std::fs::write(
//!     dir.path().join(".git/config"),
//!     "[remote \"origin\"]\n\turl = git@github.com:Acme/app.git\n",
//! )
//! .unwrap();
//! assert_eq!(
//!     toolgate_policy::project_key::project_key(dir.path()),
//!     "git:github.com/Acme/app"
//! );
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::repo_config::git_config_syntax;

/// How far up from the location a `.git` is looked for.
const MAX_DEPTH: usize = 64;

/// The key saved approvals of the location rooted at `root` are stored under
/// (computed once per root per process).
pub fn project_key(root: &Path) -> String {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, String>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(key) = cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(root)
    {
        return key.clone();
    }
    let key = compute(root);
    cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(root.to_path_buf(), key.clone());
    key
}

fn compute(root: &Path) -> String {
    let by_path = root.display().to_string();
    let Some((top, git_dir)) = find_git(root) else {
        return by_path;
    };
    let Some(url) = origin_url(&common_dir(&git_dir)) else {
        return by_path;
    };
    let Some(remote) = normalise_remote(&url) else {
        return by_path;
    };
    let inside = root
        .strip_prefix(&top)
        .ok()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    if inside.is_empty() {
        format!("git:{remote}")
    } else {
        format!("git:{remote}#{inside}")
    }
}

/// The work tree's top and its git directory: the first `.git` (a directory,
/// or a `gitdir:` file) at or above `root`.
fn find_git(root: &Path) -> Option<(PathBuf, PathBuf)> {
    let mut dir = Some(root);
    for _ in 0..MAX_DEPTH {
        let d = dir?;
        let dot_git = d.join(".git");
        if dot_git.is_dir() {
            return Some((d.to_path_buf(), dot_git));
        }
        if dot_git.is_file() {
            let text = toolgate_core::small_file::read_text(&dot_git, 4096).ok()?;
            let target = text.strip_prefix("gitdir:")?.trim();
            let target = Path::new(target);
            let git_dir = if target.is_absolute() {
                target.to_path_buf()
            } else {
                d.join(target)
            };
            return Some((d.to_path_buf(), git_dir));
        }
        dir = d.parent();
    }
    None
}

/// A linked worktree's git directory names the common one in `commondir`.
fn common_dir(git_dir: &Path) -> PathBuf {
    match toolgate_core::small_file::read_text(&git_dir.join("commondir"), 4096) {
        Ok(text) => {
            let target = Path::new(text.trim());
            if target.is_absolute() {
                target.to_path_buf()
            } else {
                git_dir.join(target)
            }
        }
        Err(_) => git_dir.to_path_buf(),
    }
}

/// `remote.origin.url` of the repository's config (the last one written).
fn origin_url(common: &Path) -> Option<String> {
    let text = crate::trust::read_config_bytes(&common.join("config")).ok()?;
    let entries = git_config_syntax::parse(&text).ok()?;
    entries
        .into_iter()
        .filter(|e| e.key == "remote.origin.url")
        .filter_map(|e| e.value)
        .next_back()
}

/// `host/path` of a remote URL: `https://user@Host:443/a/b.git`,
/// `ssh://git@host/a/b`, `git@host:a/b.git` and `host:a/b` all give
/// `host/a/b` (the host lowercased, the path as written, without `.git` and
/// slashes at the ends). A local path gives `None`: it names no shared
/// repository.
pub fn normalise_remote(url: &str) -> Option<String> {
    let url = url.trim();
    let (authority, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            return None;
        }
        match rest.split_once('/') {
            Some((a, p)) => (a, p),
            None => (rest, ""),
        }
    } else {
        // scp-like `[user@]host:path`; a path with a slash before any colon
        // is a local path.
        let colon = url.find(':')?;
        if url[..colon].contains('/') {
            return None;
        }
        (&url[..colon], &url[colon + 1..])
    };
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host_port.rsplit_once(':') {
        // A port: same repository whatever the port.
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => host_port,
    };
    let path = path.trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    if host.is_empty() || path.is_empty() {
        return None;
    }
    Some(format!("{}/{path}", host.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_one_remote_gives_one_key() {
        for url in [
            "https://github.com/acme/app.git",
            "https://user:tok@GitHub.com/acme/app",
            "ssh://git@github.com:22/acme/app.git",
            "git@github.com:acme/app.git",
            "github.com:acme/app/",
            "git://github.com/acme/app",
        ] {
            assert_eq!(
                normalise_remote(url).as_deref(),
                Some("github.com/acme/app"),
                "{url}"
            );
        }
    }

    #[test]
    fn local_paths_and_empty_remotes_name_no_project() {
        for url in [
            "/srv/git/app.git",
            "./app",
            "file:///srv/app.git",
            "https://host",
            "",
        ] {
            assert_eq!(normalise_remote(url), None, "{url}");
        }
    }

    fn repo(dir: &Path, url: Option<&str>) {
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        let config = match url {
            Some(u) => format!("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = {u}\n"),
            None => "[core]\n\tbare = false\n".to_string(),
        };
        std::fs::write(dir.join(".git/config"), config).unwrap();
    }

    #[test]
    fn two_checkouts_of_one_repository_share_a_key_and_a_subdirectory_adds_its_path() {
        let base = tempfile::tempdir().unwrap();
        let (a, b) = (
            base.path().join("ana/app"),
            base.path().join("ben/work/app"),
        );
        repo(&a, Some("https://github.com/acme/app.git"));
        repo(&b, Some("git@github.com:acme/app"));
        assert_eq!(compute(&a), compute(&b));
        assert_eq!(compute(&a), "git:github.com/acme/app");
        std::fs::create_dir_all(b.join("services/api")).unwrap();
        assert_eq!(
            compute(&b.join("services/api")),
            "git:github.com/acme/app#services/api"
        );
    }

    #[test]
    fn a_repository_without_origin_or_with_a_broken_config_is_keyed_by_path() {
        let base = tempfile::tempdir().unwrap();
        let plain = base.path().join("plain");
        repo(&plain, None);
        assert_eq!(compute(&plain), plain.display().to_string());
        let broken = base.path().join("broken");
        repo(&broken, None);
        std::fs::write(broken.join(".git/config"), "[remote \"origin\n url = x").unwrap();
        assert_eq!(compute(&broken), broken.display().to_string());
        let none = base.path().join("none");
        std::fs::create_dir_all(&none).unwrap();
        assert!(compute(&none).starts_with('/'));
    }

    #[test]
    fn a_linked_worktree_reads_the_common_config() {
        let base = tempfile::tempdir().unwrap();
        let main = base.path().join("main");
        repo(&main, Some("https://gitlab.com/g/app.git"));
        let wt_git = main.join(".git/worktrees/feature");
        std::fs::create_dir_all(&wt_git).unwrap();
        std::fs::write(wt_git.join("commondir"), "../..\n").unwrap();
        let wt = base.path().join("feature");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
        assert_eq!(compute(&wt), "git:gitlab.com/g/app");
    }
}

/// The form a path approval's pattern is saved in: relative to the project's
/// root when it lies below it, so that it applies to every checkout of the
/// project (`/home/ana/app/src/**` is saved as `src/**`). Other patterns, and
/// paths outside the root, are saved as they are.
pub fn pattern_to_store(action: &str, pattern: &str, root: &Path) -> String {
    if crate::pattern::PatternKind::for_action(action) != crate::pattern::PatternKind::Path {
        return pattern.to_string();
    }
    let prefix = format!("{}/", root.display().to_string().trim_end_matches('/'));
    match pattern.strip_prefix(&prefix) {
        // `~…` would read as the home directory, `/…` cannot follow the
        // prefix; keep those absolute.
        Some(rest) if !rest.is_empty() && !rest.starts_with('~') => rest.to_string(),
        _ => pattern.to_string(),
    }
}

/// A saved pattern as the current checkout reads it: a relative path pattern
/// is put back below `root` ([`pattern_to_store`]'s inverse).
pub fn pattern_from_store(action: &str, pattern: &str, root: &Path) -> String {
    if crate::pattern::PatternKind::for_action(action) != crate::pattern::PatternKind::Path
        || pattern.starts_with('/')
        || pattern.starts_with('~')
    {
        return pattern.to_string();
    }
    // A relative pattern climbing out of the root (a hand-made row in a
    // shared store) is not below it: it answers nothing.
    if pattern.split('/').any(|c| c == "..") {
        return String::new();
    }
    format!(
        "{}/{pattern}",
        root.display().to_string().trim_end_matches('/')
    )
}

#[cfg(test)]
mod pattern_tests {
    use super::*;

    #[test]
    fn a_path_below_the_root_is_saved_relative_and_read_back_below_another_root() {
        let saved = pattern_to_store("edit", "/home/ana/app/src/**", Path::new("/home/ana/app"));
        assert_eq!(saved, "src/**");
        assert_eq!(
            pattern_from_store("edit", &saved, Path::new("/srv/ci/app")),
            "/srv/ci/app/src/**"
        );
    }

    #[test]
    fn commands_outside_paths_and_home_like_names_are_kept_as_they_are() {
        let root = Path::new("/home/ana/app");
        assert_eq!(
            pattern_to_store("bash", "./scripts/t.sh", root),
            "./scripts/t.sh"
        );
        assert_eq!(
            pattern_from_store("bash", "./scripts/t.sh", root),
            "./scripts/t.sh"
        );
        assert_eq!(pattern_to_store("edit", "/etc/hosts", root), "/etc/hosts");
        assert_eq!(
            pattern_to_store("edit", "/home/ana/app2/x", root),
            "/home/ana/app2/x"
        );
        assert_eq!(
            pattern_to_store("edit", "/home/ana/app/~x", root),
            "/home/ana/app/~x"
        );
        assert_eq!(pattern_from_store("edit", "~/x", root), "~/x");
        assert_eq!(pattern_from_store("edit", "/etc/hosts", root), "/etc/hosts");
    }

    #[test]
    fn a_stored_relative_pattern_that_climbs_out_of_the_root_answers_nothing() {
        let root = Path::new("/home/ana/app");
        assert_eq!(pattern_from_store("edit", "../../.ssh/id_rsa", root), "");
        assert_eq!(pattern_from_store("edit", "src/../../x", root), "");
        assert!(!crate::policy::approval_covers(
            "edit",
            "",
            "/home/ana/.ssh/id_rsa"
        ));
    }
}
