//! The directory watch (inotify) that spares a long-running process the
//! `lstat` of every directory above the location on each `git` decision:
//! every way of making a repository appear above a watched location, after
//! the watch has answered for it, is still seen. Each attack first shows the
//! watch answering (its count moves), then changes the file system the way
//! the attack does, and the next decision must judge the repository's
//! `core.fsmonitor` (which runs a program on `git status`).

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, PoisonError};

use toolgate_core::{Location, Risk};
use toolgate_policy::shell::{ShellContext, analyze};
use toolgate_policy::test_util::{
    dir_watch_answers_for, dir_watch_served, git_command, wait_until_settled,
};

/// The watch is one per process, and a mount or an overflowed queue in one
/// test makes every directory changed, which would hide another test's
/// failure: the tests take turns.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// `root/a/ws`, no repository anywhere from `root` down.
struct Scratch {
    _turn: MutexGuard<'static, ()>,
    _dir: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    location: Location,
}

impl Scratch {
    fn new() -> Scratch {
        let turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
        // In `/var/tmp` when there is one: outside any repository (the
        // target directory is inside this one), and quieter than `/tmp`,
        // where a directory other programs keep changing would make the
        // watch step aside (changed) for everything below it.
        let base = Path::new("/var/tmp");
        let dir = if base.is_dir() {
            tempfile::tempdir_in(base).unwrap()
        } else {
            tempfile::tempdir().unwrap()
        };
        let root = fs::canonicalize(dir.path()).unwrap();
        let ws = root.join("a/ws");
        fs::create_dir_all(&ws).unwrap();
        let location = Location::new(&ws).unwrap();
        Scratch {
            _turn: turn,
            _dir: dir,
            root,
            ws,
            location,
        }
    }

    /// The highest risk `git status` gets in the workspace.
    fn git_status_risk(&self) -> Risk {
        let ctx = ShellContext {
            location: &self.location,
            cwd: self.ws.clone(),
            home: self.root.join("home"),
            inherited_env: true,
        };
        analyze("git status", &ctx)
            .iter()
            .map(|p| p.request.risk)
            .max()
            .unwrap()
    }

