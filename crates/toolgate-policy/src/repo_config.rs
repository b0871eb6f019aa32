//! Which git configuration a git command will use, and whether it can make a
//! read command (`git status`, `git log`, `git diff`…) run a program.
//!
//! [`inspect`] finds the repository the way git does — `-C`, `--git-dir`,
//! `GIT_DIR`, walking up from the effective directory to a `.git` directory or
//! `gitdir:` file, `commondir`, linked worktrees — and lists every config file
//! that applies or may apply: system, global, the repository's `config` and
//! `config.worktree`, submodules' configs (which `git status` reads when it
//! recurses), and the targets of `include.path` and `includeIf.*.path`
//! (conditional ones are treated as applying). Files are read with an exact
//! parser of git's syntax ([`git_config_syntax`]); nothing runs `git`.
//!
//! A key found in a configuration the repository or the command line controls
//! is judged against an allowlist of keys known to run nothing ([`keys`]):
//! any other key is a [`Finding`], with the key and `file:line`. The user's
//! own system and global files (outside the location, not named by the
//! command line) are listed but trusted. An unreadable or unparseable file,
//! an include too deep, or a value known only at run time is a finding too:
//! fail closed.
//!
//! Files are cached process-wide by device, inode, size, mtime and ctime, so
//! a decision re-reads nothing that did not change.
//!
//! [`tools`] holds the same question for other programs that load executable
//! settings from the working tree (rustup, cargo, npm, yarn, go, …).
//!
//! ```
//! use std::path::Path;
//! use toolgate_core::Location;
//! use toolgate_policy::repo_config::{GitInvocation, ProcessEnv, inspect};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let git = dir.path().join(".git");
//! std::fs::create_dir_all(git.join("objects")).unwrap();
//! std::fs::create_dir_all(git.join("refs")).unwrap();
//! std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
//! std::fs::write(git.join("config"), "[core]\n\tfsmonitor = \"touch /tmp/m\"\n").unwrap();
//! let location = Location::new(dir.path()).unwrap();
//! let inv = GitInvocation {
//!     process_env: ProcessEnv::fixed([("HOME", "/nonexistent")]),
//!     ..GitInvocation::new(location.root(), Path::new("/nonexistent"))
//! };
//! let report = inspect(&inv, &location);
//! let why = report.may_run_program().unwrap();
//! assert!(why.contains("core.fsmonitor") && why.ends_with("config:2"), "{why}");
//! ```

pub mod git_config_syntax;
pub mod keys;
pub mod tools;

#[cfg(test)]
pub(crate) use crate::stamp::wait_until_settled;
pub(crate) use crate::stamp::{Stamp, StampCache};

use foldhash::HashMap;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use toolgate_core::Location;
use toolgate_core::path_text;

use self::git_config_syntax::Entry;

/// Config files larger than this are not read (fail closed).
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// A git directory's one-line files (`commondir`, a `.git` gitfile) larger
/// than this are not read.
const SMALL_GIT_FILE: u64 = 4096;
/// git's own limit on nested includes.
pub const MAX_INCLUDE_DEPTH: usize = 10;
/// At most this many config files are considered for one command.
pub const MAX_FILES: usize = 64;
/// Entries kept in the process-wide cache of parsed files.
pub const CACHE_ENTRIES: usize = 512;

/// Where the variables a git command sees come from, besides the
/// assignments on its command line.
#[derive(Debug, Clone, Default)]
pub enum ProcessEnv {
    /// This process's environment, as it was when first read.
    #[default]
    Real,
    /// A fixed set, for tests and for callers that know the command's env.
    Fixed(HashMap<String, String>),
}

impl ProcessEnv {
    /// A fixed environment from pairs.
    pub fn fixed<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        ProcessEnv::Fixed(
            pairs
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn get(&self, name: &str) -> Option<String> {
        match self {
            ProcessEnv::Real => real_env().get(name).cloned(),
            ProcessEnv::Fixed(m) => m.get(name).cloned(),
        }
    }
}

/// The variables of this process that git reads (`GIT_*`, `HOME`,
/// `XDG_CONFIG_HOME`), taken once: a decision asks for about a dozen, and
/// each `getenv` scans the whole environment under a lock. toolgate never
/// changes its own environment after start; an embedder that does should
/// pass [`ProcessEnv::Fixed`].
fn real_env() -> &'static HashMap<String, String> {
    static ENV: OnceLock<HashMap<String, String>> = OnceLock::new();
    ENV.get_or_init(|| {
        std::env::vars_os()
            .filter_map(|(k, v)| {
                let k = k.into_string().ok()?;
                (k.starts_with("GIT_") || k == "HOME" || k == "XDG_CONFIG_HOME")
                    .then(|| (k, lossy(&v)))
            })
            .collect()
    })
}

fn lossy(v: &OsString) -> String {
    v.to_string_lossy().into_owned()
}

/// One git command as the analyser saw it.
#[derive(Debug, Clone)]
pub struct GitInvocation {
    /// The effective directory of the command (absolute and canonical, as
    /// the shell analysis resolves it; after `cd`, `env -C`… but before
    /// git's own `-C`).
    pub cwd: PathBuf,
    /// The words between `git` and the subcommand: `-C DIR`, `--git-dir=…`,
    /// `-c key=value`, `--config-env=…`, ….
    pub global_args: Vec<String>,
    /// `NAME=value` assignments of the command line (including `env NAME=…`
    /// and exports earlier in the same command), in order; `None` when the
    /// value is known only at run time.
    pub assignments: Vec<(String, Option<String>)>,
    /// The user's home directory.
    pub home: PathBuf,
    /// The rest of the environment.
    pub process_env: ProcessEnv,
}

