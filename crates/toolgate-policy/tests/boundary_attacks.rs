//! Attacks on the gate's own boundary: what the repository or the model
//! writes must not loosen what the gate decided. One test per class.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::intent;

use std::fs;
use std::path::Path;

use serde_json::json;
use toolgate_core::{Effect, Location};
use toolgate_policy::check::check;
use toolgate_policy::config::Mode;
use toolgate_policy::policy::{NoApprovals, Policy, PolicySources};
use toolgate_policy::trust::{TrustStore, config_key, sha256_hex};

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A project's policy sources over `root`, with the trust records in `data`.
fn project_sources(root: &Path, home: &Path, data: &Path) -> PolicySources {
    let mut s = PolicySources::bare(root, home);
    s.project = Some(root.join(".toolgate/config.toml"));
    s.trust = Some(data.join("trusted-projects.json"));
    s.data_dir = Some(data.to_path_buf());
    s
}

/// Trust is consent to one file as the policy of one project. A repository
/// whose `.toolgate` directory (or `config.toml`) is a symbolic link to the
/// trusted config of another project reads the same bytes, but what they
/// allow must not apply to it: its own (untrusted) config only tightens.
#[test]
fn a_config_linked_from_another_trusted_project_is_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (a, b, c, home, data) = (
        base.join("a"),
        base.join("b"),
        base.join("c"),
        base.join("home"),
        base.join("data"),
    );
    for d in [&a, &b, &c, &home] {
        fs::create_dir_all(d).unwrap();
    }
    let text = "[permission.bash]\n\"make *\" = \"allow\"\n";
    write(&a.join(".toolgate/config.toml"), text);
    let store = TrustStore::new(data.join("trusted-projects.json"));
    let key = config_key(&a.join(".toolgate/config.toml"));
    store.trust(&key, &sha256_hex(text.as_bytes())).unwrap();
    // The trusted project itself.
    let policy = Policy::load(&project_sources(&a, &home, &data)).unwrap();
    assert!(policy.project().unwrap().trusted);
    let make = |root: &Path, policy: &Policy| {
        let loc = Location::new(root).unwrap();
        let requests =
            intent::builtin_intent("bash", &json!({ "command": "make all" }), &loc).unwrap();
        check(policy, requests, &loc, &NoApprovals).decision
    };
    assert_eq!(make(&a, &policy), Effect::Allow);
    // `b/.toolgate` -> `a/.toolgate`, `c/.toolgate/config.toml` -> a's file.
    std::os::unix::fs::symlink(a.join(".toolgate"), b.join(".toolgate")).unwrap();
    fs::create_dir_all(c.join(".toolgate")).unwrap();
    std::os::unix::fs::symlink(
        a.join(".toolgate/config.toml"),
        c.join(".toolgate/config.toml"),
    )
    .unwrap();
    for other in [&b, &c] {
        let policy = Policy::load(&project_sources(other, &home, &data)).unwrap();
        assert!(
            !policy.project().unwrap().trusted,
            "{}: trusted through a link to {}",
            other.display(),
            a.display()
        );
        assert_eq!(make(other, &policy), Effect::Ask, "{}", other.display());
    }
}

