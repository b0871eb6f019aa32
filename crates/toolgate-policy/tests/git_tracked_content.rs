//! git subcommands the read specs prove `read` that print the content of the
//! repository's tracked files — from the working tree, the index or
//! history: `git grep`, `git show`, `git log -p`, `git diff`, `git cat-file`,
//! `git range-diff`, `git stash show -p`… When the repository tracks a
//! credential (by name, or a file that is a hard link to one), they read it:
//! risk `credential`, denied. When the index cannot be read or is too large
//! to check, they are not proven (asked). A repository that tracks no
//! credential (an untracked, ignored `.env` beside it) keeps them allowed.
//!
//! Every repository here is real: `git init`, real files, real hard links.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use std::fs;
use std::path::{Path, PathBuf};
use toolgate_policy::test_util::git_command;

use fixture::{default_decision, max_risk, summary};
use toolgate_core::{Effect, Location, Risk};
use toolgate_policy::shell::{ShellContext, ShellRequest, analyze};

/// A temporary home (with a key) and a repository beside it, the location.
struct Repo {
    _dir: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
    location: Location,
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, text).unwrap();
}

impl Repo {
    /// An empty repository (one commit of `README.md` and `src/main.rs`)
    /// and a home holding `~/.ssh/id_ed25519`.
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let home = base.join("home");
        let root = base.join("repo");
        write(
            &home.join(".ssh/id_ed25519"),
            "-----BEGIN OPENSSH PRIVATE KEY-----\n",
        );
        write(&root.join("README.md"), "# demo\nmain\n");
        write(&root.join("src/main.rs"), "fn main() {}\n");
        let repo = Repo {
            _dir: dir,
            location: Location::new(&root).unwrap(),
            home,
            root,
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["add", "README.md", "src"]);
        repo.git(&["commit", "-q", "-m", "first"]);
        repo
    }

    /// Runs git in the repository, without the user's configuration.
    fn git(&self, args: &[&str]) -> String {
        let out = git_command(&self.root, args)
            .env("HOME", &self.home)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// Writes `path` and commits it (`git add -f`, as a `.gitignore` would
    /// not stop).
    fn track(&self, path: &str, text: &str) {
        write(&self.root.join(path), text);
        self.git(&["add", "-f", path]);
        self.git(&["commit", "-q", "-m", path]);
    }

    /// A repository that tracks `name` (a credential by its name).
    fn tracking(name: &str) -> Repo {
        let repo = Repo::new();
        repo.track(name, "-----BEGIN OPENSSH PRIVATE KEY-----\nTOKEN=BEGIN\n");
        repo
    }

    /// A repository that tracks `notes.txt`, a hard link to `~/.ssh/id_ed25519`.
    fn tracking_hard_link() -> Repo {
        let repo = Repo::new();
        fs::hard_link(
            repo.home.join(".ssh/id_ed25519"),
            repo.root.join("notes.txt"),
        )
        .unwrap();
        repo.git(&["add", "notes.txt"]);
        repo.git(&["commit", "-q", "-m", "notes"]);
        repo
    }

    fn analyze_in(&self, sub: &str, command: &str) -> Vec<ShellRequest> {
        let ctx = ShellContext {
            location: &self.location,
            cwd: if sub.is_empty() {
                self.root.clone()
            } else {
                self.root.join(sub)
            },
            home: self.home.clone(),
            inherited_env: true,
        };
        analyze(command, &ctx)
    }

    fn analyze(&self, command: &str) -> Vec<ShellRequest> {
        self.analyze_in("", command)
    }

    /// The command reads a credential (denied), and a request names `shown`.
    fn assert_credential(&self, command: &str, shown: &str) {
        let parts = self.analyze(command);
        fixture::assert_denied_credential(command, &parts);
        assert!(
            parts.iter().any(|p| p.request.risk == Risk::Credential
                && (p.request.resource.contains(shown) || p.reason.contains(shown))),
            "{command:?} names no {shown}:\n  {}",
            summary(&parts)
        );
    }

    /// The command is asked (not proven read), and not for a credential.
    fn assert_asked(&self, command: &str) {
        let parts = self.analyze(command);
        assert_eq!(
            default_decision(&parts),
            Effect::Ask,
            "{command:?}:\n  {}",
            summary(&parts)
        );
    }

    fn assert_allowed(&self, command: &str) {
        let parts = self.analyze(command);
        assert_eq!(
            default_decision(&parts),
            Effect::Allow,
            "{command:?}:\n  {}",
            summary(&parts)
        );
    }
}

