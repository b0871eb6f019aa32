//! What a staged change writes without naming it. Three kinds of change
//! land as ordinary writes by path but make a later write go elsewhere:
//!
//! - a symbolic link: whoever writes through it later (git appending to a
//!   reflog, `git commit` writing `COMMIT_EDITMSG`, an editor, a build)
//!   writes its target, so the target is judged as a write too;
//! - git's index: the content it stages for a path is what the person's next
//!   `git commit` records (and `git checkout`, `git stash` write back), so a
//!   protected path whose staged content or flags change is judged as a
//!   write of that path;
//! - git's refs (`HEAD`, `refs/`, `packed-refs`, and the pseudo-refs such as
//!   `ORIG_HEAD` a person resets to): the commits they now point at carry
//!   their trees to `git push` (and CI) and to the next checkout,
//!   so a protected path whose content a new commit brings is judged as a
//!   write of that path.
//!
//! And a directory that git will take for a repository without its being
//! named `.git` (a `HEAD`, `objects/` and `refs/` in it, and a `config`
//! that may set `core.worktree` and `core.fsmonitor`) is judged as a `.git`
//! directory: every change inside it is a write of git's internals.
//!
//! Git's own state is read with the git program (plumbing only: `ls-files`,
//! `ls-tree`, `log --raw`), with no system or global configuration, no
//! replace refs, no fsmonitor, and the objects the command wrote reached
//! through an alternate. Whatever cannot be read is judged as a write of the
//! git directory itself (protected): unknown content never lands unasked.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

use toolgate_core::protected::ProtectedPaths;
use toolgate_sandbox::{Change, ChangeKind, Staging};

/// A staged `packed-refs` or ref file larger than this is not read: what
/// the refs reach is then unknown, as for one that cannot be read.
const MAX_REFS_BYTES: u64 = 64 << 20;

/// How long one git run on what a command staged may take. The command
/// made those files: a FIFO where git expects its index, a loose object or a
/// pack would otherwise hold git, and the landing, for ever.
const GIT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// Runs `cmd` with its stdout piped, killing it past `deadline`: its output
/// when it ended in time, `None` otherwise (or when it could not start).
fn output_within(mut cmd: Command, deadline: std::time::Duration) -> Option<std::process::Output> {
    use std::io::Read;
    let mut child = cmd.stdout(Stdio::piped()).spawn().ok()?;
    let mut stdout = child.stdout.take()?;
    // Read aside, so that a large output never fills the pipe meanwhile.
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stdout.read_to_end(&mut bytes).map(|_| bytes)
    });
    let until = std::time::Instant::now() + deadline;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                tracing::warn!("git took longer than {deadline:?} on a staged change; stopped");
                return None;
            }
        }
    };
    let stdout = reader.join().ok()?.ok()?;
    Some(std::process::Output {
        status,
        stdout,
        stderr: Vec::new(),
    })
}

/// At most this many new commits are read for one git directory; more are
/// judged as unknown content.
const MAX_COMMITS: usize = 2_000;

/// Finds, for each staged change, the paths it writes without naming them.
pub(crate) struct Carried<'a> {
    staging: &'a Staging,
    facts: &'a ProtectedPaths,
    home: &'a Path,
    roots: &'a [PathBuf],
    /// Per git directory, what its changed refs carry (computed once).
    refs: HashMap<PathBuf, Vec<PathBuf>>,
    /// Per directory, whether it is a git directory after the command.
    repos: HashMap<PathBuf, bool>,
}

impl<'a> Carried<'a> {
    pub(crate) fn new(
        staging: &'a Staging,
        facts: &'a ProtectedPaths,
        home: &'a Path,
        roots: &'a [PathBuf],
    ) -> Self {
        Carried {
            staging,
            facts,
            home,
            roots,
            refs: HashMap::new(),
            repos: HashMap::new(),
        }
    }

