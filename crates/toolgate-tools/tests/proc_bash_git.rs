//! bash's second wall against a repository's git configuration: a real
//! repository with programs planted in `.git/config`, real `git` commands run
//! through the real bash tool. Each attack is first shown to work without the
//! wall (plain `git` from this process), so the test cannot pass vacuously.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::Env;
use toolgate_core::Tool;
use toolgate_tools::process_tools::{BashInput, BashOutput, BashTool, GIT_FORCED_CONFIG};

fn input(command: &str) -> BashInput {
    BashInput {
        command: command.into(),
        workdir: None,
        timeout_ms: None,
        description: None,
        unsandboxed: false,
        reason: None,
    }
}

async fn bash(env: &Env, command: &str) -> BashOutput {
    BashTool::new(&env.config)
        .execute(input(command), env.ctx())
        .await
        .unwrap()
}

/// Plain git in `dir`, as a person's shell would run it (no wall).
fn plain_git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_CONFIG_COUNT")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap()
}

/// A repository with one commit and one modified file.
fn repo(root: &Path) {
    assert!(plain_git(root, &["init", "-q"]).status.success());
    std::fs::write(root.join("f"), "a\n").unwrap();
    assert!(plain_git(root, &["add", "f"]).status.success());
    assert!(plain_git(root, &["commit", "-qm", "one"]).status.success());
    std::fs::write(root.join("f"), "a\nb\n").unwrap();
}

/// A marker path outside the repository that nothing else creates.
fn marker(env: &Env, what: &str) -> PathBuf {
    env.data.path().join(format!("marker-{what}"))
}

fn plant(root: &Path, text: &str) {
    let config = root.join(".git/config");
    let mut c = std::fs::read_to_string(&config).unwrap();
    c.push_str(text);
    std::fs::write(config, c).unwrap();
}

#[tokio::test]
async fn planted_fsmonitor_does_not_run_under_git_status() {
    let env = Env::new();
    let root = env.root();
    repo(&root);
    let m = marker(&env, "fsmonitor");
    plant(
        &root,
        &format!("[core]\n\tfsmonitor = \"touch {}\"\n", m.display()),
    );
    // Without the wall the planted program runs.
    plain_git(&root, &["status", "--short"]);
    assert!(m.exists(), "the attack must work without the wall");
    std::fs::remove_file(&m).unwrap();

    for command in [
        "git status",
        "git status --short",
        "git diff --stat",
        "cd . && git -C . status -sb",
    ] {
        let out = bash(&env, command).await;
        assert_eq!(out.exit_code, Some(0), "{command}: {}", out.output);
        assert!(!m.exists(), "{command} ran the planted fsmonitor");
    }
    let out = bash(&env, "git status --short").await;
    assert!(out.output.contains(" M f"), "{}", out.output);
}

#[tokio::test]
async fn planted_ext_transport_does_not_run() {
    let env = Env::new();
    let root = env.root();
    repo(&root);
    let m = marker(&env, "ext");
    plant(&root, "[protocol \"ext\"]\n\tallow = always\n");
    let url = format!("ext::touch {}", m.display());
    plain_git(&root, &["ls-remote", &url]);
    assert!(m.exists(), "the attack must work without the wall");
    std::fs::remove_file(&m).unwrap();

    let out = bash(&env, &format!("git ls-remote '{url}'")).await;
    assert!(!m.exists(), "{}", out.output);
    assert!(out.output.contains("not allowed"), "{}", out.output);
}

#[tokio::test]
async fn pager_and_signature_settings_are_forced() {
    let env = Env::new();
    let root = env.root();
    repo(&root);
    plant(
        &root,
        "[core]\n\tpager = evil-pager\n[log]\n\tshowSignature = true\n",
    );
    let out = bash(
        &env,
        "git config core.fsmonitor; git config core.pager; git config log.showsignature; \
         git var GIT_PAGER; echo prompt=$GIT_TERMINAL_PROMPT",
    )
    .await;
    assert_eq!(
        out.output, "false\ncat\nfalse\ncat\nprompt=0\n",
        "{}",
        out.output
    );
}

#[tokio::test]
async fn ordinary_git_work_is_unchanged() {
    let env = Env::new();
    let root = env.root();
    repo(&root);
    // A commit hook is the user's workflow: it still runs.
    let hook = root.join(".git/hooks/pre-commit");
    let m = marker(&env, "hook");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", m.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = bash(
        &env,
        "git -c user.name=t -c user.email=t@t commit -qam two && git log --oneline | wc -l && git diff HEAD~1 --stat",
    )
    .await;
    assert_eq!(out.exit_code, Some(0), "{}", out.output);
    assert!(out.output.starts_with("2\n"), "{}", out.output);
    assert!(out.output.contains("1 file changed"), "{}", out.output);
    assert!(m.exists(), "the user's commit hook must still run");
    assert!(
        GIT_FORCED_CONFIG
            .iter()
            .any(|(k, v)| *k == "core.fsmonitor" && *v == "false")
    );
}