/// A protected name that is a symbolic link (or a `.git` gitfile) names
/// the place its program really reads: a `.toolgate` linked to `docs/tg`
/// makes `docs/tg/config.toml` the project's policy, an `.envrc` linked to
/// `tools/envrc` makes that file what direnv runs, `.git` holding
/// `gitdir: .bare` makes `.bare` the repository, and `~/.bashrc` linked
/// into a dotfiles repository makes that file what every shell runs. A
/// write there, by either name, is a write to the protected place: never
/// allowed by accept-edits, and denied for toolgate's own config.
#[test]
fn a_protected_name_linked_elsewhere_protects_where_it_leads() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (ws, home) = (base.join("ws"), base.join("home"));
    write(
        &ws.join("docs/tg/config.toml"),
        "[permission.bash]\n\"git push *\" = \"deny\"\n",
    );
    write(&ws.join("tools/envrc"), "export A=1\n");
    write(&ws.join("editor/settings.json"), "{}\n");
    write(&ws.join(".bare/HEAD"), "ref: refs/heads/main\n");
    write(&ws.join(".bare/config"), "[core]\n");
    write(&ws.join(".git"), "gitdir: ./.bare\n");
    write(&ws.join("dotfiles/bashrc"), "# rc\n");
    fs::create_dir_all(&home).unwrap();
    let link = |target: &str, name: &Path| std::os::unix::fs::symlink(target, name).unwrap();
    link("docs/tg", &ws.join(".toolgate"));
    link("tools/envrc", &ws.join(".envrc"));
    link("editor", &ws.join(".vscode"));
    link(
        ws.join("dotfiles/bashrc").to_str().unwrap(),
        &home.join(".bashrc"),
    );
    let loc = Location::new(&ws).unwrap();
    let policy = Policy::from_texts(&ws, &home, &[], Some(Mode::AcceptEdits)).unwrap();
    let decide = |tool: &str, input: serde_json::Value| {
        let requests = intent::builtin_intent(tool, &input, &loc).unwrap();
        check(&policy, requests, &loc, &NoApprovals).decision
    };
    for (path, want) in [
        (".toolgate/config.toml", Effect::Deny),
        ("docs/tg/config.toml", Effect::Deny),
        ("docs/tg/other.toml", Effect::Deny),
        ("tools/envrc", Effect::Ask),
        (".envrc", Effect::Ask),
        ("editor/settings.json", Effect::Ask),
        (".bare/config", Effect::Ask),
        (".bare/hooks/pre-commit", Effect::Ask),
        ("dotfiles/bashrc", Effect::Ask),
    ] {
        let got = decide("write", json!({ "path": path, "content": "x" }));
        assert_eq!(got, want, "write {path}");
        let redirect = decide("bash", json!({ "command": format!("echo x >> {path}") }));
        assert_eq!(redirect, want, "echo x >> {path}");
    }
    // Their neighbours are ordinary files.
    for path in ["docs/readme.md", "tools/other", "editor/extensions.json"] {
        let got = decide("write", json!({ "path": path, "content": "x" }));
        assert_eq!(got, Effect::Allow, "write {path}");
    }
}

/// `[approvals] channels` is an order: the first channel asks alone until
/// `escalate_after`, and questions go to one channel after another. An
/// untrusted project that keeps every channel but moves one behind another
/// asks that person later, which it may not.
#[test]
fn an_untrusted_project_may_not_reorder_approval_channels_to_ask_someone_later() {
    use toolgate_policy::config::ApprovalChannelName::{Mcp, Terminal, Web};
    use toolgate_policy::rules::Layer;
    let root = Path::new("/ws");
    let home = Path::new("/home/u");
    let user = "[approvals]\nchannels = [\"terminal\", \"mcp\"]\nescalate_after = 30\n";
    for (project, want) in [
        (
            "[approvals]\nchannels = [\"mcp\", \"terminal\"]\n",
            vec![Terminal, Mcp],
        ),
        (
            "[approvals]\nchannels = [\"web\", \"terminal\", \"mcp\"]\n",
            vec![Terminal, Mcp],
        ),
        // Asking one more person, after the others, tightens.
        (
            "[approvals]\nchannels = [\"terminal\", \"mcp\", \"web\"]\n",
            vec![Terminal, Mcp, Web],
        ),
    ] {
        let p = Policy::from_texts_untrusted(
            root,
            home,
            &[
                ("user.toml", Layer::User, user),
                ("project.toml", Layer::Project, project),
            ],
            None,
        )
        .unwrap();
        assert_eq!(p.approval_channels(None), want, "{project}");
    }
}