    /// The directory above `path` (inside the location, not named `.git`)
    /// that git takes for a repository once the command's changes land:
    /// one holding a `HEAD` file, a `refs/` directory and an `objects/`
    /// directory or a `commondir` file.
    /// Git finds it as it finds `.git` (a bare repository, or one with
    /// `core.worktree` set), so its `config` runs `core.fsmonitor` at the
    /// next `git status` there, and its `hooks/` run: it is judged as a
    /// `.git` directory is.
    fn embedded_repo(&mut self, path: &Path) -> Option<PathBuf> {
        let root = self.roots.iter().find(|r| path.starts_with(r))?.clone();
        let rel = path.strip_prefix(&root).ok()?;
        if rel
            .components()
            .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
        {
            return None;
        }
        let mut dir = path.to_path_buf();
        while dir.pop() && dir.starts_with(&root) {
            if let Some(&known) = self.repos.get(&dir) {
                if known {
                    return Some(dir);
                }
                continue;
            }
            let here = |name: &str, want_dir: bool| {
                let real = dir.join(name);
                let staged = self.staging.staged_path(&real);
                [Some(real), staged].into_iter().flatten().any(|p| {
                    std::fs::symlink_metadata(&p)
                        .is_ok_and(|m| if want_dir { m.is_dir() } else { m.is_file() })
                })
            };
            // Git's own test (setup.c `is_git_directory`): `HEAD`, `refs/`,
            // and `objects/` or a `commondir` naming another one's.
            let repo = here("HEAD", false)
                && here("refs", true)
                && (here("objects", true) || here("commondir", false));
            self.repos.insert(dir.clone(), repo);
            if repo {
                return Some(dir);
            }
        }
        None
    }

    /// The paths `change` (one of `all`) writes besides its own.
    pub(crate) fn of(&mut self, change: &Change, all: &[Change]) -> Vec<PathBuf> {
        if let Some(repo) = self.embedded_repo(&change.path) {
            return vec![repo.join(".git")];
        }
        if change.kind == ChangeKind::Deleted || change.dir {
            return Vec::new();
        }
        let Some(staged) = self.staging.staged_path(&change.path) else {
            return Vec::new();
        };
        let git = git_dir_of(&change.path);
        if let Ok(target) = std::fs::read_link(&staged) {
            return self.link_target(&change.path, &target, git.is_some());
        }
        let Some((git_dir, rest)) = git else {
            return Vec::new();
        };
        let rest = rest.to_ascii_lowercase();
        if rest == "index" {
            return self.index(&git_dir, &staged);
        }
        if is_ref_file(&rest) {
            if let Some(found) = self.refs.get(&git_dir) {
                return found.clone();
            }
            let found = self.refs_of(&git_dir, all);
            self.refs.insert(git_dir, found.clone());
            return found;
        }
        Vec::new()
    }

    /// A link's target, judged as a write unless it is a file outside the
    /// location that nothing protects (a virtualenv's interpreter). A link
    /// inside a git directory is always judged by its target: git writes
    /// through the links of its state.
    fn link_target(&self, link: &Path, target: &Path, in_git_dir: bool) -> Vec<PathBuf> {
        let Some(parent) = link.parent() else {
            return Vec::new();
        };
        let target = resolve(&parent.join(target));
        let inside = self.roots.iter().any(|r| target.starts_with(r));
        if !inside && !in_git_dir {
            let plain_file = std::fs::metadata(&target).is_ok_and(|m| m.is_file());
            if plain_file && !self.protected(&target) {
                return Vec::new();
            }
        }
        vec![target]
    }

    fn protected(&self, path: &Path) -> bool {
        self.facts.check(path).is_some()
            || toolgate_core::credential::is_credential(path, self.home).is_some()
    }

    /// The protected paths whose staged content or flags the new index
    /// (`staged`) changes from the old one and from the old `HEAD`.
    fn index(&self, git_dir: &Path, staged: &Path) -> Vec<PathBuf> {
        let unknown = || vec![git_dir.to_path_buf()];
        let git = Git::new(git_dir, self.staging);
        let (Some(old), Some(new)) = (
            git.index_entries(&git_dir.join("index")),
            git.index_entries(staged),
        ) else {
            return unknown();
        };
        let Some(head) = git.head_tree() else {
            return unknown();
        };
        let work = work_tree(git_dir);
        let mut out = Vec::new();
        for (path, entry) in &new {
            if old.get(path) == Some(entry) {
                continue;
            }
            let abs = work.join(path);
            if !self.protected(&abs) {
                continue;
            }
            let hidden = entry.tag != "H";
            let known = head.contains(&(path.clone(), entry.mode.clone(), entry.oid.clone()))
                || old
                    .get(path)
                    .is_some_and(|o| o.mode == entry.mode && o.oid == entry.oid);
            if hidden || !known {
                out.push(abs);
            }
        }
        out
    }

