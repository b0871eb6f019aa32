//! Protected paths: places where a write changes the gate itself or makes later
//! commands run code.
//!
//! This module states facts and decides nothing: [`ProtectedPaths::check`] says
//! whether a path is protected and why. The policy makes such a write at least
//! `execute`, never lets a mode or a bare wildcard allow it, and denies writes
//! to toolgate's own config and data; the sandbox keeps the same places
//! read-only.
//!
//! The table [`PROTECTED`] is data. Each entry is anchored in one of three
//! ways: anywhere in a path (a `.git` directory at any depth), in the home
//! directory (`~/.bashrc`), or at an absolute place (`/var/spool/cron/`).
//! Names are compared case-insensitively (ASCII), since on a case-insensitive
//! file system `.GIT/config` is `.git/config`. Toolgate's own files whose place
//! depends on the machine — the user, managed and session config files and the
//! data directory — are added by [`ProtectedPaths::new`].
//!
//! ```
//! use std::path::Path;
//! use toolgate_paths::protected::{ProtectedClass, ProtectedPaths};
//! let p = ProtectedPaths::new("/home/u", ["/home/u/.local/share/toolgate".into()]);
//! let hit = p.check(Path::new("/ws/.git/hooks/pre-commit")).unwrap();
//! assert_eq!(hit.entry, ".git/");
//! assert_eq!(hit.class, ProtectedClass::RunsCode);
//! assert!(p.check(Path::new("/ws/.gitignore")).is_none());
//! let own = p.check(Path::new("/home/u/.local/share/toolgate/state.db")).unwrap();
//! assert_eq!(own.class, ProtectedClass::Toolgate);
//! ```

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// Where an entry of the table is anchored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    /// The entry's names may appear at any depth of a path.
    Anywhere,
    /// The entry's names follow the home directory.
    Home,
    /// The entry's names follow `/`.
    Root,
}

/// What a write to a protected path would do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProtectedClass {
    /// It changes toolgate's own config, trust records or data.
    Toolgate,
    /// It makes later commands (a shell, git, an editor, CI, another agent,
    /// a scheduler) run code.
    RunsCode,
}

/// One entry of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtectedEntry {
    /// The entry as people write it (`.git/`, `~/.bashrc`); a trailing `/`
    /// means the directory and everything beneath it.
    pub display: &'static str,
    /// Where its names are anchored.
    pub anchor: Anchor,
    /// Its path components, lowercase.
    pub names: &'static [&'static str],
    /// Whether it covers everything beneath (a directory) or only itself.
    pub beneath: bool,
    /// What it is.
    pub class: ProtectedClass,
    /// Why a write there is protected, in words a person reads.
    pub why: &'static str,
}

const fn entry(
    display: &'static str,
    anchor: Anchor,
    names: &'static [&'static str],
    beneath: bool,
    class: ProtectedClass,
    why: &'static str,
) -> ProtectedEntry {
    ProtectedEntry {
        display,
        anchor,
        names,
        beneath,
        class,
        why,
    }
}

use Anchor::{Anywhere, Home, Root};
use ProtectedClass::{RunsCode, Toolgate};

const SHELL_STARTUP: &str = "a shell start-up file: every new shell runs it";
const AGENT: &str = "another agent's config or hooks, which that agent runs or obeys";
const CI: &str = "a CI workflow file: CI runs it with the repository's secrets";
const SCHEDULER: &str = "a per-user service or scheduler file: the system runs it later";