impl GitInvocation {
    /// `git` with no options or assignments, run in `cwd`.
    pub fn new(cwd: &Path, home: &Path) -> Self {
        GitInvocation {
            cwd: cwd.to_path_buf(),
            global_args: Vec::new(),
            assignments: Vec::new(),
            home: home.to_path_buf(),
            process_env: ProcessEnv::Real,
        }
    }

    /// Whether [`inspect`] reads the same configuration for `other` as for
    /// this invocation: the same directory, options, assignments, home and
    /// environment (a fixed environment is never taken as the same).
    pub fn same_survey(&self, other: &GitInvocation) -> bool {
        matches!(
            (&self.process_env, &other.process_env),
            (ProcessEnv::Real, ProcessEnv::Real)
        ) && self.cwd == other.cwd
            && self.global_args == other.global_args
            && self.assignments == other.assignments
            && self.home == other.home
    }
}

/// Where a config file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `/etc/gitconfig` or `GIT_CONFIG_SYSTEM`.
    System,
    /// `~/.gitconfig`, `$XDG_CONFIG_HOME/git/config` or `GIT_CONFIG_GLOBAL`.
    Global,
    /// The repository's `config` (in the common directory).
    Local,
    /// The worktree's `config.worktree`.
    Worktree,
    /// A submodule's `config`, read when git recurses into it.
    Submodule,
    /// The target of `include.path` / `includeIf.*.path`.
    Include,
}

/// One config file that applies or may apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// The path as git would open it (canonical when it exists).
    pub path: PathBuf,
    /// Where it comes from.
    pub scope: Scope,
    /// The user's own file: system or global, outside the location and not
    /// named by the command line (nor included from a file that is not).
    /// Its keys are not judged.
    pub trusted: bool,
    /// Applies only under a condition (`includeIf`), taken as applying.
    pub conditional: bool,
    /// Whether the file exists (a missing one is skipped, as git does).
    pub exists: bool,
}

/// Something in the effective configuration that may run a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The config key or variable (`core.fsmonitor`, `GIT_PAGER`, …).
    pub key: String,
    /// Where it was set: `file:line`, `-c`, `--config-env`, `GIT_CONFIG_KEY_0`,
    /// `GIT_CONFIG_PARAMETERS`, or the variable name.
    pub origin: String,
    /// Why it matters.
    pub why: String,
}

impl Finding {
    fn new(key: impl Into<String>, origin: impl Into<String>, why: impl Into<String>) -> Self {
        Finding {
            key: key.into(),
            origin: origin.into(),
            why: why.into(),
        }
    }
}

/// What [`inspect`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepoConfig {
    /// The directory git starts in, after `-C` (`None` when unknown).
    pub start_dir: Option<PathBuf>,
    /// The repository (`.git` directory, or the bare repository).
    pub git_dir: Option<PathBuf>,
    /// The common directory (differs from `git_dir` in a linked worktree).
    pub common_dir: Option<PathBuf>,
    /// The work tree, when known.
    pub work_tree: Option<PathBuf>,
    /// Every config file that applies or may apply, in git's reading order.
    pub files: Vec<ConfigFile>,
    /// Keys and variables that may run a program; empty means none.
    pub findings: Vec<Finding>,
    /// Directories outside the location the command reads (repository, work
    /// tree, start directory, untrusted config files): the caller adds an
    /// `external_directory` request for each.
    pub outside: Vec<PathBuf>,
    /// `GIT_INDEX_FILE` is set (by the command line or the environment): git
    /// uses another index than the repository's own.
    pub index_file_set: bool,
}

impl RepoConfig {
    /// `Some(reason)` when the effective configuration may run a program:
    /// the first finding as "KEY (WHY) at ORIGIN", plus how many more.
    pub fn may_run_program(&self) -> Option<String> {
        let first = self.findings.first()?;
        let more = self.findings.len() - 1;
        let tail = if more > 0 {
            format!(" (and {more} more)")
        } else {
            String::new()
        };
        Some(format!(
            "git configuration may run a program: {} ({}) at {}{tail}",
            first.key, first.why, first.origin
        ))
    }
}

/// The environment of the command: the command line's assignments over the
/// process's.
struct Env<'a> {
    inv: &'a GitInvocation,
}

/// A variable's value and whether the command line set it.
enum Var {
    Unset,
    Process(String),
    Command(Option<String>),
}

impl Env<'_> {
    fn var(&self, name: &str) -> Var {
        if let Some((_, v)) = self.inv.assignments.iter().rev().find(|(n, _)| n == name) {
            return Var::Command(v.clone());
        }
        match self.inv.process_env.get(name) {
            Some(v) => Var::Process(v),
            None => Var::Unset,
        }
    }
}