    /// The protected paths whose content the commits the changed refs of
    /// `git_dir` now reach, and no ref reached before, bring.
    fn refs_of(&self, git_dir: &Path, all: &[Change]) -> Vec<PathBuf> {
        let unknown = || vec![git_dir.to_path_buf()];
        let mut tips: Vec<String> = Vec::new();
        for c in all {
            let Some((g, rest)) = git_dir_of(&c.path) else {
                continue;
            };
            if g != git_dir || c.dir || c.kind == ChangeKind::Deleted {
                continue;
            }
            let rest = rest.to_ascii_lowercase();
            let Some(staged) = self.staging.staged_path(&c.path) else {
                continue;
            };
            // The command wrote these: never wait on one that is a FIFO.
            let read = || toolgate_core::small_file::read_text(&staged, MAX_REFS_BYTES);
            if rest == "packed-refs" {
                let Ok(text) = read() else {
                    return unknown();
                };
                tips.extend(
                    text.lines()
                        .filter(|l| !l.starts_with('#') && !l.starts_with('^'))
                        .filter_map(|l| l.split_whitespace().next())
                        .filter(|o| is_oid(o))
                        .map(str::to_string),
                );
            } else if is_ref_file(&rest) {
                let Ok(text) = read() else {
                    return unknown();
                };
                let text = text.trim();
                if text.starts_with("ref: ") {
                    continue;
                }
                // One object id, or FETCH_HEAD's lines that start with one.
                let oids: Vec<&str> = text
                    .lines()
                    .filter_map(|l| l.split_whitespace().next())
                    .filter(|o| is_oid(o))
                    .collect();
                if oids.is_empty() && !text.is_empty() {
                    return unknown();
                }
                tips.extend(oids.into_iter().map(str::to_string));
            }
        }
        if tips.is_empty() {
            return Vec::new();
        }
        let git = Git::new(git_dir, self.staging);
        let Some(head) = git.head_tree() else {
            return unknown();
        };
        let Some(index) = git.index_entries(&git_dir.join("index")) else {
            return unknown();
        };
        // Every commit the new tips reach that no old ref reaches, each
        // against each parent (`-m`), as raw entries.
        let mut args: Vec<String> = [
            "log",
            "-m",
            "--raw",
            "--no-abbrev",
            "--no-renames",
            "--root",
            "--format=%x01",
            "-z",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.push(format!("--max-count={}", MAX_COMMITS + 1));
        args.extend(tips);
        args.push("--not".into());
        args.push("--all".into());
        let Some(out) = git.run(&args, &[]) else {
            return unknown();
        };
        let commits = out.iter().filter(|&&b| b == 1).count();
        if commits > MAX_COMMITS {
            return unknown();
        }
        let work = work_tree(git_dir);
        let mut found = BTreeMap::new();
        for (mode, oid, path) in raw_entries(&out) {
            let abs = work.join(&path);
            if found.contains_key(&abs) || !self.protected(&abs) {
                continue;
            }
            let known = head.contains(&(path.clone(), mode.clone(), oid.clone()))
                || index
                    .get(&path)
                    .is_some_and(|e| e.mode == mode && e.oid == oid);
            if !known {
                found.insert(abs, ());
            }
        }
        found.into_keys().collect()
    }
}

/// One index entry as `git ls-files -s -t -v` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// `H` (cached), `S` (skip-worktree), lower case (assume unchanged), …
    tag: String,
    mode: String,
    oid: String,
}

/// Git run on the real git directory, with the command's new objects
/// reachable, and nothing but plumbing.
struct Git<'a> {
    git_dir: &'a Path,
    /// The staged (upper) object directory, if the command wrote objects.
    staged_objects: Option<PathBuf>,
}