    /// Decides until the watch answers for the workspace's directories.
    fn watched(&self) {
        for d in [&self.root, &self.root.join("a"), &self.ws] {
            wait_until_settled(d);
        }
        let before = dir_watch_served();
        for _ in 0..150 {
            assert_eq!(self.git_status_risk(), Risk::Read, "no repository yet");
            if dir_watch_answers_for(&self.ws) && dir_watch_served() > before {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("the directory watch never answered: the test would not test it");
    }
}

/// A repository at `dir` whose configuration runs a program on `git status`.
fn plant_repository(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    let ok = git_command(dir, &["init", "-q"])
        .status()
        .unwrap()
        .success();
    assert!(ok, "git init failed in {}", dir.display());
    let config = dir.join(".git/config");
    let mut text = fs::read_to_string(&config).unwrap();
    text.push_str("[core]\n\tfsmonitor = touch pwned\n");
    fs::write(config, text).unwrap();
}

fn assert_judged(s: &Scratch, attack: &str) {
    let risk = s.git_status_risk();
    assert!(
        risk >= Risk::Execute,
        "{attack}: `git status` judged {risk}, but the repository above runs a program"
    );
}

#[test]
fn a_repository_made_in_a_watched_parent_is_judged() {
    let s = Scratch::new();
    s.watched();
    plant_repository(&s.root.join("a"));
    assert_judged(&s, "git init in the parent");
}

#[test]
fn a_repository_made_in_a_watched_grandparent_is_judged() {
    let s = Scratch::new();
    s.watched();
    plant_repository(&s.root);
    assert_judged(&s, "git init two levels up");
}

#[test]
fn a_gitfile_renamed_into_a_watched_parent_is_judged() {
    let s = Scratch::new();
    s.watched();
    // The repository lives elsewhere; a `.git` file pointing at it is
    // written beside and renamed into place.
    let elsewhere = s.root.join("elsewhere");
    plant_repository(&elsewhere);
    let staged = s.root.join("staged-gitfile");
    fs::write(
        &staged,
        format!("gitdir: {}\n", elsewhere.join(".git").display()),
    )
    .unwrap();
    fs::rename(&staged, s.root.join("a/.git")).unwrap();
    assert_judged(&s, "a gitfile renamed into the parent");
}

#[test]
fn a_parent_renamed_away_and_replaced_by_a_repository_is_judged() {
    let s = Scratch::new();
    s.watched();
    // The watched directories move away with their watches; a new `a/ws`
    // inside a repository takes their path.
    fs::rename(s.root.join("a"), s.root.join("a-old")).unwrap();
    plant_repository(&s.root.join("a"));
    fs::create_dir_all(&s.ws).unwrap();
    assert_judged(&s, "the parent replaced by a repository");
}

#[test]
fn a_workspace_replaced_by_a_repository_when_its_parent_moves_is_judged() {
    let s = Scratch::new();
    s.watched();
    // Renaming the parent raises no event on the workspace's own watch,
    // which stays on the old directory: the new workspace at the same path,
    // a repository itself, is seen only because the parent's watch changed.
    fs::rename(s.root.join("a"), s.root.join("a-old")).unwrap();
    plant_repository(&s.ws);
    assert_judged(&s, "the workspace replaced under a moved parent");
}

#[test]
fn a_workspace_replaced_while_only_its_parent_was_looked_at_is_judged() {
    let s = Scratch::new();
    s.watched();
    fs::rename(s.root.join("a"), s.root.join("a-old")).unwrap();
    fs::create_dir_all(&s.ws).unwrap();
    plant_repository(&s.ws);
    // A decision in the new parent looks at it afresh (and finds it
    // unchanged from then on), but not at the workspace below it, whose
    // watch is still on the old directory and saw nothing.
    let parent = s.root.join("a");
    let location = Location::new(&parent).unwrap();
    let ctx = ShellContext {
        location: &location,
        cwd: parent.clone(),
        home: s.root.join("home"),
        inherited_env: true,
    };
    for _ in 0..2 {
        let _ = analyze("git status", &ctx);
    }
    assert_judged(
        &s,
        "the workspace replaced while only its parent was looked at",
    );
}

#[test]
fn a_parent_replaced_by_a_symlink_into_a_repository_is_judged() {
    let s = Scratch::new();
    s.watched();
    let evil = s.root.join("evil");
    plant_repository(&evil);
    fs::create_dir_all(evil.join("ws")).unwrap();
    fs::rename(s.root.join("a"), s.root.join("a-old")).unwrap();
    std::os::unix::fs::symlink(&evil, s.root.join("a")).unwrap();
    assert_judged(&s, "the parent replaced by a symlink");
}

#[test]
fn a_repository_directory_renamed_in_as_dotgit_is_judged() {
    let s = Scratch::new();
    s.watched();
    // Made elsewhere, then moved in whole: one rename, no create in `a`.
    let elsewhere = s.root.join("elsewhere");
    plant_repository(&elsewhere);
    fs::rename(elsewhere.join(".git"), s.root.join("a/.git")).unwrap();
    assert_judged(&s, "a .git directory renamed into the parent");
}

#[test]
fn a_dotgit_symlink_made_in_a_watched_parent_is_judged() {
    let s = Scratch::new();
    let elsewhere = s.root.join("elsewhere");
    plant_repository(&elsewhere);
    s.watched();
    std::os::unix::fs::symlink(elsewhere.join(".git"), s.root.join("a/.git")).unwrap();
    assert_judged(&s, "a .git symlink made in the parent");
}

#[test]
fn a_bare_repository_made_in_a_watched_parent_is_judged() {
    let s = Scratch::new();
    s.watched();
    // The parent itself becomes a git directory (HEAD, objects, refs).
    let parent = s.root.join("a");
    let ok = git_command(&parent, &["init", "-q", "--bare", "."])
        .status()
        .unwrap()
        .success();
    assert!(ok, "git init --bare failed");
    let config = parent.join("config");
    let mut text = fs::read_to_string(&config).unwrap();
    text.push_str("[core]\n\tfsmonitor = touch pwned\n");
    fs::write(config, text).unwrap();
    assert_judged(&s, "a bare repository made in the parent");
}

#[test]
fn a_repository_made_while_the_event_queue_overflowed_is_judged() {
    let s = Scratch::new();
    s.watched();
    // More events on a watched directory than the kernel queues: the event
    // of the repository made last is lost, and only the overflow tells.
    let limit: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(16_384);
    let noise = s.ws.join("noise");
    fs::create_dir(&noise).unwrap();
    for i in 0..limit + 16 {
        fs::File::create(s.ws.join(format!("n{i}"))).unwrap();
    }
    plant_repository(&s.root.join("a"));
    assert_judged(&s, "a repository made after the queue overflowed");
}

#[test]
fn a_repository_mounted_over_a_watched_parent_is_judged() {
    let s = Scratch::new();
    let evil = s.root.join("evil");
    plant_repository(&evil);
    fs::create_dir_all(evil.join("ws")).unwrap();
    s.watched();
    // A bind mount changes what the path names without any event on the
    // directories: only the mount table's notification tells.
    let a = s.root.join("a");
    let mounted = Command::new("mount")
        .arg("--bind")
        .arg(&evil)
        .arg(&a)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        eprintln!(
            "SKIPPED a_repository_mounted_over_a_watched_parent_is_judged: cannot mount here"
        );
        return;
    }
    let risk = s.git_status_risk();
    let _ = Command::new("umount").arg(&a).status();
    assert!(
        risk >= Risk::Execute,
        "a bind mount over the parent: `git status` judged {risk}"
    );
}

#[test]
fn a_dangling_dotgit_symlink_whose_target_is_made_later_is_judged() {
    let s = Scratch::new();
    // A `.git` symlink to nothing: git finds no repository through it, and
    // the workspace holds neither `.git` nor `HEAD` that git could use.
    let evil = s.root.join("evil");
    std::os::unix::fs::symlink(evil.join(".git"), s.ws.join(".git")).unwrap();
    s.watched();
    // Making the target changes nothing in the workspace (its stamp stays
    // the same, with or without the watch), but git now follows the link
    // into a repository.
    plant_repository(&evil);
    assert_judged(&s, "the target of a dangling `.git` symlink made");
}

/// The inode numbers this process' inotify instances watch (from
/// `/proc/self/fdinfo`).
fn watched_inodes() -> std::collections::HashSet<u64> {
    let mut inodes = std::collections::HashSet::new();
    for fd in fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let is_inotify =
            fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == "anon_inode:inotify");
        if !is_inotify {
            continue;
        }
        let Ok(info) = fs::read_to_string(Path::new("/proc/self/fdinfo").join(fd.file_name()))
        else {
            continue;
        };
        for line in info.lines().filter(|l| l.starts_with("inotify ")) {
            let ino = line
                .split_whitespace()
                .find_map(|f| f.strip_prefix("ino:"))
                .and_then(|h| u64::from_str_radix(h, 16).ok());
            inodes.extend(ino);
        }
    }
    inodes
}

