//! A git command judged `read` from the configuration git would read, in a
//! command line that also writes files: what it writes may be that
//! configuration.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use std::fs;
use std::path::Path;

use fixture::{Fixture, summary};
use toolgate_core::{Effect, Risk};
use toolgate_policy::config::Mode;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A directory `r` that is a git directory except for its `config`: a
/// `HEAD`, `refs/` and `objects/` borrowing the workspace's objects (what a
/// model makes with the write tool, which accept-edits allows).
fn plant_git_dir_without_config(fx: &Fixture) {
    let head = fs::read_to_string(fx.ws.join(".git/HEAD")).unwrap();
    write(&fx.ws.join("r/HEAD"), &head);
    write(&fx.ws.join("r/refs/heads/.keep"), "");
    write(
        &fx.ws.join("r/objects/info/alternates"),
        &format!("{}\n", fx.ws.join(".git/objects").display()),
    );
}

/// A git command is judged `read` from the configuration git would read when
/// the call is judged. A write earlier in the same command line (a redirect,
/// which accept-edits allows) can create that configuration (a repository's
/// `config`, an include target, a whole git directory) before git reads it:
/// `diff.external` then runs a program. The git command is judged as one
/// that may run a program.
#[test]
fn git_reads_after_a_write_in_the_same_line_may_run_what_it_wrote() {
    let fx = Fixture::new();
    plant_git_dir_without_config(&fx);
    let config = r#"printf '[core]\n\tbare = false\n\tworktree = ..\n[diff]\n\texternal = touch pwned\n' > r/config"#;
    let accept = fx.policy(Some(Mode::AcceptEdits));
    for command in [
        format!("{config} && git --git-dir=r diff HEAD"),
        format!("{config}; GIT_DIR=r git diff HEAD"),
        format!("{config}; cd r && git diff HEAD"),
        format!("git --git-dir=r diff HEAD | cat; {config}"),
        format!("for i in 1 2; do git --git-dir=r diff HEAD; {config}; done"),
        "echo 'ref: refs/heads/main' > r/HEAD; git --git-dir=r log".to_string(),
        "git --git-dir=r diff HEAD >> r/config; git --git-dir=r diff HEAD".to_string(),
    ] {
        let parts = fx.analyze(&command);
        let git = parts
            .iter()
            .filter(|p| p.request.action == "bash" && p.request.resource.contains("git "))
            .collect::<Vec<_>>();
        assert!(!git.is_empty(), "{command:?}:\n  {}", summary(&parts));
        for p in git {
            assert!(
                p.request.risk >= Risk::Execute,
                "{command:?}: git judged {} after a write in the same line:\n  {}",
                p.request.risk,
                summary(&parts)
            );
        }
        assert_eq!(
            fx.bash_decision(&accept, &command),
            Effect::Ask,
            "{command:?} in accept-edits"
        );
    }
}

/// Reads around git that write nothing stay reads: the survey still holds.
#[test]
fn git_reads_with_only_reads_around_them_stay_reads() {
    let fx = Fixture::new();
    let accept = fx.policy(Some(Mode::AcceptEdits));
    for command in [
        "git status",
        "git status > /dev/null 2>&1; git diff | head -5",
        "git log --oneline | grep fix; echo done",
        "cd src && git diff HEAD -- main.rs",
    ] {
        assert_eq!(
            fx.bash_decision(&accept, command),
            Effect::Allow,
            "{command:?}:\n  {}",
            summary(&fx.analyze(command))
        );
    }
}