impl<'a> Git<'a> {
    fn new(git_dir: &'a Path, staging: &Staging) -> Self {
        let staged_objects = staging
            .staged_path(&git_dir.join("objects"))
            .filter(|p| p.is_dir());
        Git {
            git_dir,
            staged_objects,
        }
    }

    /// Runs git with `args` (and `env`); its stdout when it succeeded.
    fn run(&self, args: &[String], env: &[(&str, &Path)]) -> Option<Vec<u8>> {
        let mut cmd = Command::new("git");
        let work = work_tree(self.git_dir);
        cmd.env_clear()
            .current_dir(&work)
            .env("GIT_WORK_TREE", &work);
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        cmd.env("GIT_DIR", self.git_dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("HOME", "/nonexistent");
        let real_objects = self.git_dir.join("objects");
        if let Some(staged) = &self.staged_objects {
            cmd.env("GIT_OBJECT_DIRECTORY", staged)
                .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &real_objects);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.untrackedCache=false",
        ])
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
        let out = output_within(cmd, GIT_DEADLINE)?;
        if !out.status.success() {
            tracing::debug!(
                ?args,
                "git failed while reading what a staged change carries"
            );
            return None;
        }
        Some(out.stdout)
    }

    /// The entries of the index file `index`, by path (stage 0 and
    /// conflict stages alike: the last one read wins).
    fn index_entries(&self, index: &Path) -> Option<HashMap<String, Entry>> {
        match std::fs::symlink_metadata(index) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(HashMap::new()),
            // A FIFO or anything else the command made there: unknown.
            Ok(m) if m.is_file() => {}
            _ => return None,
        }
        let args: Vec<String> = ["ls-files", "-s", "-t", "-v", "-z"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let out = self.run(&args, &[("GIT_INDEX_FILE", index)])?;
        let mut map = HashMap::new();
        for rec in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let rec = String::from_utf8_lossy(rec);
            // "H 100644 <oid> 0\t<path>"
            let (meta, path) = rec.split_once('\t')?;
            let mut parts = meta.split(' ');
            let (tag, mode, oid) = (parts.next()?, parts.next()?, parts.next()?);
            map.insert(
                path.to_string(),
                Entry {
                    tag: tag.to_string(),
                    mode: mode.to_string(),
                    oid: oid.to_string(),
                },
            );
        }
        Some(map)
    }

    /// `(path, mode, oid)` of every file in the old `HEAD` commit (empty
    /// when there is none yet).
    fn head_tree(&self) -> Option<HashSet<(String, String, String)>> {
        let head: Vec<String> = ["rev-parse", "--verify", "-q", "HEAD^{tree}"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        // Read HEAD without the command's objects: the old one.
        let old = Git {
            git_dir: self.git_dir,
            staged_objects: None,
        };
        let Some(tree) = old.run(&head, &[]) else {
            return Some(HashSet::new());
        };
        let tree = String::from_utf8_lossy(&tree).trim().to_string();
        let args: Vec<String> = ["ls-tree", "-r", "-z", "--full-tree", tree.as_str()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let out = old.run(&args, &[])?;
        let mut set = HashSet::new();
        for rec in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let rec = String::from_utf8_lossy(rec);
            // "100644 blob <oid>\t<path>"
            let (meta, path) = rec.split_once('\t')?;
            let mut parts = meta.split(' ');
            let (mode, _kind, oid) = (parts.next()?, parts.next()?, parts.next()?);
            set.insert((path.to_string(), mode.to_string(), oid.to_string()));
        }
        Some(set)
    }
}

/// The `(new mode, new oid, path)` of every added, modified or type-changed
/// entry in `git log --raw -z` output (records separated by NUL; commits
/// start with the `\x01` format line).
fn raw_entries(out: &[u8]) -> Vec<(String, String, String)> {
    let mut entries = Vec::new();
    let mut fields = out.split(|&b| b == 0).peekable();
    while let Some(field) = fields.next() {
        let field = String::from_utf8_lossy(field);
        let field = field.trim_start_matches(['\x01', '\n']);
        let Some(meta) = field.strip_prefix(':') else {
            continue;
        };
        // ":oldmode newmode oldoid newoid status"
        let parts: Vec<&str> = meta.split(' ').collect();
        let Some(path) = fields.next() else {
            break;
        };
        if parts.len() < 5 {
            continue;
        }
        let status = parts[4];
        if status.starts_with('D') {
            continue;
        }
        entries.push((
            parts[1].to_string(),
            parts[3].to_string(),
            String::from_utf8_lossy(path).to_string(),
        ));
    }
    entries
}