#[test]
fn a_workspace_swapped_while_its_watch_is_placed_is_judged() {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let s = Scratch::new();
    let other = s.root.join("a/other");
    fs::create_dir(&other).unwrap();
    s.watched();
    // Another process keeps exchanging the workspace with a sibling, while
    // the gate decides: a watch placed on the one while the `lstat` that
    // follows sees the other leaves the watch on a directory the path no
    // longer names, and the path's directory unwatched.
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    let (ws, sibling) = (c(&s.ws), c(&other));
    let mut stale = false;
    // A round wins about one time in thirty here: enough rounds that the
    // old code loses all but never.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(8);
    let mut round = 0;
    while std::time::Instant::now() < deadline {
        round += 1;
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let stop = Arc::clone(&stop);
            let (ws, sibling) = (ws.clone(), sibling.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    // SAFETY: two valid NUL-terminated paths.
                    unsafe {
                        libc::renameat2(
                            libc::AT_FDCWD,
                            ws.as_ptr(),
                            libc::AT_FDCWD,
                            sibling.as_ptr(),
                            libc::RENAME_EXCHANGE,
                        );
                    }
                }
            })
        };
        for _ in 0..100 {
            let _ = s.git_status_risk();
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        // Quiet now: decide until the watch answers for the workspace again.
        for _ in 0..10 {
            let _ = s.git_status_risk();
            if dir_watch_answers_for(&s.ws) {
                break;
            }
        }
        let ino = fs::symlink_metadata(&s.ws).unwrap().ino();
        if dir_watch_answers_for(&s.ws) && !watched_inodes().contains(&ino) {
            eprintln!("round {round}: the watch answers for a directory it does not watch");
            stale = true;
            break;
        }
    }
    if !stale {
        eprintln!("the watch stayed on the workspace's own directory ({round} rounds)");
    }
    // The attack's end either way: the workspace's stamp cached as "no
    // repository", then a repository made in it.
    wait_until_settled(&s.ws);
    for _ in 0..3 {
        assert_eq!(s.git_status_risk(), Risk::Read);
    }
    plant_repository(&s.ws);
    assert_judged(&s, "the workspace swapped while its watch was placed");
}
