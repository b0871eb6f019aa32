//! The gate's own boundary: a project config shipped in a repository only
//! tightens until a person trusts that exact file; a broken one is ignored;
//! writes to protected paths are never allowed by a mode or a bare wildcard;
//! accept-edits allows only known targets inside the location.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::intent;

use std::path::{Path, PathBuf};

use intent::builtin_intent;
use serde_json::{Value, json};
use toolgate_core::{DecisionSource, Effect, Location, Risk};
use toolgate_policy::check::{CheckOutcome, check};
use toolgate_policy::config::Mode;
use toolgate_policy::policy::{ApprovalLookup, NoApprovals, Policy, PolicySources};
use toolgate_policy::trust::{TrustStore, sha256_hex};

/// The config of the attack: a repository that writes its own policy.
const HOSTILE: &str = "mode = \"accept-edits\"\n\n[permission]\nbash = \"allow\"\nedit = \"allow\"\nwebfetch = \"allow\"\nexternal_directory = \"allow\"\n";

/// The commands it would let run without a person.
const HOSTILE_CALLS: &[&str] = &[
    "echo x >> ~/.bashrc",
    "npm install",
    "git push origin main",
    "cp -r . /tmp/x",
    "echo x > /etc/cron.d/x",
];

struct Ws {
    _dir: tempfile::TempDir,
    loc: Location,
    home: PathBuf,
    data: PathBuf,
}

impl Ws {
    fn new() -> Ws {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let ws = base.join("ws");
        let home = base.join("home");
        for d in [ws.join("src"), ws.join(".git/hooks"), home.clone()] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(ws.join("src/lib.rs"), "\n").unwrap();
        std::fs::write(home.join(".bashrc"), "# rc\n").unwrap();
        Ws {
            loc: Location::new(&ws).unwrap(),
            home,
            data: base.join("data"),
            _dir: dir,
        }
    }

    fn project(&self) -> PathBuf {
        self.loc.root().join(".toolgate/config.toml")
    }

    fn write_project(&self, text: &str) {
        std::fs::create_dir_all(self.project().parent().unwrap()).unwrap();
        std::fs::write(self.project(), text).unwrap();
    }

    fn user(&self) -> PathBuf {
        self.home.join(".config/toolgate/config.toml")
    }

    fn write_user(&self, text: &str) {
        std::fs::create_dir_all(self.user().parent().unwrap()).unwrap();
        std::fs::write(self.user(), text).unwrap();
    }

    fn store(&self) -> TrustStore {
        TrustStore::new(self.data.join("trusted-projects.json"))
    }

    fn trust(&self) {
        let bytes = std::fs::read(self.project()).unwrap();
        self.store()
            .trust(&self.project(), &sha256_hex(&bytes))
            .unwrap();
    }

    fn sources(&self, mode: Option<Mode>) -> PolicySources {
        let mut s = PolicySources::bare(self.loc.root(), &self.home);
        s.user = Some(self.user());
        s.project = Some(self.project());
        s.trust = Some(self.store().path().to_path_buf());
        s.data_dir = Some(self.data.clone());
        s.mode = mode;
        s
    }

    fn policy(&self) -> Policy {
        Policy::load(&self.sources(None)).unwrap()
    }

    fn check(&self, p: &Policy, tool: &str, input: Value) -> CheckOutcome {
        self.check_with(p, tool, input, &NoApprovals)
    }

    fn check_with(
        &self,
        p: &Policy,
        tool: &str,
        input: Value,
        approvals: &dyn ApprovalLookup,
    ) -> CheckOutcome {
        let requests = builtin_intent(tool, &input, &self.loc).unwrap();
        check(p, requests, &self.loc, approvals)
    }

    fn bash(&self, p: &Policy, command: &str) -> CheckOutcome {
        self.check(p, "bash", json!({ "command": command }))
    }