/// Options of `git` itself that [`inspect`] follows.
#[derive(Default)]
struct Globals {
    chdirs: Vec<String>,
    git_dir: Option<String>,
    work_tree: Option<String>,
    bare: bool,
    /// `-c` pairs and `--config-env` pairs (value via an env variable).
    params: Vec<(String, Option<String>, &'static str)>,
}

fn parse_globals(args: &[String], env: &Env<'_>, findings: &mut Vec<Finding>) -> Globals {
    let mut g = Globals::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let take = |i: &mut usize| -> Option<String> {
            *i += 1;
            args.get(*i).cloned()
        };
        let (name, attached) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a, None),
        };
        match name {
            "-C" => match take(&mut i) {
                Some(d) => g.chdirs.push(d),
                None => findings.push(Finding::new("-C", "-C", "-C without a directory")),
            },
            "--git-dir" | "--work-tree" | "--namespace" | "--attr-source" | "--exec-path"
            | "--list-cmds" | "--config-env" => {
                let v = attached.or_else(|| {
                    if name == "--exec-path" {
                        None
                    } else {
                        take(&mut i)
                    }
                });
                match (name, v) {
                    ("--git-dir", Some(v)) => g.git_dir = Some(v),
                    ("--work-tree", Some(v)) => g.work_tree = Some(v),
                    ("--exec-path", Some(_)) => findings.push(Finding::new(
                        "--exec-path",
                        "--exec-path",
                        "git runs its subcommands from this directory",
                    )),
                    ("--config-env", Some(v)) => match v.split_once('=') {
                        Some((k, var)) => {
                            let value = match env.var(var) {
                                Var::Unset => None,
                                Var::Process(v) => Some(v),
                                Var::Command(v) => v,
                            };
                            g.params.push((k.to_string(), value, "--config-env"));
                        }
                        None => findings.push(Finding::new(
                            v,
                            "--config-env",
                            "--config-env without =ENVVAR",
                        )),
                    },
                    (_, None) if name != "--exec-path" => {
                        findings.push(Finding::new(name, name, "option without its value"))
                    }
                    _ => {}
                }
            }
            "-c" => match take(&mut i) {
                Some(kv) => {
                    let (k, v) = match kv.split_once('=') {
                        Some((k, v)) => (k.to_string(), Some(v.to_string())),
                        None => (kv, None),
                    };
                    g.params.push((k, v, "-c"));
                }
                None => findings.push(Finding::new("-c", "-c", "-c without key=value")),
            },
            "--bare" => g.bare = true,
            "-p"
            | "--paginate"
            | "-P"
            | "--no-pager"
            | "--no-replace-objects"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-optional-locks"
            | "--no-lazy-fetch"
            | "--no-advice"
            | "--html-path"
            | "--man-path"
            | "--info-path"
            | "-v"
            | "--version"
            | "-h"
            | "--help" => {}
            _ => findings.push(Finding::new(
                a,
                a,
                "not a global option of git known to this analysis",
            )),
        }
        i += 1;
    }
    g
}

/// `path` made absolute against `base`, with `.` and `..` folded lexically
/// (as git does for `-C`, `GIT_DIR` and `gitdir:` paths).
fn join(base: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        crate::shell::lexical(p)
    } else {
        crate::shell::lexical(&base.join(p))
    }
}

fn tilde(path: &str, home: &Path) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None if path == "~" => home.to_path_buf(),
        None => PathBuf::from(path),
    }
}

/// What a directory's `HEAD` entry is, for git's `validate_headref`.
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
enum Head {
    /// No entry of that name.
    Missing,
    /// Something that is no valid HEAD (also: unreadable).
    Invalid,
    /// A symlink into `refs/`, a `ref: refs/…` file or an object id.
    Valid,
}

/// git's `validate_headref` on the entry at `head`.
fn head_at(head: &Path) -> Head {
    // Opened without following a symlink (and without blocking on a FIFO):
    // one `open` answers "missing", "a symlink" and "a file" at once. A
    // directory or anything else reads as no bytes: not a valid HEAD.
    let mut buf = [0u8; 256];
    let n = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(head)
    {
        Ok(mut f) => f.read(&mut buf).unwrap_or(0),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            let into_refs = std::fs::read_link(head).is_ok_and(|t| t.starts_with("refs/"));
            return if into_refs {
                Head::Valid
            } else {
                Head::Invalid
            };
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Head::Missing,
        Err(_) => return Head::Invalid,
    };
    let text = &buf[..n];
    let valid = if let Some(rest) = text.strip_prefix(b"ref:") {
        rest.trim_ascii_start().starts_with(b"refs/")
    } else {
        let hex = text.iter().take_while(|b| b.is_ascii_hexdigit()).count();
        hex == 40 || hex == 64
    };
    if valid { Head::Valid } else { Head::Invalid }
}

/// git's `is_git_directory`: HEAD, and `objects/` and `refs/` in the common
/// directory. `Some` for a git directory, holding what its `commondir` file
/// says (read once here, resolved by the caller with [`common_dir_of`]).
fn is_git_directory(dir: &Path) -> Option<CommonDir> {
    // HEAD first: most directories have none, and it costs one open.
    if head_at(&dir.join("HEAD")) != Head::Valid {
        return None;
    }
    git_directory_with_head(dir)
}

/// [`is_git_directory`] for a directory whose HEAD is known to be valid.
fn git_directory_with_head(dir: &Path) -> Option<CommonDir> {
    let text = commondir_text(dir);
    let common = common_dir_of(dir, &text).unwrap_or_else(|| dir.to_path_buf());
    (common.join("objects").is_dir() && common.join("refs").is_dir()).then_some(text)
}

/// The text of a git directory's `commondir` file, when it has one.
type CommonDir = Option<String>;

fn commondir_text(dir: &Path) -> CommonDir {
    let text = toolgate_core::small_file::read_text(&dir.join("commondir"), SMALL_GIT_FILE).ok()?;
    let t = text.trim_end_matches(['\n', '\r']);
    (!t.is_empty()).then(|| t.to_string())
}