/// The protected places whose position does not depend on the machine.
pub const PROTECTED: &[ProtectedEntry] = &[
    entry(
        ".toolgate/",
        Anywhere,
        &[".toolgate"],
        true,
        Toolgate,
        "toolgate's project config: a write there changes the gate itself",
    ),
    entry(
        "~/.config/toolgate/",
        Home,
        &[".config", "toolgate"],
        true,
        Toolgate,
        "toolgate's user config: a write there changes the gate itself",
    ),
    entry(
        "~/.local/share/toolgate/",
        Home,
        &[".local", "share", "toolgate"],
        true,
        Toolgate,
        "toolgate's data directory (trust records, saved approvals, audit log)",
    ),
    entry(
        "/etc/toolgate/",
        Root,
        &["etc", "toolgate"],
        true,
        Toolgate,
        "toolgate's managed config: a write there changes the gate itself",
    ),
    entry(
        ".git/",
        Anywhere,
        &[".git"],
        true,
        RunsCode,
        "the repository's git internals (config, hooks), which git commands run",
    ),
    entry(
        ".envrc",
        Anywhere,
        &[".envrc"],
        false,
        RunsCode,
        "a direnv file: the shell runs it on entering the directory",
    ),
    entry(
        ".direnv/",
        Anywhere,
        &[".direnv"],
        true,
        RunsCode,
        "direnv's state, which the shell loads on entering the directory",
    ),
    entry(
        "~/.bashrc",
        Home,
        &[".bashrc"],
        false,
        RunsCode,
        SHELL_STARTUP,
    ),
    entry(
        "~/.bash_profile",
        Home,
        &[".bash_profile"],
        false,
        RunsCode,
        SHELL_STARTUP,
    ),
    entry(
        "~/.bash_login",
        Home,
        &[".bash_login"],
        false,
        RunsCode,
        SHELL_STARTUP,
    ),
    entry(
        "~/.bash_logout",
        Home,
        &[".bash_logout"],
        false,
        RunsCode,
        SHELL_STARTUP,
    ),
    entry(
        "~/.profile",
        Home,
        &[".profile"],
        false,
        RunsCode,
        SHELL_STARTUP,
    ),
    entry(
        "~/.zshrc",
        Home,
        &[".zshrc"],
        false,
        RunsCode,
        SHELL_STARTUP,
    ),
    entry(
        "~/.zshenv",
        Home,
        &[".zshenv"],
        false,
        RunsCode,
        SHELL_STARTUP,
    ),
    entry(
        "~/.zprofile",
        Home,
        &[".zprofile"],
        false,
        RunsCode,
        SHELL_STARTUP,
    ),
    entry(
        "~/.zlogin",
        Home,
        &[".zlogin"],
        false,
        RunsCode,
        SHELL_STARTUP,
    ),
    entry(
        "~/.config/fish/",
        Home,
        &[".config", "fish"],
        true,
        RunsCode,
        SHELL_STARTUP,
    ),
    entry(
        "~/.gitconfig",
        Home,
        &[".gitconfig"],
        false,
        RunsCode,
        "the user's git config, which can name programs git runs",
    ),
    entry(
        "~/.config/git/",
        Home,
        &[".config", "git"],
        true,
        RunsCode,
        "the user's git config, which can name programs git runs",
    ),
    entry(
        "~/.ssh/config",
        Home,
        &[".ssh", "config"],
        false,
        RunsCode,
        "ssh's config, which can name programs ssh runs (ProxyCommand, LocalCommand)",
    ),
    entry(".claude/", Anywhere, &[".claude"], true, RunsCode, AGENT),
    entry(".codex/", Anywhere, &[".codex"], true, RunsCode, AGENT),
    entry(".gemini/", Anywhere, &[".gemini"], true, RunsCode, AGENT),
    entry(".cursor/", Anywhere, &[".cursor"], true, RunsCode, AGENT),
    entry(
        ".mcp.json",
        Anywhere,
        &[".mcp.json"],
        false,
        RunsCode,
        AGENT,
    ),
    entry(
        ".vscode/settings.json",
        Anywhere,
        &[".vscode", "settings.json"],
        false,
        RunsCode,
        "the editor's workspace settings, which can name programs the editor runs",
    ),
    entry(
        ".vscode/tasks.json",
        Anywhere,
        &[".vscode", "tasks.json"],
        false,
        RunsCode,
        "the editor's workspace tasks, which the editor runs",
    ),
    entry(
        ".github/workflows/",
        Anywhere,
        &[".github", "workflows"],
        true,
        RunsCode,
        CI,
    ),
    entry(
        ".gitlab-ci.yml",
        Anywhere,
        &[".gitlab-ci.yml"],
        false,
        RunsCode,
        CI,
    ),
    entry(
        ".github/actions/",
        Anywhere,
        &[".github", "actions"],
        true,
        RunsCode,
        "a repository's own CI action, which its workflows run with the repository's secrets",
    ),
    entry(".circleci/", Anywhere, &[".circleci"], true, RunsCode, CI),
    entry(".buildkite/", Anywhere, &[".buildkite"], true, RunsCode, CI),
    entry(
        "azure-pipelines.yml",
        Anywhere,
        &["azure-pipelines.yml"],
        false,
        RunsCode,
        CI,
    ),
    entry(
        ".travis.yml",
        Anywhere,
        &[".travis.yml"],
        false,
        RunsCode,
        CI,
    ),
    entry(
        "bitbucket-pipelines.yml",
        Anywhere,
        &["bitbucket-pipelines.yml"],
        false,
        RunsCode,
        CI,
    ),
    entry(
        "Jenkinsfile",
        Anywhere,
        &["jenkinsfile"],
        false,
        RunsCode,
        CI,
    ),
    entry(".drone.yml", Anywhere, &[".drone.yml"], false, RunsCode, CI),
    entry(
        ".husky/",
        Anywhere,
        &[".husky"],
        true,
        RunsCode,
        "git hooks that husky points core.hooksPath at: git runs them on commit and push",
    ),
    entry(
        ".pre-commit-config.yaml",
        Anywhere,
        &[".pre-commit-config.yaml"],
        false,
        RunsCode,
        "the pre-commit framework's hooks, which git runs on every commit",
    ),
    entry(
        "~/.config/systemd/user/",
        Home,
        &[".config", "systemd", "user"],
        true,
        RunsCode,
        SCHEDULER,
    ),
    entry(
        "~/.config/autostart/",
        Home,
        &[".config", "autostart"],
        true,
        RunsCode,
        "a desktop autostart file: the session runs it at login",
    ),
    entry(
        "/var/spool/cron/",
        Root,
        &["var", "spool", "cron"],
        true,
        RunsCode,
        "a crontab: cron runs it on schedule",
    ),
    entry(
        "/etc/cron.d/",
        Root,
        &["etc", "cron.d"],
        true,
        RunsCode,
        "a system crontab: cron runs it on schedule",
    ),
    entry(
        "/etc/crontab",
        Root,
        &["etc", "crontab"],
        false,
        RunsCode,
        "the system crontab: cron runs it on schedule",
    ),
];