/// Every content-printing form of the specs, as written for the attacks.
const CONTENT_COMMANDS: &[&str] = &[
    "git grep -n BEGIN",
    "git grep BEGIN",
    "git grep -l BEGIN",
    "git grep -c BEGIN",
    "git grep --cached BEGIN",
    "git grep -e BEGIN HEAD",
    "git --no-pager grep -i begin",
    "git show",
    "git show HEAD",
    "git show -1",
    "git show --format=%H HEAD",
    "git log -p",
    "git log --patch -1",
    "git log -u",
    "git log -p --stat",
    "git log --patch-with-stat",
    "git log -U3",
    "git log --word-diff",
    "git log -W",
    "git log --cc",
    "git log -S TOKEN --oneline",
    "git log -G TOKEN --oneline",
    "git whatchanged -p",
    "git reflog show -p",
    "git stash list -p",
    "git stash show -p",
    "git diff",
    "git diff HEAD~1",
    "git diff --cached HEAD~1",
    "git diff --word-diff HEAD~1",
    "git diff --check HEAD~1",
    "git diff-tree -p HEAD",
    "git diff-index -p HEAD~1",
    "git range-diff HEAD~1...HEAD",
];

#[test]
fn git_content_commands_print_a_tracked_credential_file_by_name() {
    for name in [".env", "id_rsa", ".npmrc", "config/.env.production"] {
        let repo = Repo::tracking(name);
        for command in CONTENT_COMMANDS {
            repo.assert_credential(command, name);
        }
    }
}

#[test]
fn git_content_commands_print_a_tracked_hard_link_to_a_credential() {
    let repo = Repo::tracking_hard_link();
    for command in CONTENT_COMMANDS {
        repo.assert_credential(command, "notes.txt");
    }
}

/// The index's stat data is stale (the link was made after `git add`): the
/// working-tree file's own `lstat` finds it.
#[test]
fn git_grep_reads_a_tracked_file_made_a_hard_link_after_it_was_added() {
    let repo = Repo::new();
    repo.track("later.txt", "plain\n");
    fs::remove_file(repo.root.join("later.txt")).unwrap();
    fs::hard_link(
        repo.home.join(".ssh/id_ed25519"),
        repo.root.join("later.txt"),
    )
    .unwrap();
    for command in ["git grep -n BEGIN", "git diff"] {
        repo.assert_credential(command, "later.txt");
    }
}

/// `git show OBJECT` and `git cat-file -p OBJECT` print a blob whole, named
/// by its id, whatever `--stat` says.
#[test]
fn git_show_and_cat_file_print_a_blob_of_a_tracked_credential_by_its_id() {
    let repo = Repo::tracking(".env");
    let blob = repo.git(&["rev-parse", "HEAD:.env"]);
    let blob = blob.trim();
    for command in [
        format!("git cat-file -p {blob}"),
        format!("git cat-file blob {blob}"),
        format!("git show {blob}"),
        format!("git show --stat {blob}"),
        format!("git show -s {blob}"),
        "git show --stat main".to_string(),
    ] {
        repo.assert_credential(&command, ".env");
    }
    // Commits named by HEAD print no blob when the patch is turned off.
    for command in [
        "git show --stat HEAD",
        "git show -s --format=%H HEAD",
        "git cat-file -t HEAD",
        "git cat-file -s HEAD",
    ] {
        repo.assert_allowed(command);
    }
}

/// The repository is found as git finds it: `-C`, a subdirectory, `cd`.
#[test]
fn git_content_commands_from_elsewhere_reach_the_same_repository() {
    let repo = Repo::tracking(".env");
    fs::create_dir_all(repo.root.join("docs")).unwrap();
    for command in [
        "git -C docs grep -n BEGIN",
        "cd docs && git show HEAD",
        "cd src && git log -p",
        "git -C src diff HEAD~1",
    ] {
        repo.assert_credential(command, ".env");
    }
    let parts = repo.analyze_in("src", "git log -p");
    assert_eq!(max_risk(&parts), Risk::Credential, "{}", summary(&parts));
}