/// The common directory a `commondir` text names, resolved against `dir`.
fn common_dir_of(dir: &Path, text: &CommonDir) -> Option<PathBuf> {
    text.as_deref().map(|t| join(dir, t))
}

/// A `gitdir: PATH` file: the directory it names.
fn read_gitfile(file: &Path) -> Result<PathBuf, String> {
    let text =
        toolgate_core::small_file::read_text(file, SMALL_GIT_FILE).map_err(|e| e.to_string())?;
    let Some(rest) = text.strip_prefix("gitdir: ") else {
        return Err("not a gitfile".into());
    };
    let rest = rest.trim_end();
    let base = file.parent().unwrap_or(Path::new("/"));
    Ok(join(base, rest))
}

/// What discovery found.
struct Repo {
    git_dir: PathBuf,
    work_tree: Option<PathBuf>,
    /// `git_dir` is known to be canonical already.
    canonical: bool,
    /// Its `commondir` text, when discovery read it already.
    commondir: Option<CommonDir>,
}

/// git's discovery from `start`, walking up. It does not stop at
/// `GIT_CEILING_DIRECTORIES` or file-system boundaries: looking further only
/// finds more configuration to judge.
///
/// A directory found to hold neither `.git` nor `HEAD` is remembered by its
/// [`Stamp`]; while `stat` gives the same stamp, its entries are the same,
/// and one `stat` replaces the two probes. Most directories above a
/// repository's work tree, and every one above a location that is no
/// repository, are such.
fn discover(start: &Path, stamps: &dyn DirStamps, findings: &mut Vec<Finding>) -> Option<Repo> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        dir = path_text::parent(d);
        // Taken before the probes: an entry created after them changes it.
        let stamp = stamps.dir_stamp(d);
        if stamp.is_some_and(|s| NO_REPOSITORY.get_at(d, s).is_some()) {
            continue;
        }
        let dotgit = d.join(".git");
        // lstat: a `.git` that is no symlink below a canonical directory is
        // canonical itself.
        let link = std::fs::symlink_metadata(&dotgit);
        // Only a `.git` that is not there at all is a fact about `d`'s
        // entries, which its stamp stands for: a symlink to nothing now may
        // reach a repository made later elsewhere, with `d` unchanged.
        let dotgit_absent = matches!(&link, Err(e) if e.kind() == std::io::ErrorKind::NotFound);
        let meta = link.and_then(|m| {
            if m.file_type().is_symlink() {
                std::fs::metadata(&dotgit).map(|t| (t, false))
            } else {
                Ok((m, true))
            }
        });
        let mut no_dotgit = false;
        match meta {
            Ok((m, _)) if m.is_file() => match read_gitfile(&dotgit) {
                Ok(target) => match is_git_directory(&target) {
                    Some(commondir) => {
                        return Some(Repo {
                            git_dir: target,
                            work_tree: Some(d.to_path_buf()),
                            canonical: false,
                            commondir: Some(commondir),
                        });
                    }
                    // git stops with "not a git repository": nothing runs.
                    None => return None,
                },
                // git stops with "not a git repository": nothing runs.
                _ => return None,
            },
            Ok((m, plain)) if m.is_dir() => {
                if let Some(commondir) = is_git_directory(&dotgit) {
                    return Some(Repo {
                        git_dir: dotgit,
                        work_tree: Some(d.to_path_buf()),
                        canonical: plain,
                        commondir: Some(commondir),
                    });
                }
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => no_dotgit = dotgit_absent,
            Err(e) => findings.push(Finding::new(
                ".git",
                dotgit.display().to_string(),
                format!("cannot inspect ({e})"),
            )),
        }
        match head_at(&d.join("HEAD")) {
            Head::Valid => {
                if let Some(commondir) = git_directory_with_head(d) {
                    return Some(Repo {
                        git_dir: d.to_path_buf(),
                        work_tree: None,
                        canonical: true,
                        commondir: Some(commondir),
                    });
                }
            }
            Head::Missing if no_dotgit => {
                if let Some(s) = stamp {
                    NO_REPOSITORY.insert(d, s, ());
                }
            }
            Head::Missing | Head::Invalid => {}
        }
    }
    None
}

/// Where [`discover`] takes the stamps of the directories it walks up through:
/// a `stat` each, or answers the caller has already had from the file system
/// for the same decision.
pub(crate) trait DirStamps {
    /// The stamp of the directory `dir` (symlinks followed), if it is one.
    fn dir_stamp(&self, dir: &Path) -> Option<Stamp>;
}

/// [`DirStamps`] by one `stat` each.
pub(crate) struct StatStamps;

impl DirStamps for StatStamps {
    fn dir_stamp(&self, dir: &Path) -> Option<Stamp> {
        std::fs::metadata(dir)
            .ok()
            .filter(|m| m.is_dir())
            .map(|m| Stamp::of(&m))
    }
}

/// Directories known to hold neither `.git` nor `HEAD`, process-wide.
static NO_REPOSITORY: StampCache<()> = StampCache::new(CACHE_ENTRIES);

/// A cached, parsed config file.
type Parsed = Arc<Result<Vec<Entry>, String>>;

/// Parsed config files, by the path as asked for: the stamp of the file it
/// reached, that file's canonical path, and its parsed content.
static CACHE: StampCache<(PathBuf, Parsed)> = StampCache::new(CACHE_ENTRIES);