/// Why one path is protected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protected {
    /// The entry that matched, as people write it (`.git/`, `~/.bashrc`, or
    /// the path of one of toolgate's own files).
    pub entry: String,
    /// What a write there would do.
    pub class: ProtectedClass,
    /// Why, in words a person reads.
    pub why: String,
    /// The path component that names the place (`.git`, `.bashrc`,
    /// `toolgate`): a rule names a protected path when one of its pattern's
    /// components is this name.
    pub name: String,
}

/// The protected paths of one machine: the table plus toolgate's own files.
#[derive(Clone, Debug)]
pub struct ProtectedPaths {
    home: PathBuf,
    /// Toolgate's own places as given.
    own_given: Vec<PathBuf>,
    /// The same, symlinks resolved, computed on first use: most decisions
    /// judge no write, and resolving costs a `readlink` per path component.
    own: OnceLock<Vec<PathBuf>>,
    /// The location roots whose protected names are followed (see
    /// [`ProtectedPaths::with_roots`]).
    roots: Vec<PathBuf>,
    /// Where the protected names of the roots and of the home directory
    /// really are when they are symbolic links (or `.git` is a gitfile),
    /// computed on first use like `own`.
    aliases: OnceLock<Vec<Alias>>,
    /// The home directory with symlinks resolved (paths are judged in
    /// their canonical form), computed on first use like `own`.
    home_real: OnceLock<PathBuf>,
    /// The regular files of the protected places by device and inode, for
    /// a write to a hard link of one; computed the first time a written
    /// file has more than one link.
    links: OnceLock<HashMap<(u64, u64), Protected>>,
}

/// A protected place reached under another name: the entry's name is a
/// symbolic link (`.envrc -> tools/envrc`, `~/.bashrc -> dotfiles/bashrc`)
/// or a gitfile (`.git` holding `gitdir: .bare`), and `target` is where the
/// program that reads the entry really reads.
#[derive(Clone, Debug)]
struct Alias {
    target: PathBuf,
    entry: &'static ProtectedEntry,
}

impl ProtectedPaths {
    /// The table for `home`, plus `own`: toolgate's config files and data
    /// directory wherever this machine keeps them (each covers itself and
    /// everything beneath). Relative paths are dropped; an existing path is
    /// judged by its canonical form (resolved the first time it is needed),
    /// one that does not exist by the path given.
    pub fn new(home: impl Into<PathBuf>, own: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut own_given: Vec<PathBuf> = Vec::new();
        for p in own.into_iter().filter(|p| p.is_absolute()) {
            if !own_given.contains(&p) {
                own_given.push(p);
            }
        }
        ProtectedPaths {
            home: home.into(),
            own_given,
            own: OnceLock::new(),
            roots: Vec::new(),
            aliases: OnceLock::new(),
            home_real: OnceLock::new(),
            links: OnceLock::new(),
        }
    }

