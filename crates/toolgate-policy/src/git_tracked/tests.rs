// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

struct Setup {
    _dir: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
}

fn setup(files: &[&str]) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let home = base.join("home");
    let repo = base.join("repo");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "KEY").unwrap();
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    for f in files {
        let p = repo.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, f).unwrap();
    }
    if !files.is_empty() {
        git(&repo, &["add", "-f", "."]);
    }
    Setup {
        _dir: dir,
        home,
        repo,
    }
}

impl Setup {
    fn survey(&self, pathspecs: Option<&[Vec<u8>]>) -> Tracked {
        let git_dir = self.repo.join(".git");
        survey(&Survey {
            git_dir: &git_dir,
            work_tree: Some(&self.repo),
            home: &self.home,
            roots: &[&self.repo],
            pathspecs,
        })
    }
}

fn paths(t: &Tracked) -> Vec<String> {
    match t {
        Tracked::Credentials(found) => found
            .iter()
            .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect(),
        other => panic!("no credentials: {other:?}"),
    }
}

#[test]
fn finds_tracked_credentials_by_name_and_only_those_a_pathspec_selects() {
    let s = setup(&["src/main.rs", "config/.env", "keys/id_rsa", "README.md"]);
    assert_eq!(paths(&s.survey(None)), [".env", "id_rsa"]);
    let src = [b"src".to_vec()];
    assert_eq!(s.survey(Some(&src)), Tracked::Clean);
    let config = [b"CONFIG".to_vec()];
    assert_eq!(paths(&s.survey(Some(&config))), [".env"]);
    // A prefix that is not a whole component selects nothing more.
    let conf = [b"conf".to_vec()];
    assert_eq!(s.survey(Some(&conf)), Tracked::Clean);
}

#[test]
fn finds_hard_links_by_the_index_and_by_lstat() {
    let s = setup(&["README.md"]);
    std::fs::hard_link(s.home.join(".ssh/id_ed25519"), s.repo.join("added.txt")).unwrap();
    git(&s.repo, &["add", "added.txt"]);
    let found = s.survey(None);
    assert_eq!(paths(&found), ["added.txt"]);
    let Tracked::Credentials(found) = found else {
        unreachable!()
    };
    assert!(found[0].why.contains("added as a hard link"), "{found:?}");
    // The link made after `git add`: only the working tree shows it.
    std::fs::write(s.repo.join("later.txt"), "x").unwrap();
    git(&s.repo, &["add", "later.txt"]);
    std::fs::remove_file(s.repo.join("later.txt")).unwrap();
    std::fs::hard_link(s.home.join(".ssh/id_ed25519"), s.repo.join("later.txt")).unwrap();
    let later = [b"later.txt".to_vec()];
    let found = s.survey(Some(&later));
    assert_eq!(paths(&found), ["later.txt"]);
    // A symlink to a key.
    std::os::unix::fs::symlink(s.home.join(".ssh/id_ed25519"), s.repo.join("k")).unwrap();
    git(&s.repo, &["add", "k"]);
    let k = [b"k".to_vec()];
    assert_eq!(paths(&s.survey(Some(&k))), ["k"]);
}

#[test]
fn an_unreadable_index_or_a_submodule_is_unknown_and_a_missing_one_is_clean() {
    let s = setup(&[]);
    assert_eq!(s.survey(None), Tracked::Clean);
    std::fs::write(s.repo.join(".git/index"), b"DIRC\0\0\0\x07").unwrap();
    assert!(matches!(s.survey(None), Tracked::Unknown(_)));

    let s = setup(&["a.txt"]);
    let sub = setup(&["b.txt"]);
    git(
        &sub.repo,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@x",
            "commit",
            "-qm",
            "b",
        ],
    );
    git(
        &s.repo,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &sub.repo.to_string_lossy(),
            "sub",
        ],
    );
    let Tracked::Unknown(why) = s.survey(None) else {
        panic!("a submodule is not checked")
    };
    assert!(why.contains("submodule at sub"), "{why}");
    let a = [b"a.txt".to_vec()];
    assert_eq!(s.survey(Some(&a)), Tracked::Clean);
}

#[test]
fn the_index_is_read_once_until_it_changes() {
    let s = setup(&["a.txt"]);
    let path = s.repo.join(".git/index");
    // Written just now, it may change again under the same stamp.
    let fresh = load(&path).unwrap();
    assert!(!Arc::ptr_eq(&fresh, &load(&path).unwrap()));
    crate::repo_config::wait_until_settled(&path);
    let first = load(&path).unwrap();
    let again = load(&path).unwrap();
    assert!(Arc::ptr_eq(&first, &again));
    std::fs::write(s.repo.join("b.txt"), "b").unwrap();
    git(&s.repo, &["add", "b.txt"]);
    let after = load(&path).unwrap();
    assert_eq!(after.entries.len(), 2);
}