/// A config file as [`load`] found it.
struct Loaded {
    /// Canonical when the file exists, else the path asked for.
    canonical: PathBuf,
    /// `Ok(None)`: no such file.
    parsed: Result<Option<Parsed>, String>,
}

/// Reads and parses `path`, through the cache: one `stat` when nothing
/// changed. The stamp is of the file the path reaches (symlinks followed),
/// so a retargeted link or a replaced file is read anew. A path not read
/// before is opened at once (no `stat` first): the opened file's own
/// metadata is the stamp, and its canonical path comes from the descriptor.
fn load(path: &Path) -> Loaded {
    let fail = |e: String| Loaded {
        canonical: real(path),
        parsed: Err(e),
    };
    if let Some((stamp, (canonical, parsed))) = CACHE.get(path) {
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() && Stamp::of(&m) == stamp => {
                return Loaded {
                    canonical,
                    parsed: Ok(Some(parsed)),
                };
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Loaded {
                    canonical: path.to_path_buf(),
                    parsed: Ok(None),
                };
            }
            // Changed, or no longer a file: read anew below.
            _ => {}
        }
    }
    // Never blocks on a FIFO planted where a config file is expected.
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Loaded {
                canonical: path.to_path_buf(),
                parsed: Ok(None),
            };
        }
        Err(e) => return fail(format!("cannot read: {e}")),
    };
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(e) => return fail(format!("cannot read: {e}")),
    };
    if !meta.is_file() {
        return fail("not a regular file".into());
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return fail(format!("larger than {MAX_CONFIG_BYTES} bytes"));
    }
    let canonical = canonical_of_open(&file, path);
    // Read what the stamp says is there, no end-of-file probe after it: a
    // file that changes meanwhile has another stamp, so the next load reads
    // it again.
    let mut bytes = vec![0u8; meta.len() as usize];
    let mut filled = 0;
    while filled < bytes.len() {
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return fail(format!("cannot read: {e}")),
        }
    }
    bytes.truncate(filled);
    let parsed: Parsed = Arc::new(git_config_syntax::parse(&bytes).map_err(|e| e.to_string()));
    CACHE.insert(path, Stamp::of(&meta), (canonical.clone(), parsed.clone()));
    Loaded {
        canonical,
        parsed: Ok(Some(parsed)),
    }
}

/// The canonical path of an open file: one `readlink` of its descriptor's
/// `/proc` entry instead of one per component of `path`, else (no `/proc`,
/// or the file was unlinked meanwhile) the path resolved by name.
fn canonical_of_open(file: &std::fs::File, path: &Path) -> PathBuf {
    use std::os::fd::AsRawFd;
    let link = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    match std::fs::read_link(link) {
        Ok(p) if p.is_absolute() && !p.to_string_lossy().ends_with(" (deleted)") => p,
        _ => real(path),
    }
}

/// The canonical form of `path` when it exists, else `path` itself.
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

struct Walk<'a> {
    location: &'a Location,
    home: PathBuf,
    report: RepoConfig,
}

impl Walk<'_> {
    fn outside(&mut self, path: &Path) {
        self.outside_canonical(real(path));
    }

    /// Object directories `objects/info/alternates` names: git reads their
    /// objects as its own (`git cat-file -p SHA` printed a blob of a
    /// repository outside the location), and follows theirs in turn.
    fn alternates(&mut self, objects: &Path, depth: usize, seen: &mut Vec<PathBuf>) {
        let Ok(text) = toolgate_core::small_file::read_text(
            &objects.join("info/alternates"),
            MAX_CONFIG_BYTES,
        ) else {
            return;
        };
        for line in text.lines().map(str::trim_end) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line.starts_with('"') || depth >= 5 || seen.len() >= 32 {
                // A C-quoted path, or more than git follows: not known.
                self.outside_canonical(PathBuf::from("/"));
                continue;
            }
            let dir = real(&join(objects, line));
            if seen.contains(&dir) {
                continue;
            }
            seen.push(dir.clone());
            self.outside_canonical(dir.clone());
            self.alternates(&dir, depth + 1, seen);
        }
    }

    fn outside_canonical(&mut self, p: PathBuf) {
        if !self.location.contains(&p) && !self.report.outside.contains(&p) {
            self.report.outside.push(p);
        }
    }

    /// Reads one file and, recursively, what it includes.
    fn file(
        &mut self,
        path: PathBuf,
        scope: Scope,
        trusted: bool,
        conditional: bool,
        depth: usize,
    ) {
        if self.report.files.len() >= MAX_FILES {
            self.report.findings.push(Finding::new(
                "include.path",
                path.display().to_string(),
                format!("more than {MAX_FILES} config files"),
            ));
            return;
        }
        let Loaded { canonical, parsed } = load(&path);
        let trusted = trusted && !self.location.contains(&canonical);
        self.report.files.push(ConfigFile {
            path: canonical.clone(),
            scope,
            trusted,
            conditional,
            exists: matches!(parsed, Ok(Some(_))),
        });
        let parsed = match parsed {
            Ok(Some(p)) => p,
            Ok(None) => return,
            Err(e) => {
                if !trusted {
                    self.report.findings.push(Finding::new(
                        "(file)",
                        canonical.display().to_string(),
                        e,
                    ));
                }
                return;
            }
        };
        if !trusted {
            self.outside_canonical(canonical.clone());
        }
        let entries = match parsed.as_ref() {
            Ok(e) => e,
            Err(e) => {
                if !trusted {
                    self.report.findings.push(Finding::new(
                        "(file)",
                        canonical.display().to_string(),
                        format!("cannot parse: {e}"),
                    ));
                }
                return;
            }
        };
        let dir = canonical.parent().unwrap_or(Path::new("/")).to_path_buf();
        for e in entries {
            let lower = e.key.to_ascii_lowercase();
            let include = lower == "include.path"
                || (lower.starts_with("includeif.") && lower.ends_with(".path"));
            let origin = || format!("{}:{}", canonical.display(), e.line);
            if include {
                let Some(v) = e.value.as_deref() else {
                    continue;
                };
                if depth >= MAX_INCLUDE_DEPTH {
                    self.report.findings.push(Finding::new(
                        e.key.clone(),
                        origin(),
                        "includes nested too deep",
                    ));
                    continue;
                }
                let target = if let Some(rest) = v.strip_prefix("%(prefix)/") {
                    Path::new("/usr").join(rest)
                } else if v.starts_with('~') && !v.starts_with("~/") && v != "~" {
                    self.report.findings.push(Finding::new(
                        e.key.clone(),
                        origin(),
                        "include of another user's home",
                    ));
                    continue;
                } else {
                    join(&dir, &tilde(v, &self.home).to_string_lossy())
                };
                let cond = conditional || lower.starts_with("includeif.");
                self.file(target, Scope::Include, trusted, cond, depth + 1);
                continue;
            }
            if trusted {
                continue;
            }
            if lower == "core.worktree"
                && let (Some(v), Some(gd)) = (e.value.as_deref(), self.report.git_dir.clone())
            {
                let wt = join(&gd, v);
                self.outside(&wt);
                self.report.work_tree = Some(wt);
            }
            if let Some(why) = keys::unsafe_key(&e.key, e.value.as_deref()) {
                self.report
                    .findings
                    .push(Finding::new(e.key.clone(), origin(), why));
            }
        }
    }

    /// A key set on the command line (`-c`, `GIT_CONFIG_*`).
    fn command_key(&mut self, key: &str, value: Option<&str>, origin: &str) {
        if let Some(why) = keys::unsafe_key(key, value) {
            self.report.findings.push(Finding::new(key, origin, why));
        }
    }
}