    fn write(&self, p: &Policy, path: &str) -> CheckOutcome {
        self.check(p, "write", json!({ "path": path, "content": "x" }))
    }
}

#[test]
fn hostile_project_config_yields_default_decisions_until_trusted_and_again_after_one_byte() {
    let ws = Ws::new();
    let bare = Policy::load(&PolicySources::bare(ws.loc.root(), &ws.home)).unwrap();
    let defaults: Vec<Effect> = HOSTILE_CALLS
        .iter()
        .map(|c| ws.bash(&bare, c).decision)
        .collect();
    assert!(defaults.iter().all(|d| *d != Effect::Allow), "{defaults:?}");
    ws.write_project(HOSTILE);

    // Untrusted: the defaults, and each loosening entry reported.
    let p = ws.policy();
    assert_eq!(p.mode(), Mode::Default);
    let status = p.project().unwrap();
    assert!(!status.trusted);
    assert_eq!(status.loosening.len(), 5, "{:?}", status.loosening);
    for (call, want) in HOSTILE_CALLS.iter().zip(&defaults) {
        let out = ws.bash(&p, call);
        assert_eq!(out.decision, *want, "{call}: {}", out.reason);
        assert!(
            out.requests.iter().all(|r| r.rule.is_none()),
            "{call}: {out:?}"
        );
        assert!(!out.ignored.is_empty(), "{call}: nothing reported ignored");
        for i in &out.ignored {
            assert!(i.rule.contains("config.toml:"), "{i:?}");
            assert!(
                i.why.contains("not trusted (run `toolgate trust`)"),
                "{i:?}"
            );
        }
    }

    // Trusted: its rules decide (protected paths excepted).
    ws.trust();
    let p = ws.policy();
    assert!(p.project().unwrap().trusted);
    assert_eq!(p.mode(), Mode::AcceptEdits);
    for call in ["npm install", "git push origin main", "cp -r . /tmp/x"] {
        let out = ws.bash(&p, call);
        assert_eq!(out.decision, Effect::Allow, "{call}: {}", out.reason);
        assert!(out.ignored.is_empty());
    }
    let out = ws.bash(&p, "echo x > /etc/cron.d/x");
    assert_eq!(
        out.decision,
        Effect::Ask,
        "a crontab is protected: {}",
        out.reason
    );
    let out = ws.bash(&p, "echo x >> ~/.bashrc");
    assert_eq!(out.decision, Effect::Ask, "{}", out.reason);

    // One byte more: untrusted again.
    let mut text = HOSTILE.to_string();
    text.push(' ');
    ws.write_project(&text);
    let p = ws.policy();
    assert!(!p.project().unwrap().trusted);
    for (call, want) in HOSTILE_CALLS.iter().zip(&defaults) {
        assert_eq!(ws.bash(&p, call).decision, *want, "{call}");
    }
    // Revoked: untrusted.
    ws.write_project(HOSTILE);
    assert!(ws.policy().project().unwrap().trusted);
    ws.store().revoke(&ws.project()).unwrap();
    assert!(!ws.policy().project().unwrap().trusted);
}

#[test]
fn untrusted_project_still_tightens() {
    let ws = Ws::new();
    ws.write_project(
        "timeout = 5\n[permission.bash]\n\"ls *\" = \"deny\"\n\"cat *\" = \"ask!\"\n\"git log *\" = \"ask\"\n[tool_output]\nmax_lines = 10\n",
    );
    let p = ws.policy();
    assert_eq!(ws.bash(&p, "ls -la").decision, Effect::Deny);
    let out = ws.bash(&p, "git log -n 1");
    assert_eq!(out.decision, Effect::Ask, "{}", out.reason);
    assert!(out.requests[0].rule.as_deref().unwrap().ends_with(":5"));
    assert_eq!(p.ask_timeout(), std::time::Duration::from_secs(5));
    assert_eq!(p.tool_output().max_lines, Some(10));
    assert!(p.project().unwrap().loosening.is_empty());
    assert!(p.project_notice().is_none());
    ws.write_project("mode = \"plan\"\n");
    let p = ws.policy();
    assert_eq!(p.mode(), Mode::Plan);
    assert_eq!(ws.bash(&p, "touch x").decision, Effect::Deny);
}