/// Mode `auto` where no sandbox backs it is `default`. An untrusted project
/// that sets `mode = "accept-edits"` ranks below `auto`, but allows the
/// writes `default` asks: its mode may not lower a decision either.
#[test]
fn an_untrusted_project_mode_never_lowers_an_auto_the_sandbox_does_not_back() {
    use toolgate_policy::rules::Layer;
    let dir = tempfile::tempdir().unwrap();
    let ws = fs::canonicalize(dir.path()).unwrap();
    let home = ws.join("home");
    let loc = Location::new(&ws).unwrap();
    for user in [
        "mode = \"auto\"\n",
        "mode = \"auto\"\n[sandbox]\nmode = \"off\"\n",
    ] {
        let p = Policy::from_texts_untrusted(
            &ws,
            &home,
            &[
                ("user.toml", Layer::User, user),
                ("project.toml", Layer::Project, "mode = \"accept-edits\"\n"),
            ],
            None,
        )
        .unwrap();
        let requests = intent::builtin_intent(
            "write",
            &json!({ "path": "src/x.rs", "content": "x" }),
            &loc,
        )
        .unwrap();
        let outcome = check(&p, requests, &loc, &NoApprovals);
        assert_eq!(outcome.decision, Effect::Ask, "{user}: {}", outcome.reason);
        assert!(
            outcome
                .ignored
                .iter()
                .any(|i| i.why.contains("mode = \"accept-edits\"")),
            "{user}: {:?}",
            outcome.ignored
        );
    }
}

/// `$HOME` reached through a symbolic link (`/home/u` -> `/data/u`): a
/// judged path is canonical, so the home directory's protected files are
/// found under the real directory too, existing or not. An agent working in
/// its home directory may not rewrite `~/.bashrc` in accept-edits.
#[test]
fn a_home_reached_through_a_link_keeps_its_protected_files() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let real = base.join("data/u");
    fs::create_dir_all(&real).unwrap();
    write(&real.join(".bashrc"), "# rc\n");
    let home = base.join("home-u");
    std::os::unix::fs::symlink(&real, &home).unwrap();
    let loc = Location::new(&home).unwrap();
    let policy = Policy::from_texts(&home, &home, &[], Some(Mode::AcceptEdits)).unwrap();
    for path in [
        ".bashrc",
        ".zshenv",
        ".gitconfig",
        ".config/git/config",
        ".profile",
    ] {
        for (tool, input) in [
            ("write", json!({ "path": path, "content": "x" })),
            ("bash", json!({ "command": format!("echo x >> ~/{path}") })),
        ] {
            let requests = intent::builtin_intent(tool, &input, &loc).unwrap();
            let got = check(&policy, requests, &loc, &NoApprovals).decision;
            assert_eq!(got, Effect::Ask, "{tool} {input}");
        }
    }
    let requests = intent::builtin_intent(
        "write",
        &json!({ "path": "notes.txt", "content": "x" }),
        &loc,
    )
    .unwrap();
    assert_eq!(
        check(&policy, requests, &loc, &NoApprovals).decision,
        Effect::Allow
    );
}

/// A repository can ship `.toolgate/config.toml` as a symbolic link to
/// `/dev/zero` (or make it a FIFO): reading it never ends, and toolgate
/// would hang on every start. A project config that is no regular file is
/// broken: reported and ignored, at once.
#[test]
fn a_project_config_that_is_no_regular_file_is_ignored_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let home = base.join("home");
    fs::create_dir_all(&home).unwrap();
    let zero = base.join("zero");
    fs::create_dir_all(zero.join(".toolgate")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", zero.join(".toolgate/config.toml")).unwrap();
    let fifo = base.join("fifo");
    fs::create_dir_all(fifo.join(".toolgate")).unwrap();
    let name = std::ffi::CString::new(
        fifo.join(".toolgate/config.toml")
            .to_str()
            .unwrap()
            .as_bytes(),
    )
    .unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    for root in [zero, fifo] {
        let sources = project_sources(&root, &home, &base.join("data"));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(Policy::load(&sources).map(|p| p.project_error().is_some()));
        });
        let broken = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("{}: loading the policy hangs", root.display()));
        assert!(
            broken.unwrap(),
            "{}: not reported as broken",
            root.display()
        );
    }
}