/// git's `sq_dequote_to_strvec` for `GIT_CONFIG_PARAMETERS`: `'key'='value'`
/// pairs (or the old `'key=value'`), separated by spaces.
fn parse_config_parameters(text: &str) -> Option<Vec<(String, Option<String>)>> {
    fn sq(s: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<String> {
        if s.next()? != '\'' {
            return None;
        }
        let mut out = String::new();
        loop {
            match s.next()? {
                '\'' => {
                    // '\'' continues the same word.
                    if s.peek() == Some(&'\\') {
                        s.next();
                        if s.next()? != '\'' || s.next()? != '\'' {
                            return None;
                        }
                        out.push('\'');
                        continue;
                    }
                    return Some(out);
                }
                c => out.push(c),
            }
        }
    }
    let mut out = Vec::new();
    let mut s = text.chars().peekable();
    loop {
        while s.peek() == Some(&' ') {
            s.next();
        }
        if s.peek().is_none() {
            return Some(out);
        }
        let key = sq(&mut s)?;
        if s.peek() == Some(&'=') {
            s.next();
            let value = if s.peek() == Some(&'\'') {
                Some(sq(&mut s)?)
            } else {
                None
            };
            out.push((key, value));
        } else {
            match key.split_once('=') {
                Some((k, v)) => out.push((k.to_string(), Some(v.to_string()))),
                None => out.push((key, None)),
            }
        }
    }
}

/// The configuration a git command uses and whether it may run a program.
/// See the module documentation. Never fails: what cannot be known is a
/// [`Finding`].
pub fn inspect(inv: &GitInvocation, location: &Location) -> RepoConfig {
    inspect_with(inv, location, &StatStamps)
}

/// [`inspect`], with the stamps of the directories discovery walks through
/// taken from `stamps`.
pub(crate) fn inspect_with(
    inv: &GitInvocation,
    location: &Location,
    stamps: &dyn DirStamps,
) -> RepoConfig {
    let env = Env { inv };
    let mut findings = Vec::new();
    // Variables of the command line that run programs by themselves.
    for (name, value) in &inv.assignments {
        if let Some(why) = keys::unsafe_env(name, value.as_deref()) {
            findings.push(Finding::new(name.clone(), name.clone(), why));
        }
    }
    let globals = parse_globals(&inv.global_args, &env, &mut findings);

    // Variables whose value the command line left unknown.
    let known = |name: &str, findings: &mut Vec<Finding>| -> (Option<String>, bool) {
        match env.var(name) {
            Var::Unset => (None, false),
            Var::Process(v) => (Some(v), false),
            Var::Command(Some(v)) => (Some(v), true),
            Var::Command(None) => {
                findings.push(Finding::new(
                    name,
                    name,
                    "set to a value known only at run time",
                ));
                (None, true)
            }
        }
    };

    let mut start = inv.cwd.clone();
    for d in &globals.chdirs {
        if !d.is_empty() {
            start = join(&start, d);
        }
    }
    let (home, home_cmd) = match known("HOME", &mut findings) {
        (Some(h), from_cmd) => (PathBuf::from(h), from_cmd),
        (None, from_cmd) => (inv.home.clone(), from_cmd),
    };
    let mut walk = Walk {
        location,
        home: home.clone(),
        report: RepoConfig {
            start_dir: Some(start.clone()),
            ..RepoConfig::default()
        },
    };
    if globals.chdirs.is_empty() {
        walk.outside_canonical(start.clone());
    } else {
        start = real(&start);
        walk.report.start_dir = Some(start.clone());
        walk.outside_canonical(start.clone());
    }

    // The repository.
    walk.report.index_file_set = !matches!(env.var("GIT_INDEX_FILE"), Var::Unset);
    let (env_git_dir, _) = known("GIT_DIR", &mut findings);
    let (env_work_tree, _) = known("GIT_WORK_TREE", &mut findings);
    let git_dir_text = globals.git_dir.clone().or(env_git_dir);
    let repo = if let Some(gd) = git_dir_text {
        let p = join(&start, &gd);
        let p = if p.is_file() {
            read_gitfile(&p).unwrap_or(p)
        } else {
            p
        };
        Some(Repo {
            git_dir: p,
            work_tree: None,
            canonical: false,
            commondir: None,
        })
    } else if globals.bare {
        Some(Repo {
            git_dir: start.clone(),
            work_tree: None,
            canonical: true,
            commondir: None,
        })
    } else {
        discover(&start, stamps, &mut findings)
    };
    if let Some(repo) = &repo {
        let git_dir = if repo.canonical {
            repo.git_dir.clone()
        } else {
            real(&repo.git_dir)
        };
        let common = match known("GIT_COMMON_DIR", &mut findings) {
            (Some(c), _) if !c.is_empty() => real(&join(&start, &c)),
            _ => {
                // Discovery read `commondir` already; an explicit git dir
                // has not been looked at yet.
                let text = match &repo.commondir {
                    Some(text) => text.clone(),
                    None => commondir_text(&git_dir),
                };
                common_dir_of(&git_dir, &text)
            }
            .map(|c| real(&c))
            .unwrap_or_else(|| git_dir.clone()),
        };
        walk.outside_canonical(git_dir.clone());
        walk.outside_canonical(common.clone());
        walk.alternates(&common.join("objects"), 0, &mut Vec::new());
        walk.report.git_dir = Some(git_dir);
        walk.report.common_dir = Some(common);
        let wt = globals
            .work_tree
            .clone()
            .or(env_work_tree)
            .map(|w| real(&join(&start, &w)))
            .or_else(|| repo.work_tree.clone());
        if let Some(wt) = &wt {
            walk.outside_canonical(wt.clone());
        }
        walk.report.work_tree = wt;
    }
    // GIT_CONFIG names the file of `git config` only; it is read there.
    if let (Some(file), _) = known("GIT_CONFIG", &mut findings) {
        walk.outside(&join(&start, &file));
    }
    walk.report.findings = findings;

    // System, then global, then local, worktree, command: git's order.
    match known("GIT_CONFIG_NOSYSTEM", &mut walk.report.findings) {
        (Some(v), _) if !keys::is_false(&v) => {}
        _ => {
            let (path, from_cmd) = match known("GIT_CONFIG_SYSTEM", &mut walk.report.findings) {
                (Some(p), c) => (PathBuf::from(p), c),
                (None, c) => (PathBuf::from("/etc/gitconfig"), c),
            };
            if !path.as_os_str().is_empty() {
                walk.file(path, Scope::System, !from_cmd, false, 0);
            }
        }
    }
    match known("GIT_CONFIG_GLOBAL", &mut walk.report.findings) {
        (Some(p), from_cmd) => {
            if !p.is_empty() {
                walk.file(PathBuf::from(p), Scope::Global, !from_cmd, false, 0);
            }
        }
        (None, from_cmd) => {
            let (xdg, xdg_cmd) = known("XDG_CONFIG_HOME", &mut walk.report.findings);
            let xdg_path = match xdg.filter(|x| !x.is_empty()) {
                Some(x) => PathBuf::from(x).join("git/config"),
                None => home.join(".config/git/config"),
            };
            let trusted = !from_cmd && !home_cmd;
            walk.file(xdg_path, Scope::Global, trusted && !xdg_cmd, false, 0);
            walk.file(home.join(".gitconfig"), Scope::Global, trusted, false, 0);
        }
    }
    if let (Some(gd), Some(common)) = (walk.report.git_dir.clone(), walk.report.common_dir.clone())
    {
        walk.file(common.join("config"), Scope::Local, false, false, 0);
        walk.file(gd.join("config.worktree"), Scope::Worktree, false, false, 0);
        submodules(&mut walk, &common);
        if let Some(wt) = walk.report.work_tree.clone() {
            checked_out_submodules(&mut walk, &wt);
            indexed_submodules(&mut walk, &gd, &wt, 0);
        }
    }

    // The command scope: GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT, then -c.
    for name in ["GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"] {
        let from_cmd = matches!(env.var(name), Var::Command(_));
        let (value, _) = known(name, &mut walk.report.findings);
        let Some(value) = value else { continue };
        if !from_cmd {
            // The user's own environment: trusted, like the global file.
            continue;
        }
        if name == "GIT_CONFIG_PARAMETERS" {
            match parse_config_parameters(&value) {
                Some(pairs) => {
                    for (k, v) in pairs {
                        walk.command_key(&k, v.as_deref(), name);
                    }
                }
                None => walk.report.findings.push(Finding::new(
                    name,
                    name,
                    "cannot parse GIT_CONFIG_PARAMETERS",
                )),
            }
            continue;
        }
        let Ok(count) = value.trim().parse::<usize>() else {
            if !value.trim().is_empty() {
                walk.report
                    .findings
                    .push(Finding::new(name, name, "not a number"));
            }
            continue;
        };
        for n in 0..count.min(1000) {
            let kn = format!("GIT_CONFIG_KEY_{n}");
            let vn = format!("GIT_CONFIG_VALUE_{n}");
            let (k, _) = known(&kn, &mut walk.report.findings);
            let (v, _) = known(&vn, &mut walk.report.findings);
            match k {
                Some(k) => walk.command_key(&k, v.as_deref(), &kn),
                None => walk
                    .report
                    .findings
                    .push(Finding::new(kn.clone(), kn, "missing")),
            }
        }
    }
    for (k, v, origin) in &globals.params {
        let lower = k.to_ascii_lowercase();
        if lower.starts_with("include") {
            walk.report.findings.push(Finding::new(
                k.clone(),
                *origin,
                "includes further configuration",
            ));
            continue;
        }
        walk.command_key(k, v.as_deref(), origin);
    }
    walk.report
}

/// Submodules' configs under `common/modules/` (nested ones too), which
/// `git status` and `git diff` read when they recurse into a submodule.
fn submodules(walk: &mut Walk<'_>, common: &Path) {
    let mut stack = vec![(common.join("modules"), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in rd.flatten() {
            if walk.report.files.len() >= MAX_FILES {
                return;
            }
            let p = entry.path();
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if p.join("config").is_file() || p.join("HEAD").is_file() {
                // A submodule's git directory: its config, then its own submodules.
                walk.file(p.join("config"), Scope::Submodule, false, false, 0);
                if depth < 4 {
                    stack.push((p.join("modules"), depth + 1));
                }
            } else if depth < 4 {
                // A component of a submodule name holding slashes: `modules/a/b/`.
                stack.push((p, depth + 1));
            }
        }
    }
}

/// Submodules listed in the work tree's `.gitmodules` whose `.git` is a
/// directory of their own (or a `gitdir:` file pointing elsewhere than
/// `modules/`): their configs too.
fn checked_out_submodules(walk: &mut Walk<'_>, work_tree: &Path) {
    let Loaded { parsed, .. } = load(&work_tree.join(".gitmodules"));
    let entries = match parsed {
        Ok(Some(p)) => p,
        Ok(None) => return,
        Err(e) => {
            walk.report.findings.push(Finding::new(
                "(file)",
                work_tree.join(".gitmodules").display().to_string(),
                e,
            ));
            return;
        }
    };
    let Ok(entries) = entries.as_ref() else {
        // git refuses a broken .gitmodules for submodule work: nothing recurses.
        return;
    };
    for e in entries {
        let lower = e.key.to_ascii_lowercase();
        if !(lower.starts_with("submodule.") && lower.ends_with(".path")) {
            continue;
        }
        let Some(sub) = e.value.as_deref() else {
            continue;
        };
        if !submodule_at(walk, work_tree, sub, 0) {
            return;
        }
    }
}

/// Submodules the index records as gitlinks, listed in `.gitmodules` or
/// not (an embedded repository added with `git add`): git recurses into
/// each checked-out one all the same. An index that cannot be read hides
/// them: not proven.
fn indexed_submodules(walk: &mut Walk<'_>, git_dir: &Path, work_tree: &Path, depth: usize) {
    match crate::git_tracked::gitlinks(git_dir, MAX_FILES) {
        Ok(paths) => {
            for sub in paths {
                let sub = String::from_utf8_lossy(&sub).into_owned();
                if !submodule_at(walk, work_tree, &sub, depth) {
                    return;
                }
            }
        }
        // An index git cannot read either: git stops before recursing.
        Err(
            crate::git_index::IndexError::NotAnIndex
            | crate::git_index::IndexError::UnknownVersion(_)
            | crate::git_index::IndexError::Malformed(_),
        ) => {}
        // One git reads but this reader does not (split, sparse…).
        Err(why) => walk.report.findings.push(Finding::new(
            "(index)",
            git_dir.join("index").display().to_string(),
            format!("the submodules git recurses into are not known: {why}"),
        )),
    }
}

/// Judges the configuration of the submodule checked out at `sub` (its own
/// `.git` directory, or the one its gitfile names), then the submodules its
/// own index records (git recurses into those too), down to
/// [`MAX_SUBMODULE_DEPTH`]. False when the walk is full.
fn submodule_at(walk: &mut Walk<'_>, work_tree: &Path, sub: &str, depth: usize) -> bool {
    let dotgit = join(work_tree, sub).join(".git");
    let git_dir = if dotgit.is_file() {
        match read_gitfile(&dotgit) {
            Ok(t) => t,
            Err(_) => return true,
        }
    } else if dotgit.is_dir() {
        dotgit
    } else {
        return true;
    };
    let config = real(&git_dir.join("config"));
    if walk.report.files.iter().any(|f| f.path == config) {
        return true;
    }
    if walk.report.files.len() >= MAX_FILES {
        return false;
    }
    walk.file(config, Scope::Submodule, false, false, 0);
    if depth + 1 >= MAX_SUBMODULE_DEPTH {
        // Deeper than the analyser looks: not proven.
        walk.report.findings.push(Finding::new(
            "(submodule)",
            git_dir.display().to_string(),
            "submodules nested this deep are not followed",
        ));
        return true;
    }
    indexed_submodules(walk, &git_dir, &join(work_tree, sub), depth + 1);
    true
}

/// How deep nested submodules are followed.
const MAX_SUBMODULE_DEPTH: usize = 4;

#[cfg(test)]
mod tests;