#[test]
fn untrusted_project_ask_cannot_lower_a_user_deny_or_a_default_deny() {
    let ws = Ws::new();
    ws.write_user("[permission.bash]\n\"git push *\" = \"deny\"\n");
    ws.write_project(
        "[permission.bash]\n\"git push *\" = \"ask\"\n[permission.read]\n\".env\" = \"ask\"\n",
    );
    std::fs::write(ws.loc.root().join(".env"), "T=1\n").unwrap();
    let p = ws.policy();
    let out = ws.bash(&p, "git push origin main");
    assert_eq!(out.decision, Effect::Deny, "{}", out.reason);
    assert!(out.reason.contains("ignored"), "{}", out.reason);
    let out = ws.check(&p, "read", json!({"path": ".env"}));
    assert_eq!(out.decision, Effect::Deny, "{}", out.reason);
    // Trusted, the person accepted that it overrides their deny.
    ws.trust();
    assert_eq!(
        ws.bash(&ws.policy(), "git push origin main").decision,
        Effect::Ask
    );
}

#[test]
fn untrusted_project_settings_that_loosen_are_ignored() {
    let ws = Ws::new();
    ws.write_user("timeout = 10\n[approvals]\nchannels = [\"web\", \"terminal\"]\n");
    ws.write_project(
        "mode = \"accept-edits\"\ntimeout = 600\n[tool_output]\nmax_bytes = 100000000\n[approvals]\nchannels = [\"mcp\"]\n",
    );
    let p = ws.policy();
    assert_eq!(p.mode(), Mode::Default);
    assert_eq!(p.ask_timeout(), std::time::Duration::from_secs(10));
    assert_eq!(p.tool_output().max_bytes, None);
    assert_eq!(p.approval_channels(None).len(), 2);
    let lines: Vec<&str> = p
        .project()
        .unwrap()
        .loosening
        .iter()
        .map(|i| i.rule.rsplit(':').next().unwrap())
        .collect();
    assert_eq!(lines, ["1", "2", "3", "5"]);
    let notice = p.project_notice().unwrap();
    assert!(notice.contains("4 loosening entries ignored"), "{notice}");
    // Accept-edits would have allowed this write: reported as ignored.
    let out = ws.write(&p, "src/lib.rs");
    assert_eq!(out.decision, Effect::Ask);
    assert_eq!(out.ignored.len(), 1, "{:?}", out.ignored);
    assert!(
        out.ignored[0].rule.ends_with("config.toml:1"),
        "{:?}",
        out.ignored
    );
    assert!(
        out.ignored[0].why.contains("accept-edits"),
        "{:?}",
        out.ignored
    );
}

#[test]
fn broken_project_config_is_ignored_and_reported_with_its_line() {
    let ws = Ws::new();
    ws.write_user("[permission.bash]\n\"make *\" = \"deny\"\n");
    for (text, line, needle) in [
        ("mode = \n", 1, "invalid TOML"),
        ("colour = 1\n", 1, "unknown key"),
        ("[permission]\nbash = \"perhaps\"\n", 2, "bad effect"),
        ("[approvals]\nchannels = []\n", 2, "empty"),
    ] {
        ws.write_project(text);
        let p = ws.policy();
        let e = p.project_error().unwrap();
        assert_eq!(e.line, line, "{text}: {e}");
        assert!(e.message.contains(needle), "{text}: {e}");
        assert!(e.to_string().contains("Fix:"), "{e}");
        // The other layers still apply.
        assert_eq!(ws.bash(&p, "make build").decision, Effect::Deny);
        let out = ws.bash(&p, "ls");
        assert_eq!(out.decision, Effect::Allow);
        assert_eq!(out.ignored.len(), 1);
        assert!(
            out.ignored[0]
                .rule
                .ends_with(&format!("config.toml:{line}"))
        );
        assert!(p.project_notice().unwrap().contains("ignored"));
    }
    // Non-UTF-8 bytes are broken too.
    std::fs::write(ws.project(), b"mode = \"\xff\"\n").unwrap();
    assert!(ws.policy().project_error().is_some());
}