/// `git blame FILE` reads the file it names: judged by that path already.
#[test]
fn git_blame_of_a_tracked_credential_or_hard_link_is_a_credential_read() {
    let repo = Repo::tracking(".env");
    repo.assert_credential("git blame .env", ".env");
    let repo = Repo::tracking_hard_link();
    repo.assert_credential("git blame notes.txt", "notes.txt");
    repo.assert_credential("git blame HEAD -- notes.txt", "notes.txt");
}

/// Index versions 3 (an intent-to-add entry) and 4 (prefix-compressed
/// paths) are read as well as 2.
#[test]
fn git_content_commands_see_credentials_in_index_versions_3_and_4() {
    let repo = Repo::new();
    write(&repo.root.join(".env"), "TOKEN=BEGIN\n");
    repo.git(&["add", "-N", "-f", ".env"]);
    let head = fs::read(repo.root.join(".git/index")).unwrap();
    assert_eq!(&head[4..8], &[0, 0, 0, 3], "intent-to-add writes version 3");
    repo.assert_credential("git grep -n BEGIN", ".env");
    repo.assert_credential("git diff", ".env");

    let repo = Repo::tracking(".npmrc");
    for n in 0..20 {
        repo.track(&format!("src/mod{n:02}/file.rs"), "x\n");
    }
    repo.git(&["update-index", "--index-version", "4"]);
    let head = fs::read(repo.root.join(".git/index")).unwrap();
    assert_eq!(&head[4..8], &[0, 0, 0, 4]);
    repo.assert_credential("git grep -n BEGIN", ".npmrc");
    repo.assert_allowed("git grep -n main -- src");
}

/// What cannot be read is not proven: a corrupt index, one too large to
/// check, another index named by `GIT_INDEX_FILE`, a split index.
#[test]
fn git_content_commands_are_asked_when_the_index_cannot_be_checked() {
    let repo = Repo::new();
    let index = repo.root.join(".git/index");
    let mut bytes = fs::read(&index).unwrap();
    // A path length that runs past the end.
    bytes[12 + 60] = 0x0f;
    bytes[12 + 61] = 0xfe;
    fs::write(&index, &bytes).unwrap();
    repo.assert_asked("git grep -n main");
    repo.assert_asked("git show HEAD");
    fs::write(&index, b"DIRC\0\0\0\x09\0\0\0\0").unwrap();
    repo.assert_asked("git grep -n main");
    // Commands that print no content do not need the index.
    repo.assert_allowed("git log --oneline -n 20");
    repo.assert_allowed("git status");

    let repo = Repo::new();
    repo.assert_asked("GIT_INDEX_FILE=/tmp/other git grep -n main");

    let repo = Repo::new();
    repo.git(&["update-index", "--split-index"]);
    repo.assert_asked("git grep -n main");
}

#[test]
fn git_content_commands_are_asked_when_the_repository_tracks_too_many_files_to_check() {
    let repo = Repo::new();
    for n in 0..4200 {
        write(&repo.root.join(format!("many/f{n}.txt")), "x\n");
    }
    repo.git(&["add", "many"]);
    repo.assert_asked("git grep -n main");
    repo.assert_asked("git diff");
    // A pathspec that leaves few tracked files is checked in full.
    repo.assert_allowed("git grep -n main -- src");
    repo.assert_allowed("git log --oneline -n 20");
}

/// The everyday forms stay allowed in a repository that tracks no
/// credential, with an untracked, ignored `.env` beside its sources.
#[test]
fn git_content_commands_stay_allowed_beside_an_untracked_ignored_env() {
    let repo = Repo::new();
    repo.track(".gitignore", ".env\n");
    write(&repo.root.join(".env"), "TOKEN=secret\n");
    write(&repo.root.join("src/main.rs"), "fn main() { main() }\n");
    for command in [
        "git grep -n main",
        "git grep --cached main",
        "git log --oneline -n 20",
        "git log -p -1",
        "git diff --stat",
        "git diff",
        "git show --stat HEAD",
        "git show HEAD",
        "git show HEAD~1",
        "git cat-file -p HEAD",
        "git stash show -p",
    ] {
        repo.assert_allowed(command);
    }
}