    /// Also protects the real places behind the protected names of `roots`
    /// (absolute, canonical location roots) and of the home directory: a
    /// `.toolgate`, `.envrc`, `.claude`, `.github` … that is a symbolic link
    /// into the location makes its target the place the program reads, and
    /// a write to the target is a write to the protected place; a `.git`
    /// gitfile makes the directory it names the repository. They are read
    /// the first time a write is judged.
    pub fn with_roots(mut self, roots: impl IntoIterator<Item = PathBuf>) -> Self {
        for r in roots.into_iter().filter(|r| r.is_absolute()) {
            if !self.roots.contains(&r) {
                self.roots.push(r);
            }
        }
        self
    }

    /// The protected places reached under another name (see [`Alias`]).
    fn aliases(&self) -> &[Alias] {
        self.aliases.get_or_init(|| {
            let mut out: Vec<Alias> = Vec::new();
            let mut add = |target: PathBuf, entry: &'static ProtectedEntry| {
                if !out.iter().any(|a| a.target == target) {
                    out.push(Alias { target, entry });
                }
            };
            for entry in PROTECTED.iter().filter(|e| e.anchor == Home) {
                if !self.home.is_absolute() {
                    break;
                }
                let lexical = entry.names.iter().fold(self.home.clone(), |p, n| p.join(n));
                if let Ok(real) = std::fs::canonicalize(&lexical) {
                    if real != lexical {
                        add(real, entry);
                    }
                }
            }
            let mut budget = ALIAS_SCAN_LIMIT;
            for root in &self.roots {
                walk_for_aliases(root, &mut budget, &mut add);
            }
            out
        })
    }

    /// The regular files of every protected place of the roots, the home
    /// directory and toolgate's own places (a directory's files two levels
    /// deep, git's object store and logs aside), by device and inode.
    fn links(&self) -> &HashMap<(u64, u64), Protected> {
        self.links.get_or_init(|| {
            let mut out = HashMap::new();
            let mut budget = LINK_SCAN_LIMIT;
            let mut places: Vec<(PathBuf, Protected)> = Vec::new();
            for entry in PROTECTED {
                let bases: Vec<PathBuf> = match entry.anchor {
                    Anywhere => self.roots.clone(),
                    Home if self.home.is_absolute() => vec![self.home.clone()],
                    Home => Vec::new(),
                    Root => vec![PathBuf::from("/")],
                };
                for base in bases {
                    let at = entry.names.iter().fold(base, |p, n| p.join(n));
                    places.push((at, protected_of(entry)));
                }
            }
            for alias in self.aliases() {
                places.push((alias.target.clone(), protected_of(alias.entry)));
            }
            for own in self.own() {
                places.push((
                    own.clone(),
                    Protected {
                        entry: own.display().to_string(),
                        class: Toolgate,
                        why: OWN_WHY.into(),
                        name: own
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                    },
                ));
            }
            for (at, hit) in places {
                collect_files(&at, &hit, 2, &mut budget, &mut out);
            }
            out
        })
    }

    /// A hard link to a protected file: the written file has more than one
    /// link, and one of them is a protected file.
    fn hard_link(&self, path: &Path) -> Option<Protected> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        if !meta.is_file() || meta.nlink() < 2 {
            return None;
        }
        let hit = self.links().get(&(meta.dev(), meta.ino()))?;
        Some(Protected {
            why: format!(
                "{} ({} is a hard link to the protected file)",
                hit.why,
                path.display()
            ),
            ..hit.clone()
        })
    }

    /// Toolgate's own places added to the table (canonical where they exist).
    pub fn own(&self) -> &[PathBuf] {
        self.own.get_or_init(|| {
            let mut resolved: Vec<PathBuf> = Vec::with_capacity(self.own_given.len());
            for p in &self.own_given {
                let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
                if !resolved.contains(&p) {
                    resolved.push(p);
                }
            }
            resolved
        })
    }

    /// Whether `path` (absolute, as judged) is protected, and why. A relative
    /// path is never protected by a home or root entry, only by an entry
    /// anchored anywhere.
    pub fn check(&self, path: &Path) -> Option<Protected> {
        for own in self.own() {
            if path.starts_with(own) {
                let name = own
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return Some(Protected {
                    entry: own.display().to_string(),
                    class: Toolgate,
                    why: OWN_WHY.into(),
                    name,
                });
            }
        }
        for alias in self.aliases() {
            let e = alias.entry;
            if path.starts_with(&alias.target) && (e.beneath || path == alias.target) {
                return Some(Protected {
                    entry: e.display.to_string(),
                    class: e.class,
                    why: format!("{} (reached here through {})", e.why, e.display),
                    name: e.names.last().copied().unwrap_or_default().to_string(),
                });
            }
        }
        let names: Vec<String> = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_string_lossy().to_ascii_lowercase()),
                _ => None,
            })
            .collect();
        // The home directory as given or as it really is: a judged path is
        // canonical, and `$HOME` may be reached through a symbolic link.
        let home_real = self.home_real.get_or_init(|| {
            std::fs::canonicalize(&self.home).unwrap_or_else(|_| self.home.clone())
        });
        let home_len = [&self.home, home_real]
            .into_iter()
            .find(|h| path.is_absolute() && h.is_absolute() && path.starts_with(h))
            .map(|h| normal_len(h));
        let by_name = PROTECTED.iter().find_map(|e| {
            let hit = match e.anchor {
                Anywhere => (0..names.len())
                    .any(|at| matches_at(e, &names, at) && !git_state(e, &names, at)),
                Home => home_len.is_some_and(|at| matches_at(e, &names, at)),
                Root => path.is_absolute() && matches_at(e, &names, 0),
            };
            hit.then(|| protected_of(e))
        });
        by_name.or_else(|| self.hard_link(path))
    }
}