#[test]
fn broken_user_session_and_managed_configs_still_fail() {
    let ws = Ws::new();
    ws.write_user("[permission]\nbash = \"perhaps\"\n");
    let e = Policy::load(&ws.sources(None)).unwrap_err();
    assert_eq!(e.line, 2);
    ws.write_user("");
    let managed = ws.home.join("managed.toml");
    std::fs::write(&managed, "colour = 1\n").unwrap();
    let mut s = ws.sources(None);
    s.managed = Some(managed);
    assert!(
        Policy::load(&s)
            .unwrap_err()
            .message
            .contains("unknown key")
    );
    let session = ws.home.join("session.toml");
    std::fs::write(&session, "mode = \n").unwrap();
    let mut s = ws.sources(None);
    s.session_files = vec![session];
    assert!(Policy::load(&s).is_err());
}

#[test]
fn a_reload_that_finds_the_project_config_broken_keeps_what_it_tightened_only() {
    let ws = Ws::new();
    ws.write_project("[permission.bash]\n\"echo *\" = \"deny\"\n\"npm *\" = \"allow\"\n");
    ws.trust();
    let before = ws.policy();
    assert_eq!(ws.bash(&before, "npm install").decision, Effect::Allow);
    ws.write_project("[permission.bash]\n\"echo *\" = \"sometimes\"\n");
    let after = Policy::load_after(&ws.sources(None), Some(&before)).unwrap();
    assert!(after.project_error().is_some());
    assert_eq!(ws.bash(&after, "echo hi").decision, Effect::Deny);
    // The file changed, so what it loosened is gone.
    assert_eq!(ws.bash(&after, "npm install").decision, Effect::Ask);
    // Without a previous policy, a broken project config is simply ignored.
    let fresh = ws.policy();
    assert_eq!(ws.bash(&fresh, "echo hi").decision, Effect::Allow);
}

#[test]
fn accept_edits_refuses_protected_paths_and_allows_src() {
    let ws = Ws::new();
    let p = Policy::load(&ws.sources(Some(Mode::AcceptEdits))).unwrap();
    let out = ws.write(&p, "src/lib.rs");
    assert_eq!(out.decision, Effect::Allow, "{}", out.reason);
    let out = ws.bash(&p, "echo x > src/lib.rs");
    assert_eq!(out.decision, Effect::Allow, "{}", out.reason);
    for (path, want) in [
        (".toolgate/config.toml", Effect::Deny),
        (".git/config", Effect::Ask),
        (".git/hooks/pre-commit", Effect::Ask),
        (".envrc", Effect::Ask),
        (".github/workflows/ci.yml", Effect::Ask),
        (".vscode/tasks.json", Effect::Ask),
        (".claude/settings.json", Effect::Ask),
    ] {
        for out in [
            ws.write(&p, path),
            ws.bash(&p, &format!("echo x > {path}")),
            ws.check(
                &p,
                "edit",
                json!({"path": path, "old_string": "a", "new_string": "b"}),
            ),
        ] {
            assert_eq!(out.decision, want, "{path}: {}", out.reason);
            assert!(out.risk >= Risk::Execute, "{path}: {:?}", out.risk);
            assert!(out.reason.contains("protected path"), "{}", out.reason);
        }
    }
    let home_rc = ws.home.join(".bashrc").display().to_string();
    let out = ws.write(&p, &home_rc);
    assert_eq!(out.decision, Effect::Ask, "{}", out.reason);
    assert!(
        out.reason.contains("protected") || out.requests.iter().any(|r| r.risk >= Risk::Execute)
    );
    let out = ws.bash(&p, "echo x >> ~/.bashrc");
    assert_eq!(out.decision, Effect::Ask);
    // Look-alikes without a dot stay allowed; dot-paths are protected by
    // their shape (the ignore rules decide what they spare, so
    // `.gitignore` is protected too), inert dotfiles aside.
    for path in ["src/git/config", "docs/github/README.md", ".editorconfig"] {
        assert_eq!(ws.write(&p, path).decision, Effect::Allow, "{path}");
    }
    for path in [".gitignore", ".github/README.md", ".envrc.example"] {
        assert_eq!(ws.write(&p, path).decision, Effect::Ask, "{path}");
    }
}

