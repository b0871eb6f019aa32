//! Mode `auto` (decision tree step 4): work the sandbox confines to the
//! location is allowed with source `sandbox`; what leaves it is decided as in
//! `default`; without a sandbox `auto` is `default` (invariant 11).

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::intent;

use intent::builtin_intent;
use serde_json::{Value, json};
use toolgate_core::test_util::TempWorkspace;
use toolgate_core::{DecisionSource, Effect, Location};
use toolgate_policy::check::{CheckOutcome, check};
use toolgate_policy::config::Mode;
use toolgate_policy::policy::{NoApprovals, Policy, PolicySources};
use toolgate_policy::rules::Layer;
use toolgate_policy::trust::TrustStore;

struct Ws {
    _tmp: TempWorkspace,
    loc: Location,
    home: std::path::PathBuf,
}

fn ws() -> Ws {
    let tmp = TempWorkspace::new();
    let (root, home) = (tmp.ws(), tmp.home());
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    tmp.write(root.join("src/a.rs"), "x");
    tmp.write(root.join("a"), "x");
    let loc = Location::new(&root).unwrap();
    Ws {
        _tmp: tmp,
        loc,
        home,
    }
}

fn policy(w: &Ws, mode: Mode, available: bool, texts: &[(&str, Layer, &str)]) -> Policy {
    let mut p = Policy::from_texts(w.loc.root(), &w.home, texts, Some(mode)).unwrap();
    p.set_sandbox_available(available);
    p
}

fn call(w: &Ws, p: &Policy, tool: &str, input: Value) -> CheckOutcome {
    let requests = builtin_intent(tool, &input, &w.loc).unwrap();
    check(p, requests, &w.loc, &NoApprovals)
}

fn bash(w: &Ws, p: &Policy, command: &str) -> CheckOutcome {
    call(w, p, "bash", json!({ "command": command }))
}

/// What a person sees of an answer: decision, source, sandbox.
fn seen(o: &CheckOutcome) -> (Effect, DecisionSource, bool) {
    (o.decision, o.source, o.sandbox)
}

const ROUTINE: &[&str] = &[
    "cargo build",
    "cargo test -p core",
    "make",
    "make test",
    "npm test",
    "git commit -m x",
    "git checkout -b feature",
    "python3 -m pytest",
    "go test ./...",
    "cargo build 2>&1 | tail -n 20",
];

const LEAVES_THE_SANDBOX: &[&str] = &[
    "git push",
    "git push origin main",
    "curl https://example.com",
    "rm -rf src",
    "cat ~/.ssh/id_rsa",
    "echo x > .git/hooks/pre-commit",
    "cp a /tmp/x",
    "sudo make install",
];

#[test]
fn routine_builds_and_tests_run_in_the_sandbox_without_asking() {
    let w = ws();
    let auto = policy(&w, Mode::Auto, true, &[]);
    for cmd in ROUTINE {
        let o = bash(&w, &auto, cmd);
        assert_eq!(
            seen(&o),
            (Effect::Allow, DecisionSource::Sandbox, true),
            "{cmd}: {o:?}"
        );
        assert!(o.reason.contains("sandbox"), "{cmd}: {}", o.reason);
    }
}

#[test]
fn network_destructive_credentials_protected_and_outside_are_decided_as_in_default() {
    let w = ws();
    let auto = policy(&w, Mode::Auto, true, &[]);
    let default = policy(&w, Mode::Default, true, &[]);
    for cmd in LEAVES_THE_SANDBOX {
        let a = bash(&w, &auto, cmd);
        let d = bash(&w, &default, cmd);
        assert_ne!(a.decision, Effect::Allow, "{cmd}: {a:?}");
        assert_eq!(
            (a.decision, a.source, a.sandbox),
            (d.decision, d.source, false),
            "{cmd}"
        );
    }
}

#[test]
fn opaque_code_runs_in_the_sandbox_and_no_approval_is_saved_for_it() {
    let w = ws();
    let auto = policy(&w, Mode::Auto, true, &[]);
    let requests =
        builtin_intent("bash", &json!({"command": "python3 -c 'print(1)'"}), &w.loc).unwrap();
    let judged = toolgate_policy::check::judge_call(&auto, requests, &w.loc, &NoApprovals);
    let opaque: Vec<_> = judged.iter().filter(|j| j.expanded.opaque).collect();
    assert!(!opaque.is_empty(), "interpreter code is opaque: {judged:?}");
    for j in opaque {
        assert_eq!(j.verdict.decision.effect, Effect::Allow);
        assert_eq!(j.verdict.decision.source, DecisionSource::Sandbox);
        assert!(!j.verdict.reusable, "no approval is saved for opaque code");
        assert_eq!(j.expanded.request.save_pattern, None);
    }
    // Opaque code that also names the network is still asked.
    let o = bash(
        &w,
        &auto,
        "python3 -c 'print(1)' && curl https://example.com",
    );
    assert_eq!(o.decision, Effect::Ask, "{o:?}");
}