/// Whether `rest` (below a git directory, in lower case) holds refs: `HEAD`
/// and the pseudo-refs a person checks out or merges (`ORIG_HEAD` after a
/// rebase or reset, `FETCH_HEAD`, `MERGE_HEAD`…), `packed-refs` and what
/// is below `refs/`.
fn is_ref_file(rest: &str) -> bool {
    rest == "head"
        || rest == "packed-refs"
        || rest.starts_with("refs/")
        || (!rest.contains('/') && rest.ends_with("_head"))
}

fn is_oid(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The git directory a path lies in (a component named `.git`, in any case,
/// that is a directory) and the rest of the path below it.
fn git_dir_of(path: &Path) -> Option<(PathBuf, String)> {
    let mut dir = PathBuf::new();
    let mut comps = path.components();
    while let Some(c) = comps.next() {
        dir.push(c);
        if let Component::Normal(name) = c {
            if name.eq_ignore_ascii_case(".git") && dir.is_dir() {
                let rest: Vec<String> = comps
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if rest.is_empty() {
                    return None;
                }
                return Some((dir, rest.join("/")));
            }
        }
    }
    None
}

/// The work tree of a `.git` directory: its parent.
fn work_tree(git_dir: &Path) -> PathBuf {
    git_dir.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// `path` with `.` and `..` folded and its existing part's links followed.
fn resolve(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let out = toolgate_core::path_text::lexical(path);
    // The deepest existing ancestor, with its links followed.
    let mut base = out.clone();
    let mut tail = Vec::new();
    while !base.exists() {
        match (base.file_name().map(|n| n.to_os_string()), base.parent()) {
            (Some(name), Some(parent)) => {
                tail.push(name);
                base = parent.to_path_buf();
            }
            _ => return out,
        }
    }
    let mut real = std::fs::canonicalize(&base).unwrap_or(base);
    for name in tail.into_iter().rev() {
        real.push(name);
    }
    real
}

#[cfg(test)]
mod tests {
    use super::{git_dir_of, output_within, raw_entries, resolve};
    use std::path::Path;

    #[test]
    fn raw_log_entries_are_read_added_and_modified_not_deleted() {
        let out = b"\x01\n\0:000000 100644 0000 aaaa A\0.envrc\0:100644 100644 bbbb cccc M\0src/a.rs\0:100644 000000 dddd 0000 D\0gone\0";
        let e = raw_entries(out);
        assert_eq!(
            e,
            vec![
                ("100644".into(), "aaaa".into(), ".envrc".into()),
                ("100644".into(), "cccc".into(), "src/a.rs".into()),
            ]
        );
    }

    #[test]
    fn a_path_below_a_git_directory_is_found_in_any_case() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".GIT/logs")).unwrap();
        let (g, rest) = git_dir_of(&d.path().join(".GIT/logs/HEAD")).unwrap();
        assert_eq!(g, d.path().join(".GIT"));
        assert_eq!(rest, "logs/HEAD");
        assert!(git_dir_of(&d.path().join("src/a.rs")).is_none());
    }

    /// A process past its deadline is stopped and gives nothing; one in
    /// time gives all its output, however large.
    #[test]
    fn a_git_run_past_its_deadline_is_stopped() {
        let mut slow = std::process::Command::new("sleep");
        slow.arg("30");
        let started = std::time::Instant::now();
        assert!(output_within(slow, std::time::Duration::from_millis(200)).is_none());
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        let mut big = std::process::Command::new("head");
        big.args(["-c", "1000000", "/dev/zero"]);
        let out = output_within(big, std::time::Duration::from_secs(20)).unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout.len(), 1_000_000);
    }

    #[test]
    fn a_relative_target_is_folded() {
        let p = resolve(Path::new("/nonexistent-x/a/b/../../c"));
        assert_eq!(p, Path::new("/nonexistent-x/c"));
    }
}