const OWN_WHY: &str = "one of toolgate's own config files or its data directory: a write there changes the gate itself";

/// At most this many entries are read to find the protected files' inodes.
const LINK_SCAN_LIMIT: usize = 20_000;

/// Directories of a protected place not looked into for hard links: git's
/// object store, logs and nested repositories hold many files and nothing
/// a program runs.
const LINK_SCAN_SKIP: &[&str] = &["objects", "logs", "lfs", "modules", "worktrees"];

/// Why `e` protects a path.
fn protected_of(e: &ProtectedEntry) -> Protected {
    Protected {
        entry: e.display.to_string(),
        class: e.class,
        why: e.why.to_string(),
        name: e.names.last().copied().unwrap_or_default().to_string(),
    }
}

/// Records the regular files at `at` (itself, or beneath it `depth` levels
/// deep) as `hit`, by device and inode.
fn collect_files(
    at: &Path,
    hit: &Protected,
    depth: usize,
    budget: &mut usize,
    out: &mut HashMap<(u64, u64), Protected>,
) {
    let Ok(meta) = std::fs::symlink_metadata(at) else {
        return;
    };
    if meta.is_file() {
        out.entry((meta.dev(), meta.ino()))
            .or_insert_with(|| hit.clone());
        return;
    }
    if !meta.is_dir() || depth == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(at) else {
        return;
    };
    for entry in entries.flatten() {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let name = entry.file_name();
        if LINK_SCAN_SKIP
            .iter()
            .any(|s| name.as_encoded_bytes() == s.as_bytes())
        {
            continue;
        }
        collect_files(&entry.path(), hit, depth - 1, budget, out);
    }
}

/// At most this many entries of the location are read to find protected
/// names that are links.
const ALIAS_SCAN_LIMIT: usize = 50_000;
/// How deep below a root protected names that are links are looked for.
const ALIAS_SCAN_DEPTH: usize = 8;
/// Directories not looked into for them: git's internals, dependencies and
/// build output, which hold many files and no project's own settings.
const ALIAS_SCAN_SKIP: &[&str] = &[".git", "node_modules", "target", ".venv", "__pycache__"];