#[test]
fn without_a_sandbox_auto_is_default() {
    let w = ws();
    let unavailable = policy(&w, Mode::Auto, false, &[]);
    let off = policy(
        &w,
        Mode::Auto,
        true,
        &[("user.toml", Layer::User, "[sandbox]\nmode = \"off\"\n")],
    );
    let default = policy(&w, Mode::Default, true, &[]);
    for p in [&unavailable, &off] {
        assert!(!p.auto_confined());
        for cmd in ROUTINE.iter().chain(LEAVES_THE_SANDBOX) {
            assert_eq!(
                seen(&bash(&w, p, cmd)),
                seen(&bash(&w, &default, cmd)),
                "{cmd}"
            );
        }
        let src = w.loc.root().join("src/b.rs").display().to_string();
        let write = call(&w, p, "write", json!({"path": src, "content": "x"}));
        assert_eq!(
            write.decision,
            Effect::Ask,
            "file writes are asked as in default"
        );
        assert!(!write.sandbox);
    }
}

#[test]
fn file_tool_writes_in_auto_follow_accept_edits() {
    let w = ws();
    let auto = policy(&w, Mode::Auto, true, &[]);
    let edits = policy(&w, Mode::AcceptEdits, true, &[]);
    let root = w.loc.root().display().to_string();
    for path in [
        format!("{root}/src/b.rs"),
        format!("{root}/.git/hooks/pre-commit"),
        format!("{root}/.git/config"),
        format!("{root}/.toolgate/config.toml"),
        "/tmp/outside.txt".to_string(),
        format!("{}/.bashrc", w.home.display()),
    ] {
        let input = json!({"path": path, "content": "x"});
        let a = call(&w, &auto, "write", input.clone());
        let e = call(&w, &edits, "write", input);
        assert_eq!(a.decision, e.decision, "{path}: {a:?}");
        assert!(!a.sandbox, "a file-tool write is not the sandbox's: {path}");
    }
    let b = call(
        &w,
        &auto,
        "write",
        json!({"path": format!("{root}/src/b.rs"), "content": "x"}),
    );
    assert_eq!(b.decision, Effect::Allow);
}

#[test]
fn a_rule_still_decides_before_the_sandbox() {
    let w = ws();
    let user = "[permission.bash]\n\"make *\" = \"ask\"\n\"cargo *\" = \"deny\"\n";
    let auto = policy(&w, Mode::Auto, true, &[("user.toml", Layer::User, user)]);
    assert_eq!(bash(&w, &auto, "make test").decision, Effect::Ask);
    assert_eq!(bash(&w, &auto, "cargo build").decision, Effect::Deny);
    assert_eq!(
        seen(&bash(&w, &auto, "npm test")),
        (Effect::Allow, DecisionSource::Sandbox, true)
    );
}

#[test]
fn an_unsandboxed_call_is_judged_as_in_default_and_asked() {
    let w = ws();
    let auto = policy(&w, Mode::Auto, true, &[]);
    let o = call(
        &w,
        &auto,
        "bash",
        json!({"command": "make", "unsandboxed": true, "reason": "needs the GPU"}),
    );
    assert_eq!(o.decision, Effect::Ask, "{o:?}");
    assert!(!o.sandbox);
    let requests = builtin_intent(
        "bash",
        &json!({"command": "make", "unsandboxed": true, "reason": "r"}),
        &w.loc,
    )
    .unwrap();
    let judged = toolgate_policy::check::judge_call(&auto, requests, &w.loc, &NoApprovals);
    assert!(
        judged
            .iter()
            .all(|j| j.verdict.decision.source != DecisionSource::Sandbox),
        "nothing of an unsandboxed call is allowed by the sandbox: {judged:?}"
    );
}

#[test]
fn a_command_run_in_a_directory_outside_the_location_is_asked() {
    let w = ws();
    let auto = policy(&w, Mode::Auto, true, &[]);
    let o = call(
        &w,
        &auto,
        "bash",
        json!({"command": "make", "workdir": "/tmp"}),
    );
    assert_ne!(o.decision, Effect::Allow, "{o:?}");
}

/// A project config that sets `mode = "auto"` loosens: ignored until trusted.
#[test]
fn an_untrusted_project_config_cannot_choose_mode_auto() {
    let w = ws();
    let data = tempfile::tempdir().unwrap();
    let project = w.loc.root().join(".toolgate/config.toml");
    std::fs::create_dir_all(project.parent().unwrap()).unwrap();
    std::fs::write(&project, "mode = \"auto\"\n").unwrap();
    let trust = data.path().join("trust.json");
    let mut sources = PolicySources::bare(w.loc.root(), &w.home);
    sources.project = Some(project.clone());
    sources.trust = Some(trust.clone());
    sources.sandbox_available = true;
    let p = Policy::load(&sources).unwrap();
    assert_eq!(p.mode(), Mode::Default);
    let o = bash(&w, &p, "make");
    assert_eq!(o.decision, Effect::Ask);
    assert!(
        o.ignored.iter().any(|i| i.why.contains("mode = \"auto\"")),
        "{:?}",
        o.ignored
    );
    let bytes = std::fs::read(&project).unwrap();
    TrustStore::new(&trust)
        .trust(
            &toolgate_policy::trust::config_key(&project),
            &toolgate_policy::trust::sha256_hex(&bytes),
        )
        .unwrap();
    let p = Policy::load(&sources).unwrap();
    assert_eq!(p.mode(), Mode::Auto);
    assert_eq!(
        seen(&bash(&w, &p, "make")),
        (Effect::Allow, DecisionSource::Sandbox, true)
    );
}

#[test]
fn mode_auto_is_spelled_auto() {
    assert_eq!("auto".parse::<Mode>(), Ok(Mode::Auto));
    assert_eq!(Mode::Auto.to_string(), "auto");
}