/// A file of the location that is a hard link to a protected file (the
/// user's `~/.bashrc`, the repository's `.git/config`) is that file: a
/// redirect appends to it in place, and the sandbox's read-only view of the
/// protected name does not cover the other name. A write to it is a write to
/// the protected file.
#[test]
fn a_hard_link_to_a_protected_file_is_protected() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (ws, home) = (base.join("ws"), base.join("home"));
    write(&home.join(".bashrc"), "# rc\n");
    write(&ws.join(".git/config"), "[core]\n");
    write(&ws.join(".git/hooks/pre-commit"), "#!/bin/sh\n");
    write(&ws.join("src/shared.txt"), "x\n");
    fs::hard_link(home.join(".bashrc"), ws.join("dotfiles-bashrc")).unwrap();
    fs::hard_link(ws.join(".git/config"), ws.join("gitcfg")).unwrap();
    fs::hard_link(ws.join(".git/hooks/pre-commit"), ws.join("hook")).unwrap();
    fs::hard_link(ws.join("src/shared.txt"), ws.join("shared-link.txt")).unwrap();
    let loc = Location::new(&ws).unwrap();
    let policy = Policy::from_texts(&ws, &home, &[], Some(Mode::AcceptEdits)).unwrap();
    let decide = |tool: &str, input: serde_json::Value| {
        let requests = intent::builtin_intent(tool, &input, &loc).unwrap();
        check(&policy, requests, &loc, &NoApprovals).decision
    };
    for path in ["dotfiles-bashrc", "gitcfg", "hook"] {
        assert_eq!(
            decide("bash", json!({ "command": format!("echo x >> {path}") })),
            Effect::Ask,
            "echo x >> {path}"
        );
        assert_eq!(
            decide("write", json!({ "path": path, "content": "x" })),
            Effect::Ask,
            "write {path}"
        );
    }
    assert_eq!(
        decide("bash", json!({ "command": "echo x >> shared-link.txt" })),
        Effect::Allow
    );
}

/// The same below the root: `sub/.envrc -> ../tools/envrc` is what direnv
/// runs in `sub`, and `pkg/.git` holding `gitdir: ../pkg.git` makes
/// `pkg.git` that repository. Writing either name is asked.
#[test]
fn a_nested_protected_name_linked_elsewhere_protects_where_it_leads() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (ws, home) = (base.join("ws"), base.join("home"));
    write(&ws.join("tools/envrc"), "export A=1\n");
    write(&ws.join("sub/readme.md"), "\n");
    write(&ws.join("a/b/c/claude-settings/settings.json"), "{}\n");
    write(&ws.join("pkg.git/HEAD"), "ref: refs/heads/main\n");
    write(&ws.join("pkg/.git"), "gitdir: ../pkg.git\n");
    fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink("../tools/envrc", ws.join("sub/.envrc")).unwrap();
    std::os::unix::fs::symlink("claude-settings", ws.join("a/b/c/.claude")).unwrap();
    let loc = Location::new(&ws).unwrap();
    let policy = Policy::from_texts(&ws, &home, &[], Some(Mode::AcceptEdits)).unwrap();
    let decide = |tool: &str, input: serde_json::Value| {
        let requests = intent::builtin_intent(tool, &input, &loc).unwrap();
        check(&policy, requests, &loc, &NoApprovals).decision
    };
    for path in [
        "sub/.envrc",
        "tools/envrc",
        "a/b/c/claude-settings/settings.json",
        "pkg.git/config",
        "pkg.git/hooks/pre-commit",
    ] {
        assert_eq!(
            decide("write", json!({ "path": path, "content": "x" })),
            Effect::Ask,
            "write {path}"
        );
        assert_eq!(
            decide("bash", json!({ "command": format!("echo x >> {path}") })),
            Effect::Ask,
            "echo x >> {path}"
        );
    }
    assert_eq!(
        decide("write", json!({ "path": "sub/readme.md", "content": "x" })),
        Effect::Allow
    );
}

/// bash expands an unquoted glob in a redirect target: `>> .g?t/config`
/// appends to `.git/config` (its one match). Such a target is only known
/// when the command runs: asked, never allowed by accept-edits.
#[test]
fn a_globbed_redirect_target_is_not_allowed_by_accept_edits() {
    let dir = tempfile::tempdir().unwrap();
    let ws = fs::canonicalize(dir.path()).unwrap();
    write(&ws.join(".git/config"), "[core]\n");
    write(&ws.join(".envrc"), "\n");
    let loc = Location::new(&ws).unwrap();
    let policy = Policy::from_texts(&ws, &ws.join("home"), &[], Some(Mode::AcceptEdits)).unwrap();
    for command in [
        "echo x >> .g?t/config",
        "echo x >> .gi[t]/config",
        "echo x >> .git/conf?g",
        "echo x > .envr*",
        "echo x >| ./.[e]nvrc",
    ] {
        let requests =
            intent::builtin_intent("bash", &json!({ "command": command }), &loc).unwrap();
        let got = check(&policy, requests, &loc, &NoApprovals).decision;
        assert_eq!(got, Effect::Ask, "{command}");
    }
    // Quoted, the pattern is a name.
    let requests =
        intent::builtin_intent("bash", &json!({ "command": "echo x > 'notes?.txt'" }), &loc)
            .unwrap();
    assert_eq!(
        check(&policy, requests, &loc, &NoApprovals).decision,
        Effect::Allow
    );
}