/// Walks `root` (without following links) for entries named like the first
/// component of an entry anchored anywhere (`.envrc`, `.toolgate`,
/// `.github`, `.git`…) and reports, through `add`, where the entry really
/// is when a link (or a `.git` gitfile) takes it elsewhere: a write there
/// is a write to the protected place.
fn walk_for_aliases(
    root: &Path,
    budget: &mut usize,
    add: &mut impl FnMut(PathBuf, &'static ProtectedEntry),
) {
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if *budget == 0 {
                return;
            }
            *budget -= 1;
            let name = e.file_name();
            let lower = name.to_string_lossy().to_ascii_lowercase();
            for entry in PROTECTED
                .iter()
                .filter(|p| p.anchor == Anywhere && p.names.first() == Some(&lower.as_str()))
            {
                let lexical = entry.names[1..]
                    .iter()
                    .fold(dir.join(&name), |p, n| p.join(n));
                let Ok(real) = std::fs::canonicalize(&lexical) else {
                    continue;
                };
                if real != lexical {
                    add(real.clone(), entry);
                }
                if entry.names == [".git"] && real.is_file() {
                    if let Some(target) = gitfile_target(&real) {
                        add(target, entry);
                    }
                }
            }
            let descend = depth < ALIAS_SCAN_DEPTH
                && !ALIAS_SCAN_SKIP.contains(&lower.as_str())
                && e.file_type().is_ok_and(|t| t.is_dir());
            if descend {
                stack.push((e.path(), depth + 1));
            }
        }
    }
}

/// The directory a `.git` gitfile (`gitdir: PATH`) names, canonical, when
/// it exists.
fn gitfile_target(file: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(file)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    let named = text.strip_prefix("gitdir:")?.trim();
    let dir = file.parent()?.join(named);
    std::fs::canonicalize(dir).ok().filter(|d| d.is_dir())
}

/// The number of normal components of `path`.
fn normal_len(path: &Path) -> usize {
    path.components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count()
}

/// Whether `e`'s names start at component `at` of `names` and the entry
/// covers what follows.
/// Whether a hit of the `.git/` entry at `at` is ordinary repository state
/// (objects, refs, the index…), which is not protected.
fn git_state(e: &ProtectedEntry, names: &[String], at: usize) -> bool {
    e.names == [".git"] && crate::git_dir::is_inert(&names[at + 1..])
}

