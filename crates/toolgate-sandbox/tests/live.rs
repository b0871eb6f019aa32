//! A long-running confined process's staged writes ([`LiveStaging`]): each
//! settling lands what is accepted by copying, and sets the rest back in
//! the process's own view through the mounted overlay, while the process
//! keeps running. A real bubblewrap sandbox, a real bash process driven a
//! step at a time over its stdin.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use toolgate_sandbox::{ChangeKind, LiveStaging};

use crate::common::{self, Fixture, support};

/// A bash process in the sandbox with staged writes that runs one line of
/// shell per step and answers each with its output and an `END` line.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    live: LiveStaging,
}

impl Server {
    fn start(f: &Fixture) -> Server {
        let mut spec = f.spec();
        spec.stage = Some(f.ws.parent().unwrap().join("stage"));
        let script = "cd \"$WS\"; while IFS= read -r line; do eval \"$line\" 2>&1; echo END; done";
        let mut confined = spec.command(&support(), "bash", ["-c", script]).unwrap();
        let mut child = confined
            .command
            .env("HOME", &f.home)
            .env("WS", &f.ws)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut live = LiveStaging::new(confined.staging.take().unwrap());
        live.attach(child.id()).unwrap();
        Server {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            live,
        }
    }

    /// Runs one line in the sandbox; returns what it printed.
    fn step(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").unwrap();
        let mut out = String::new();
        loop {
            let mut l = String::new();
            assert!(
                self.stdout.read_line(&mut l).unwrap() > 0,
                "the server died"
            );
            if l == "END\n" {
                return out;
            }
            out.push_str(&l);
        }
    }