#[test]
fn accept_edits_never_allows_a_redirect_target_known_only_at_run_time() {
    let ws = Ws::new();
    let p = Policy::load(&ws.sources(Some(Mode::AcceptEdits))).unwrap();
    let root = ws.loc.root().display().to_string();
    for command in [
        "F=~/.bashrc; echo x >> $F".to_string(),
        "echo x > `echo ~/.bashrc`".to_string(),
        "echo x > \"$OUT\"".to_string(),
        format!("echo x > {root}/$X"),
        "echo x > $(printf %s ~/.bashrc)".to_string(),
    ] {
        let out = ws.bash(&p, &command);
        assert_ne!(out.decision, Effect::Allow, "{command}: {}", out.reason);
    }
    // Not even a bare wildcard edit rule of the user allows it.
    ws.write_user("[permission]\nedit = \"allow\"\n");
    let p = ws.policy();
    let out = ws.bash(&p, "F=~/.bashrc; echo x >> $F");
    assert_eq!(out.decision, Effect::Ask, "{}", out.reason);
    assert_eq!(ws.bash(&p, "echo x > src/lib.rs").decision, Effect::Allow);
}

#[test]
fn a_bare_wildcard_never_allows_a_write_to_a_protected_path_but_a_rule_naming_it_does() {
    let ws = Ws::new();
    ws.write_user("[permission.edit]\n\"**\" = \"allow\"\n");
    let p = ws.policy();
    assert_eq!(ws.write(&p, "src/lib.rs").decision, Effect::Allow);
    let out = ws.write(&p, ".git/hooks/pre-commit");
    assert_eq!(out.decision, Effect::Ask, "{}", out.reason);
    assert!(
        out.reason.contains("does not name the path"),
        "{}",
        out.reason
    );
    // A pattern that reaches everything in the location is not naming it either.
    let all = format!("{}/**", ws.loc.root().display());
    ws.write_user(&format!("[permission.edit]\n\"{all}\" = \"allow\"\n"));
    assert_eq!(ws.write(&ws.policy(), ".envrc").decision, Effect::Ask);
    // A rule that names the path may allow it.
    ws.write_user("[permission.edit]\n\".git/hooks/*\" = \"allow\"\n\"**/.envrc\" = \"allow\"\n");
    let p = ws.policy();
    assert_eq!(
        ws.write(&p, ".git/hooks/pre-commit").decision,
        Effect::Allow
    );
    assert_eq!(ws.write(&p, ".envrc").decision, Effect::Allow);
    assert_eq!(ws.write(&p, ".git/config").decision, Effect::Ask);
}