fn matches_at(e: &ProtectedEntry, names: &[String], at: usize) -> bool {
    let end = at + e.names.len();
    if end > names.len() {
        return false;
    }
    let same = names[at..end]
        .iter()
        .zip(e.names)
        .all(|(have, want)| have == want);
    same && (e.beneath || end == names.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> ProtectedPaths {
        ProtectedPaths::new(
            "/home/u",
            [
                PathBuf::from("/srv/tg-data"),
                PathBuf::from("/opt/cfg/session.toml"),
            ],
        )
    }

    /// A path (as judged, absolute) for each entry of the table, and the
    /// entry it must hit; a test per entry, so none is dead.
    #[test]
    fn every_entry_protects_its_place() {
        let cases: &[(&str, &str)] = &[
            ("/ws/.toolgate/config.toml", ".toolgate/"),
            (
                "/home/u/.config/toolgate/config.toml",
                "~/.config/toolgate/",
            ),
            (
                "/home/u/.local/share/toolgate/trusted-projects.json",
                "~/.local/share/toolgate/",
            ),
            ("/etc/toolgate/config.toml", "/etc/toolgate/"),
            ("/ws/.git/config", ".git/"),
            ("/ws/.envrc", ".envrc"),
            ("/ws/.direnv/python-3/bin/activate", ".direnv/"),
            ("/home/u/.bashrc", "~/.bashrc"),
            ("/home/u/.bash_profile", "~/.bash_profile"),
            ("/home/u/.bash_login", "~/.bash_login"),
            ("/home/u/.bash_logout", "~/.bash_logout"),
            ("/home/u/.profile", "~/.profile"),
            ("/home/u/.zshrc", "~/.zshrc"),
            ("/home/u/.zshenv", "~/.zshenv"),
            ("/home/u/.zprofile", "~/.zprofile"),
            ("/home/u/.zlogin", "~/.zlogin"),
            ("/home/u/.config/fish/config.fish", "~/.config/fish/"),
            ("/home/u/.gitconfig", "~/.gitconfig"),
            ("/home/u/.config/git/config", "~/.config/git/"),
            ("/home/u/.ssh/config", "~/.ssh/config"),
            ("/ws/.claude/settings.json", ".claude/"),
            ("/ws/.codex/config.toml", ".codex/"),
            ("/ws/.gemini/settings.json", ".gemini/"),
            ("/ws/.cursor/rules/x.mdc", ".cursor/"),
            ("/ws/.mcp.json", ".mcp.json"),
            ("/ws/.vscode/settings.json", ".vscode/settings.json"),
            ("/ws/.vscode/tasks.json", ".vscode/tasks.json"),
            ("/ws/.github/workflows/ci.yml", ".github/workflows/"),
            ("/ws/.gitlab-ci.yml", ".gitlab-ci.yml"),
            ("/ws/.github/actions/build/action.yml", ".github/actions/"),
            ("/ws/.circleci/config.yml", ".circleci/"),
            ("/ws/.buildkite/pipeline.yml", ".buildkite/"),
            ("/ws/azure-pipelines.yml", "azure-pipelines.yml"),
            ("/ws/.travis.yml", ".travis.yml"),
            ("/ws/bitbucket-pipelines.yml", "bitbucket-pipelines.yml"),
            ("/ws/Jenkinsfile", "Jenkinsfile"),
            ("/ws/.drone.yml", ".drone.yml"),
            ("/ws/.husky/pre-commit", ".husky/"),
            ("/ws/.pre-commit-config.yaml", ".pre-commit-config.yaml"),
            (
                "/home/u/.config/systemd/user/x.service",
                "~/.config/systemd/user/",
            ),
            (
                "/home/u/.config/autostart/x.desktop",
                "~/.config/autostart/",
            ),
            ("/var/spool/cron/crontabs/u", "/var/spool/cron/"),
            ("/etc/cron.d/x", "/etc/cron.d/"),
            ("/etc/crontab", "/etc/crontab"),
        ];
        let p = paths();
        for entry in PROTECTED {
            assert!(
                cases.iter().any(|(_, e)| e == &entry.display),
                "no test for {}",
                entry.display
            );
        }
        for (path, want) in cases {
            let hit = p.check(Path::new(path));
            assert_eq!(
                hit.as_ref().map(|h| h.entry.as_str()),
                Some(*want),
                "{path}"
            );
            let hit = hit.unwrap();
            assert!(!hit.why.is_empty());
            assert!(!hit.name.is_empty());
        }
    }

    #[test]
    fn directories_cover_themselves_and_what_is_beneath() {
        let p = paths();
        for path in [
            "/ws/.git",
            "/ws/.git/hooks/pre-commit",
            "/ws/vendor/lib/.git/config",
            "/ws/.github/workflows",
            "/home/u/.config/fish",
        ] {
            assert!(p.check(Path::new(path)).is_some(), "{path}");
        }
    }

    #[test]
    fn names_are_compared_case_insensitively() {
        let p = paths();
        for path in [
            "/ws/.GIT/config",
            "/ws/.EnvRC",
            "/home/u/.BASHRC",
            "/ws/.GitHub/Workflows/x.yml",
        ] {
            assert!(p.check(Path::new(path)).is_some(), "{path}");
        }
    }

    #[test]
    fn toolgate_own_places_are_added() {
        let p = paths();
        let hit = p.check(Path::new("/srv/tg-data/state.db")).unwrap();
        assert_eq!((hit.class, hit.name.as_str()), (Toolgate, "tg-data"));
        assert!(p.check(Path::new("/opt/cfg/session.toml")).is_some());
        assert!(p.check(Path::new("/opt/cfg/other.toml")).is_none());
        assert_eq!(
            p.check(Path::new("/ws/.toolgate/config.toml"))
                .unwrap()
                .class,
            Toolgate
        );
    }

    #[test]
    fn benign_look_alikes_are_not_protected() {
        let p = paths();
        for path in [
            "/ws/src/lib.rs",
            "/ws/.gitignore",
            "/ws/.gitattributes",
            "/ws/.github/README.md",
            "/ws/.github/dependabot.yml",
            "/ws/docs/git/config",
            "/ws/.bashrc",
            "/ws/profile",
            "/ws/.envrc.example",
            "/ws/.vscode/extensions.json",
            "/ws/mcp.json",
            "/ws/workflows/ci.yml",
            "/home/u/.bashrc.bak",
            "/home/u/project/.profile",
            "/home/u/.config/nvim/init.lua",
            "/home/u/.ssh/known_hosts",
            "/ws/etc/crontab",
            "/tmp/cron.d/x",
        ] {
            assert_eq!(p.check(Path::new(path)), None, "{path}");
        }
    }

    #[test]
    fn relative_paths_only_meet_entries_anchored_anywhere() {
        let p = paths();
        assert!(p.check(Path::new(".git/config")).is_some());
        assert!(p.check(Path::new("a/.envrc")).is_some());
        assert!(p.check(Path::new(".bashrc")).is_none());
        assert!(p.check(Path::new("etc/crontab")).is_none());
    }
}