/// A repository that tracks a credential still lets through what prints no
/// file content, and what a pathspec keeps away from the credential.
#[test]
fn git_commands_that_print_no_tracked_content_stay_allowed_beside_a_tracked_credential() {
    let repo = Repo::tracking(".env");
    for command in [
        "git status",
        "git log --oneline -n 20",
        "git log --stat -3",
        "git log --name-only -1",
        "git diff --stat",
        "git diff --name-only HEAD~1",
        "git show --stat HEAD",
        "git show --name-only HEAD",
        "git ls-files",
        "git grep -n main -- src",
        "git diff HEAD~1 -- src README.md",
        "git log -p -- src",
    ] {
        repo.assert_allowed(command);
    }
    // A pathspec that may match the credential does not narrow.
    for command in [
        "git grep -n BEGIN -- .",
        "git grep -n BEGIN -- '*.env'",
        "git log -p -- ':(glob)**'",
        "git diff HEAD~1 -- .env",
    ] {
        repo.assert_credential(command, ".env");
    }
}

/// Pathspecs are relative to where git runs (after its own `-C`), and
/// `--` with none after it selects everything: found by the corpus, where
/// `git -C target/leaky grep -c BEGIN -- .` was allowed.
#[test]
fn git_pathspecs_after_dashes_are_read_where_git_reads_them() {
    let repo = Repo::tracking(".env");
    fs::create_dir_all(repo.root.join("docs")).unwrap();
    for command in [
        "git grep -n BEGIN --",
        "git -C . grep -n BEGIN -- .",
        "git -C docs grep -n BEGIN -- ..",
        "git -C src grep -n BEGIN -- ../.env",
        "env -C src git grep -n BEGIN -- ..",
    ] {
        repo.assert_credential(command, ".env");
    }
    // A nested repository reached by `-C`, searched below its top.
    let outer = Repo::new();
    let inner = outer.root.join("vendor/leaky");
    fs::create_dir_all(&inner).unwrap();
    let nested = Repo {
        _dir: tempfile::tempdir().unwrap(),
        home: outer.home.clone(),
        root: inner.clone(),
        location: Location::new(&outer.root).unwrap(),
    };
    nested.git(&["init", "-q"]);
    nested.track(".env", "TOKEN=BEGIN\n");
    for command in [
        "git -C vendor/leaky grep -c BEGIN -- .",
        "cd vendor && git -C leaky grep -n BEGIN -- .",
    ] {
        outer.assert_credential(command, ".env");
    }
    outer.assert_allowed("git -C vendor/leaky grep -n BEGIN -- src");
    outer.assert_allowed("git -C docs grep -n BEGIN -- .");
}

/// A command raised for another reason (an assignment, a wrapper) still
/// reads the credentials: reported, not hidden behind the lower `ask`.
#[test]
fn git_content_commands_raised_for_another_reason_still_name_the_credential() {
    let repo = Repo::tracking(".env");
    for command in [
        "A=1 git grep -n BEGIN",
        "env A=1 git diff HEAD~1",
        "GIT_PAGER=cat git log -p",
    ] {
        repo.assert_credential(command, ".env");
    }
}

/// A credential committed once and removed since (`git rm --cached .env`
/// and a `.gitignore`, the usual repair) is still in history: `git show`
/// of the commit or the blob, `git log -p` and `git cat-file -p` print it
/// (review s36, left open). The survey reads what the index tracks now.
#[test]
#[ignore = "open: the survey reads the index only; reading history needs a walk of every reachable commit's paths (git's object store, packs included), cached by the refs, with a budget: too large for review s37"]
fn git_content_commands_print_a_credential_committed_once_and_removed_since() {
    let repo = Repo::tracking(".env");
    let commit = repo.git(&["rev-parse", "HEAD"]);
    let blob = repo.git(&["rev-parse", "HEAD:.env"]);
    repo.git(&["rm", "-q", "--cached", ".env"]);
    write(&repo.root.join(".gitignore"), ".env\n");
    repo.git(&["add", ".gitignore"]);
    repo.git(&["commit", "-q", "-m", "untrack .env"]);
    for command in [
        format!("git show {}", commit.trim()),
        format!("git cat-file -p {}", blob.trim()),
        "git show HEAD~1".to_string(),
        "git log -p".to_string(),
        "git log --all -p".to_string(),
    ] {
        let parts = repo.analyze(&command);
        assert_ne!(
            default_decision(&parts),
            Effect::Allow,
            "{command:?}:\n  {}",
            summary(&parts)
        );
    }
}