/// A written path whose directory part is a glob (`sed -i … .g?t/config`)
/// lands where only the run knows: a rule naming the command (`sed *`) and
/// accept-edits may not allow it, as they may not allow `.git/config`.
#[test]
fn a_globbed_directory_in_a_written_path_is_an_unknown_target() {
    use toolgate_policy::rules::Layer;
    let dir = tempfile::tempdir().unwrap();
    let ws = fs::canonicalize(dir.path()).unwrap();
    write(&ws.join(".git/config"), "[core]\n");
    write(&ws.join(".git/hooks/pre-commit.sample"), "\n");
    write(&ws.join("x"), "\n");
    let loc = Location::new(&ws).unwrap();
    let user =
        "[permission.bash]\n\"sed *\" = \"allow\"\n\"tee *\" = \"allow\"\n\"cp *\" = \"allow\"\n";
    let policy = Policy::from_texts(
        &ws,
        &ws.join("home"),
        &[("user.toml", Layer::User, user)],
        Some(Mode::AcceptEdits),
    )
    .unwrap();
    for command in [
        "sed -i s/a/b/ .git/config",
        "sed -i s/a/b/ .g?t/config",
        "echo x | tee -a .g?t/config",
        "cp x .gi[t]/hooks/pre-commit",
        "cp x */hooks/pre-commit",
    ] {
        let requests =
            intent::builtin_intent("bash", &json!({ "command": command }), &loc).unwrap();
        let got = check(&policy, requests, &loc, &NoApprovals).decision;
        assert_eq!(got, Effect::Ask, "{command}");
    }
    let requests =
        intent::builtin_intent("bash", &json!({ "command": "sed -i s/a/b/ x" }), &loc).unwrap();
    assert_eq!(
        check(&policy, requests, &loc, &NoApprovals).decision,
        Effect::Allow
    );
}

/// A command's operand that it writes, outside the location, is judged like
/// a redirect to the same path: `echo x > DATA/state.db` was denied (the
/// data directory is toolgate's own), but `cp`, `tee`, `mv`, `dd of=` and
/// `install` writing there were only asked as a directory outside the
/// location, so one approval of "a command outside" could rewrite saved
/// approvals, the ask queue or the audit log.
#[test]
fn a_command_writing_toolgates_own_files_outside_the_location_is_denied_like_a_redirect() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (ws, home, data) = (base.join("ws"), base.join("home"), base.join("data"));
    for d in [&ws, &home, &data] {
        fs::create_dir_all(d).unwrap();
    }
    write(&ws.join("a.db"), "x");
    let policy = Policy::load(&project_sources(&ws, &home, &data)).unwrap();
    let loc = Location::new(&ws).unwrap();
    let decide = |command: String| {
        let requests =
            intent::builtin_intent("bash", &json!({ "command": command }), &loc).unwrap();
        check(&policy, requests, &loc, &NoApprovals).decision
    };
    let d = data.display();
    assert_eq!(decide(format!("echo x > {d}/state.db")), Effect::Deny);
    for command in [
        format!("cp a.db {d}/state.db"),
        format!("cp a.db {d}/asks.db"),
        format!("tee {d}/state.db < a.db"),
        format!("mv a.db {d}/audit.db"),
        format!("dd if=a.db of={d}/state.db"),
        format!("install a.db {d}/state.db"),
        format!("cp -t {d} a.db"),
    ] {
        assert_eq!(decide(command.clone()), Effect::Deny, "{command}");
    }
}