    /// Lands the changes `accept` says yes to, sets the rest back; returns
    /// the changes as (path relative to the location, kind).
    fn settle(&mut self, f: &Fixture, accept: impl Fn(&str) -> bool) -> Vec<(String, ChangeKind)> {
        let changes = self.live.changes().unwrap();
        let rel = |p: &PathBuf| p.strip_prefix(&f.ws).unwrap().display().to_string();
        let accepted: HashSet<PathBuf> = changes
            .iter()
            .filter(|c| accept(&rel(&c.path)))
            .map(|c| c.path.clone())
            .collect();
        self.live
            .land(&changes, &accepted, Box::new(common::NoJournal))
            .unwrap();
        let failed = self.live.reset(&changes, &accepted);
        assert!(failed.is_empty(), "{failed:?}");
        changes.iter().map(|c| (rel(&c.path), c.kind)).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_refused_hook_is_gone_from_the_servers_view_and_an_accepted_file_lands() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.ws.join(".git/hooks")).unwrap();
    f.write("kept.txt", "the person's\n");
    let mut s = Server::start(&f);
    s.step("echo hi > notes.txt; echo evil > .git/hooks/pre-commit; echo mine > kept.txt");
    assert!(!f.ws.join("notes.txt").exists(), "staged, not written");
    let changes = s.settle(&f, |p| p == "notes.txt");
    assert_eq!(
        changes,
        [
            (".git/hooks/pre-commit".to_string(), ChangeKind::Created),
            ("kept.txt".to_string(), ChangeKind::Modified),
            ("notes.txt".to_string(), ChangeKind::Created),
        ]
    );
    assert_eq!(common::read(&f.ws.join("notes.txt")), "hi\n");
    assert!(!f.ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(common::read(&f.ws.join("kept.txt")), "the person's\n");
    // The server sees what the location holds: its landed file, not its
    // refused ones.
    let seen = s.step("cat notes.txt; ls .git/hooks; cat kept.txt");
    assert_eq!(seen, "hi\nthe person's\n");
    // Settled: nothing to judge again.
    assert!(s.live.changes().unwrap().is_empty());
    // It writes the landed file again: only that is a change.
    s.step("echo again >> notes.txt");
    assert_eq!(
        s.settle(&f, |_| true),
        [("notes.txt".to_string(), ChangeKind::Modified)]
    );
    assert_eq!(common::read(&f.ws.join("notes.txt")), "hi\nagain\n");
}

#[test]
fn a_refused_deletion_and_a_moved_git_directory_are_made_again_in_the_view() {
    let f = Fixture::new();
    f.write(".git/config", "[core]\n");
    f.write(".git/HEAD", "ref: refs/heads/main\n");
    f.write("src/a.rs", "fn a() {}\n");
    let mut s = Server::start(&f);
    s.step("mv .git .git-moved; rm src/a.rs");
    let changes = s.settle(&f, |p| p.starts_with(".git-moved"));
    assert!(
        changes.contains(&(".git/config".to_string(), ChangeKind::Deleted)),
        "{changes:?}"
    );
    assert!(f.ws.join(".git/config").is_file());
    assert!(f.ws.join(".git-moved/config").is_file(), "the copy landed");
    assert!(f.ws.join("src/a.rs").is_file());
    let seen = s.step("cat .git/HEAD src/a.rs");
    assert_eq!(seen, "ref: refs/heads/main\nfn a() {}\n");
    assert!(s.live.changes().unwrap().is_empty());
}

#[test]
fn a_person_s_edit_wins_and_the_server_then_sees_it() {
    let f = Fixture::new();
    f.write("shared.txt", "v1\n");
    let mut s = Server::start(&f);
    s.step("echo server >> shared.txt");
    // Someone else changes the real file before the settling.
    std::thread::sleep(std::time::Duration::from_millis(20));
    f.write("shared.txt", "person\n");
    s.settle(&f, |_| true);
    assert_eq!(common::read(&f.ws.join("shared.txt")), "person\n");
    assert_eq!(s.step("cat shared.txt"), "person\n");
}

#[test]
fn a_link_planted_in_the_view_does_not_lead_the_set_back_out() {
    let f = Fixture::new();
    f.write("d/keep.txt", "k\n");
    std::fs::write(f.outside.join("victim"), "outside\n").unwrap();
    let mut s = Server::start(&f);
    // The server replaces a directory with a link out of the location and
    // makes a refused file below the path.
    s.step(&format!(
        "rm -r d && ln -s {} d && echo planted > evil.txt",
        f.outside.display()
    ));
    s.settle(&f, |_| false);
    assert_eq!(common::read(&f.outside.join("victim")), "outside\n");
    assert!(!f.outside.join("keep.txt").exists());
    assert_eq!(
        s.step("cat d/keep.txt; ls evil.txt 2>/dev/null; echo ."),
        "k\n.\n"
    );
}

#[test]
fn what_a_person_deleted_after_it_landed_is_not_brought_back() {
    let f = Fixture::new();
    let mut s = Server::start(&f);
    s.step("mkdir -p out && echo one > out/a.txt && echo two > b.txt");
    s.settle(&f, |_| true);
    assert!(f.ws.join("out/a.txt").is_file() && f.ws.join("b.txt").is_file());
    // The person removes what landed; the server then writes elsewhere in
    // the directory.
    std::fs::remove_dir_all(f.ws.join("out")).unwrap();
    std::fs::remove_file(f.ws.join("b.txt")).unwrap();
    s.step("echo three > out/c.txt");
    let changes = s.live.changes().unwrap();
    assert!(
        !changes.is_empty() && changes.iter().all(|c| c.changed_outside),
        "{changes:?}"
    );
    s.settle(&f, |_| true);
    assert!(
        !f.ws.join("out").exists(),
        "the deleted directory came back"
    );
    assert!(!f.ws.join("b.txt").exists(), "the deleted file came back");
    // The server sees the location as the person left it.
    assert_eq!(s.step("ls out b.txt 2>/dev/null; echo ."), ".\n");
}

#[test]
fn a_staged_command_spawned_long_after_its_staging_was_prepared_runs() {
    // The staging's sweep waits for the command's child a moment only;
    // a child forked after that still signals it, and must not be killed
    // for it (it was, by SIGPIPE, while the signal was a pipe).
    let f = Fixture::new();
    let mut spec = f.spec();
    spec.stage = Some(f.ws.parent().unwrap().join("stage"));
    let mut confined = spec
        .command(&support(), "bash", ["-c", "echo late > \"$WS/late.txt\""])
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let out = confined
        .command
        .env("WS", &f.ws)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let staging = confined.staging.take().unwrap();
    let changes = staging.changes().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
}