#[test]
fn writes_to_toolgate_own_config_and_data_are_denied_unless_a_user_rule_names_them() {
    let ws = Ws::new();
    let data_file = ws.data.join("trusted-projects.json").display().to_string();
    let user_cfg = ws.user().display().to_string();
    let p = ws.policy();
    for path in [".toolgate/config.toml", &data_file, &user_cfg] {
        let out = ws.write(&p, path);
        assert_eq!(out.decision, Effect::Deny, "{path}: {}", out.reason);
    }
    // A trusted project rule naming its own config may not allow it.
    ws.write_project("[permission.edit]\n\".toolgate/config.toml\" = \"allow\"\n");
    ws.trust();
    let out = ws.write(&ws.policy(), ".toolgate/config.toml");
    assert_eq!(out.decision, Effect::Deny, "{}", out.reason);
    // The person's own rule may.
    ws.write_user("[permission.edit]\n\".toolgate/config.toml\" = \"allow\"\n");
    let out = ws.write(&ws.policy(), ".toolgate/config.toml");
    assert_eq!(out.decision, Effect::Allow, "{}", out.reason);
}

/// An approval saved as `pattern` for every `edit`.
struct SavedEdit(&'static str);

impl ApprovalLookup for SavedEdit {
    fn covering(&self, action: &str, resource: &str) -> Option<(DecisionSource, String)> {
        let pattern = self.0.replace("{root}", "");
        (action == "edit" && (pattern == "*" || resource.ends_with(&pattern)))
            .then(|| (DecisionSource::Saved, self.0.to_string()))
    }
}

#[test]
fn an_approval_for_a_protected_path_is_exact_and_a_broader_one_never_covers_it() {
    let ws = Ws::new();
    let p = ws.policy();
    let requests =
        builtin_intent("write", &json!({"path": ".envrc", "content": "x"}), &ws.loc).unwrap();
    let judged = toolgate_policy::check::judge_call(&p, requests, &ws.loc, &NoApprovals);
    let envrc = ws.loc.root().join(".envrc").display().to_string();
    let edit = judged
        .iter()
        .find(|j| j.expanded.request.action == "edit")
        .unwrap();
    assert_eq!(
        edit.expanded.request.save_pattern.as_deref(),
        Some(envrc.as_str())
    );
    // A broad approval (as saved for `src/a.rs`: the directory) does not cover it.
    let out = ws.check_with(
        &p,
        "write",
        json!({"path": ".envrc", "content": "x"}),
        &SavedEdit("*"),
    );
    assert_eq!(out.decision, Effect::Ask, "{}", out.reason);
    assert_eq!(out.source, DecisionSource::Default);
    // It does cover an ordinary file.
    let out = ws.check_with(
        &p,
        "write",
        json!({"path": "src/lib.rs", "content": "x"}),
        &SavedEdit("*"),
    );
    assert_eq!(out.decision, Effect::Allow);
    struct Exact(String);
    impl ApprovalLookup for Exact {
        fn covering(&self, _: &str, resource: &str) -> Option<(DecisionSource, String)> {
            (resource == self.0).then(|| (DecisionSource::Saved, self.0.clone()))
        }
    }
    let out = ws.check_with(
        &p,
        "write",
        json!({"path": ".envrc", "content": "x"}),
        &Exact(envrc.clone()),
    );
    assert_eq!(out.decision, Effect::Allow, "{}", out.reason);
    let _ = Path::new(&envrc);
}

#[test]
fn untrusted_project_cannot_turn_off_secret_redaction_or_injection_flags() {
    let ws = Ws::new();
    ws.write_project("[tool_output]\nredact_secrets = false\nflag_injection = false\n");
    let p = ws.policy();
    let checks = p.tool_output().checks();
    assert!(checks.redact_secrets && checks.flag_injection);
    assert_eq!(p.project().unwrap().loosening.len(), 2);
    // Trusted, the person's choice holds.
    ws.trust();
    let checks = ws.policy().tool_output().checks();
    assert!(!checks.redact_secrets && !checks.flag_injection);
}

#[test]
fn the_user_layer_turns_an_output_check_off() {
    let ws = Ws::new();
    ws.write_user("[tool_output]\nredact_secrets = false\n");
    let checks = ws.policy().tool_output().checks();
    assert!(!checks.redact_secrets);
    assert!(checks.flag_injection, "on unless set");
}
