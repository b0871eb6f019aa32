//! Every path of the decision tree and every layer interaction, through
//! `Policy::judge` and `check`.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::intent;

use std::path::Path;

use intent::builtin_intent;
use serde_json::json;
use toolgate_core::{DecisionSource, Effect, Location, PermissionRequest, Risk};
use toolgate_policy::check::check;
use toolgate_policy::config::Mode;
use toolgate_policy::policy::{ApprovalLookup, NoApprovals, Policy, PolicySources, Verdict};
use toolgate_policy::rules::{Layer, RuleEffect};
use toolgate_policy::shell::{ShellContext, analyze};

const HOME: &str = "/home/u";

struct Fixture {
    _dir: tempfile::TempDir,
    loc: Location,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.rs"), "x").unwrap();
    let loc = Location::new(dir.path()).unwrap();
    Fixture { _dir: dir, loc }
}

fn policy(f: &Fixture, layers: &[(&str, Layer, &str)], mode: Option<Mode>) -> Policy {
    Policy::from_texts(f.loc.root(), Path::new(HOME), layers, mode).unwrap()
}

fn bash(cmd: &str, risk: Risk) -> PermissionRequest {
    PermissionRequest::command("bash", cmd, risk).with_save_pattern(Some(format!("{cmd} *")))
}

fn edit(f: &Fixture, rel: &str) -> PermissionRequest {
    let p = f.loc.root().join(rel).display().to_string();
    PermissionRequest::path("edit", p, Risk::Write)
}

fn judge(p: &Policy, f: &Fixture, r: &PermissionRequest) -> Verdict {
    p.judge(r, false, None, &f.loc, &NoApprovals)
}

/// Approvals that cover everything of one action, as saved or session.
struct Approved(DecisionSource, &'static str);

impl ApprovalLookup for Approved {
    fn covering(&self, action: &str, _resource: &str) -> Option<(DecisionSource, String)> {
        (action == self.1).then(|| (self.0, "pattern *".to_string()))
    }
}

#[test]
fn defaults_follow_the_risk() {
    let f = fixture();
    let p = policy(&f, &[], None);
    let cases = [
        (Risk::Read, Effect::Allow),
        (Risk::Write, Effect::Ask),
        (Risk::Execute, Effect::Ask),
        (Risk::Network, Effect::Ask),
        (Risk::Credential, Effect::Deny),
        (Risk::Destructive, Effect::Ask),
    ];
    for (risk, want) in cases {
        let v = judge(&p, &f, &bash("x", risk));
        assert_eq!(v.decision.effect, want, "{risk}");
        assert_eq!(v.decision.source, DecisionSource::Default);
        assert!(v.decision.rule.is_none());
        assert!(
            v.decision.reason.contains("no rule matched"),
            "{}",
            v.decision.reason
        );
    }
}

#[test]
fn last_match_wins_and_records_file_and_line() {
    let f = fixture();
    let text =
        "[permission.bash]\n\"*\" = \"deny\"\n\"git *\" = \"allow\"\n\"git push *\" = \"ask\"\n";
    let p = policy(&f, &[("p.toml", Layer::Project, text)], None);
    let v = judge(&p, &f, &bash("git status", Risk::Read));
    assert_eq!(v.decision.effect, Effect::Allow);
    assert_eq!(v.decision.rule.as_ref().unwrap().location(), "p.toml:3");
    let v = judge(&p, &f, &bash("git push origin", Risk::Network));
    assert_eq!(v.decision.effect, Effect::Ask);
    assert_eq!(v.decision.rule.as_ref().unwrap().line, 4);
    let v = judge(&p, &f, &bash("ls", Risk::Read));
    assert_eq!(v.decision.effect, Effect::Deny);
    assert_eq!(v.decision.source, DecisionSource::Rule);
}

#[test]
fn later_layers_win_for_an_equal_match() {
    let f = fixture();
    let user = "[permission.bash]\n\"cargo test *\" = \"deny\"\n";
    let project = "[permission.bash]\n\"cargo test *\" = \"allow\"\n";
    let session = "[permission.bash]\n\"cargo test *\" = \"ask\"\n";
    // Given out of order: layers are still merged user → project → session.
    let p = policy(
        &f,
        &[
            ("s.toml", Layer::Session, session),
            ("u.toml", Layer::User, user),
            ("p.toml", Layer::Project, project),
        ],
        None,
    );
    let v = judge(&p, &f, &bash("cargo test", Risk::Execute));
    assert_eq!(v.decision.effect, Effect::Ask);
    assert_eq!(v.decision.rule.unwrap().file, "s.toml");
}

#[test]
fn managed_deny_is_final() {
    let f = fixture();
    let managed = "[permission.bash]\n\"curl *\" = \"deny\"\n";
    let project = "[permission.bash]\n\"curl *\" = \"allow\"\n\"*\" = \"allow\"\n";
    let p = policy(
        &f,
        &[
            ("/etc/toolgate/config.toml", Layer::Managed, managed),
            ("p.toml", Layer::Project, project),
            ("cli.toml", Layer::Session, project),
        ],
        None,
    );
    let v = p.judge(
        &bash("curl https://x", Risk::Network),
        false,
        None,
        &f.loc,
        &Approved(DecisionSource::Saved, "bash"),
    );
    assert_eq!(v.decision.effect, Effect::Deny);
    assert_eq!(
        v.decision.rule.unwrap().location(),
        "/etc/toolgate/config.toml:2"
    );
    assert!(
        v.decision.reason.contains("managed"),
        "{}",
        v.decision.reason
    );
    // Managed rules that do not match leave the rest to the other layers.
    assert_eq!(
        judge(&p, &f, &bash("ls", Risk::Read)).decision.effect,
        Effect::Allow
    );
}

#[test]
fn managed_mode_beats_cli_mode() {
    let f = fixture();
    let p = policy(
        &f,
        &[
            ("m.toml", Layer::Managed, "mode = \"plan\"\n"),
            ("p.toml", Layer::Project, "mode = \"accept-edits\"\n"),
        ],
        Some(Mode::Default),
    );
    assert_eq!(p.mode(), Mode::Plan);
    let p = policy(
        &f,
        &[("p.toml", Layer::Project, "mode = \"accept-edits\"\n")],
        Some(Mode::Plan),
    );
    assert_eq!(p.mode(), Mode::Plan, "the CLI mode beats config");
}

#[test]
fn saved_and_session_approvals_turn_ask_into_allow() {
    let f = fixture();
    let p = policy(&f, &[], None);
    for source in [DecisionSource::Saved, DecisionSource::Session] {
        let v = p.judge(
            &bash("npm install", Risk::Network),
            false,
            None,
            &f.loc,
            &Approved(source, "bash"),
        );
        assert_eq!(v.decision.effect, Effect::Allow);
        assert_eq!(v.decision.source, source);
    }
}

#[test]
fn saved_approval_loses_to_configured_deny_and_to_force_ask() {
    let f = fixture();
    let text = "[permission.bash]\n\"git push *\" = \"ask!\"\n\"rm *\" = \"deny\"\n";
    let p = policy(&f, &[("p.toml", Layer::Project, text)], None);
    let saved = Approved(DecisionSource::Saved, "bash");
    let v = p.judge(
        &bash("git push", Risk::Network),
        false,
        None,
        &f.loc,
        &saved,
    );
    assert_eq!(v.decision.effect, Effect::Ask);
    assert!(v.forced);
    assert!(!v.reusable);
    assert!(
        v.decision.reason.contains("forces asking"),
        "{}",
        v.decision.reason
    );
    let v = p.judge(&bash("rm x", Risk::Write), false, None, &f.loc, &saved);
    assert_eq!(v.decision.effect, Effect::Deny);
    // A default deny (credential) is not turned into allow either.
    let v = PermissionRequest::path("read", "/home/u/.ssh/id_rsa", Risk::Credential);
    let v = p.judge(
        &v,
        false,
        None,
        &f.loc,
        &Approved(DecisionSource::Saved, "read"),
    );
    assert_eq!(v.decision.effect, Effect::Deny);
}

#[test]
fn destructive_is_never_answered_by_an_approval() {
    let f = fixture();
    let p = policy(&f, &[], None);
    let v = p.judge(
        &bash("rm -rf build", Risk::Destructive),
        false,
        None,
        &f.loc,
        &Approved(DecisionSource::Session, "bash"),
    );
    assert_eq!(v.decision.effect, Effect::Ask);
    assert!(!v.reusable);
}

#[test]
fn bare_wildcard_never_allows_destructive_or_credential() {
    let f = fixture();
    let text =
        "[permission]\nbash = \"allow\"\nread = \"allow\"\n[permission.edit]\n\"**\" = \"allow\"\n";
    let p = policy(&f, &[("p.toml", Layer::Project, text)], None);
    let v = judge(&p, &f, &bash("rm -rf /", Risk::Destructive));
    assert_eq!(v.decision.effect, Effect::Ask);
    assert_eq!(v.decision.source, DecisionSource::Default);
    let v = judge(
        &p,
        &f,
        &PermissionRequest::path("read", "/ws/.env", Risk::Credential),
    );
    assert_eq!(v.decision.effect, Effect::Deny);
    let v = judge(
        &p,
        &f,
        &PermissionRequest::path("edit", "/ws/.env", Risk::Credential),
    );
    assert_eq!(v.decision.effect, Effect::Deny);
    // A rule naming the command or path may.
    let text = "[permission.bash]\n\"rm -rf build\" = \"allow\"\n[permission.read]\n\".env\" = \"allow\"\n";
    let p = policy(&f, &[("p.toml", Layer::Project, text)], None);
    assert_eq!(
        judge(&p, &f, &bash("rm -rf build", Risk::Destructive))
            .decision
            .effect,
        Effect::Allow
    );
    let env = f.loc.root().join(".env").display().to_string();
    let v = judge(
        &p,
        &f,
        &PermissionRequest::path("read", env, Risk::Credential),
    );
    assert_eq!(v.decision.effect, Effect::Allow);
    // A bare wildcard may still ask or deny them.
    let p = policy(
        &f,
        &[("p.toml", Layer::Project, "[permission]\nbash = \"deny\"\n")],
        None,
    );
    assert_eq!(
        judge(&p, &f, &bash("rm -rf /", Risk::Destructive))
            .decision
            .effect,
        Effect::Deny
    );
}

#[test]
fn opaque_commands_are_at_least_asked_and_never_reusable() {
    let f = fixture();
    let p = policy(
        &f,
        &[(
            "p.toml",
            Layer::Project,
            "[permission.bash]\n\"eval *\" = \"allow\"\n",
        )],
        None,
    );
    let r = bash("eval $X", Risk::Read);
    let v = p.judge(
        &r,
        true,
        Some("opaque"),
        &f.loc,
        &Approved(DecisionSource::Saved, "bash"),
    );
    assert_eq!(v.decision.effect, Effect::Ask);
    assert!(!v.reusable);
    assert!(
        v.decision.reason.contains("cannot be fully analysed"),
        "{}",
        v.decision.reason
    );
    let p = policy(&f, &[], None);
    let v = p.judge(&r, true, None, &f.loc, &NoApprovals);
    assert_eq!(v.decision.effect, Effect::Ask);
}

#[test]
fn accept_edits_allows_writes_inside_only() {
    let f = fixture();
    let p = policy(&f, &[], Some(Mode::AcceptEdits));
    assert_eq!(
        judge(&p, &f, &edit(&f, "src/a.rs")).decision.effect,
        Effect::Allow
    );
    // Outside the location the gate raises the risk, so the mode does not apply.
    let requests = builtin_intent(
        "write",
        &json!({"path": "/tmp/x.txt", "content": ""}),
        &f.loc,
    )
    .unwrap();
    let out = check(&p, requests, &f.loc, &NoApprovals);
    assert_eq!(out.decision, Effect::Ask);
    assert!(
        out.requests
            .iter()
            .any(|r| r.action == "external_directory")
    );
    assert_eq!(
        judge(&p, &f, &bash("make", Risk::Execute)).decision.effect,
        Effect::Ask
    );
    // A configured ask still asks.
    let p = policy(
        &f,
        &[("p.toml", Layer::Project, "[permission]\nedit = \"ask\"\n")],
        Some(Mode::AcceptEdits),
    );
    assert_eq!(
        judge(&p, &f, &edit(&f, "src/a.rs")).decision.effect,
        Effect::Ask
    );
}

#[test]
fn plan_mode_denies_everything_but_reads() {
    let f = fixture();
    let text = "[permission.bash]\n\"cargo test *\" = \"allow\"\n\"cat *\" = \"deny\"\n";
    let p = policy(&f, &[("p.toml", Layer::Project, text)], Some(Mode::Plan));
    let v = judge(&p, &f, &bash("cargo test", Risk::Execute));
    assert_eq!(v.decision.effect, Effect::Deny);
    assert!(
        v.decision.reason.contains("plan mode"),
        "{}",
        v.decision.reason
    );
    assert_eq!(
        judge(&p, &f, &edit(&f, "src/a.rs")).decision.effect,
        Effect::Deny
    );
    assert_eq!(
        judge(&p, &f, &bash("ls", Risk::Read)).decision.effect,
        Effect::Allow
    );
    let v = judge(&p, &f, &bash("cat x", Risk::Read));
    assert_eq!(
        v.decision.effect,
        Effect::Deny,
        "a configured deny still applies to reads"
    );
}

#[test]
fn relative_and_home_path_patterns() {
    let f = fixture();
    let text =
        "[permission.edit]\n\"src/**\" = \"allow\"\n[permission.read]\n\"~/.ssh/**\" = \"deny\"\n";
    let p = policy(&f, &[("p.toml", Layer::Project, text)], None);
    assert_eq!(
        judge(&p, &f, &edit(&f, "src/a.rs")).decision.effect,
        Effect::Allow
    );
    assert_eq!(
        judge(&p, &f, &edit(&f, "docs/a.md")).decision.effect,
        Effect::Ask
    );
    let v = judge(
        &p,
        &f,
        &PermissionRequest::path("read", "/home/u/.ssh/config", Risk::Read),
    );
    assert_eq!(v.decision.effect, Effect::Deny);
}

#[test]
fn outside_the_location_raises_and_adds_external_directory() {
    let f = fixture();
    let p = policy(&f, &[], None);
    let requests = builtin_intent("read", &json!({"path": "/usr/share"}), &f.loc).unwrap();
    let out = check(&p, requests, &f.loc, &NoApprovals);
    assert_eq!(out.requests.len(), 2, "{out:?}");
    assert_eq!(out.requests[0].risk, Risk::Write);
    assert_eq!(out.requests[1].action, "external_directory");
    assert_eq!(out.requests[1].resource, "/usr/share");
    assert_eq!(out.decision, Effect::Ask);
    // An allow rule for the directory answers it.
    let text = "[permission]\nread = \"allow\"\n[permission.external_directory]\n\"/usr/**\" = \"allow\"\n";
    let p = policy(&f, &[("p.toml", Layer::Project, text)], None);
    let requests = builtin_intent("read", &json!({"path": "/usr/share"}), &f.loc).unwrap();
    assert_eq!(
        check(&p, requests, &f.loc, &NoApprovals).decision,
        Effect::Allow
    );
}

#[test]
fn credential_urls_are_denied_by_default() {
    let f = fixture();
    let p = policy(
        &f,
        &[(
            "p.toml",
            Layer::Project,
            "[permission]\nwebfetch = \"allow\"\n",
        )],
        None,
    );
    let ok = builtin_intent("webfetch", &json!({"url": "https://docs.rs/x"}), &f.loc).unwrap();
    assert_eq!(check(&p, ok, &f.loc, &NoApprovals).decision, Effect::Allow);
    let secret = builtin_intent(
        "webfetch",
        &json!({"url": "https://me:pw@example.com/"}),
        &f.loc,
    )
    .unwrap();
    let out = check(&p, secret, &f.loc, &NoApprovals);
    assert_eq!(out.decision, Effect::Deny);
    assert_eq!(out.risk, Risk::Credential);
}

#[test]
fn credential_paths_are_denied_by_default() {
    let f = fixture();
    std::fs::write(f.loc.root().join(".env"), "K=V").unwrap();
    let p = policy(
        &f,
        &[("p.toml", Layer::Project, "[permission]\nread = \"allow\"\n")],
        None,
    );
    let requests = builtin_intent("read", &json!({"path": ".env"}), &f.loc).unwrap();
    let out = check(&p, requests, &f.loc, &NoApprovals);
    assert_eq!((out.decision, out.risk), (Effect::Deny, Risk::Credential));
    let requests = builtin_intent("read", &json!({"path": ".env.example"}), &f.loc).unwrap();
    assert_eq!(
        check(&p, requests, &f.loc, &NoApprovals).decision,
        Effect::Allow
    );
}

#[test]
fn check_json_has_exactly_the_design_fields() {
    let f = fixture();
    let text = "[permission.edit]\n\"src/**\" = \"allow\"\n";
    let p = policy(&f, &[("p.toml", Layer::Project, text)], None);
    let requests = builtin_intent(
        "edit",
        &json!({"path": "src/a.rs", "old_string": "x", "new_string": "y"}),
        &f.loc,
    )
    .unwrap();
    let out = check(&p, requests, &f.loc, &NoApprovals);
    let v = serde_json::to_value(&out).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            "decision", "ignored", "reason", "requests", "risk", "sandbox", "source"
        ]
    );
    assert_eq!(v["ignored"], json!([]));
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["risk"], "write");
    assert_eq!(v["source"], "rule");
    let r = &v["requests"][0];
    let mut rkeys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    rkeys.sort_unstable();
    assert_eq!(rkeys, ["action", "decision", "resource", "risk", "rule"]);
    assert_eq!(r["rule"], "p.toml:2");
    let p = policy(&f, &[], None);
    let requests = builtin_intent("list", &json!({}), &f.loc).unwrap();
    let v = serde_json::to_value(check(&p, requests, &f.loc, &NoApprovals)).unwrap();
    assert!(v["requests"][0]["rule"].is_null());
    assert_eq!(v["source"], "default");
}

#[test]
fn load_reads_every_layer_from_files() {
    let f = fixture();
    let home = tempfile::tempdir().unwrap();
    let user = home.path().join("user.toml");
    std::fs::write(&user, "[permission.bash]\n\"make *\" = \"allow\"\n").unwrap();
    std::fs::create_dir_all(f.loc.root().join(".toolgate")).unwrap();
    std::fs::write(
        f.loc.root().join(".toolgate/config.toml"),
        "timeout = 5\n[permission.bash]\n\"make *\" = \"deny\"\n",
    )
    .unwrap();
    let managed = home.path().join("managed.toml");
    std::fs::write(
        &managed,
        "[permission.bash]\n\"make install *\" = \"deny\"\n",
    )
    .unwrap();
    let cli = home.path().join("cli.toml");
    std::fs::write(&cli, "[permission.bash]\n\"make *\" = \"ask\"\n").unwrap();
    let mut s = PolicySources::bare(f.loc.root(), home.path());
    s.user = Some(user);
    s.project = Some(f.loc.root().join(".toolgate/config.toml"));
    s.session_files = vec![cli];
    s.session_rules = vec![("bash".into(), "make test *".into(), RuleEffect::Allow)];
    s.managed = Some(managed.clone());
    let p = Policy::load(&s).unwrap();
    assert_eq!(p.files().len(), 4);
    assert_eq!(p.ask_timeout(), std::time::Duration::from_secs(5));
    let v = judge(&p, &f, &bash("make test", Risk::Execute));
    assert_eq!(v.decision.effect, Effect::Allow);
    assert_eq!(v.decision.rule.unwrap().file, "<cli>");
    let v = judge(&p, &f, &bash("make build", Risk::Execute));
    assert_eq!(v.decision.effect, Effect::Ask);
    let v = judge(&p, &f, &bash("make install", Risk::Execute));
    assert_eq!(v.decision.rule.unwrap().file, managed.display().to_string());
    // A missing optional file is skipped; a missing --config file is an error.
    s.user = Some(home.path().join("absent.toml"));
    s.session_files = vec![home.path().join("absent-cli.toml")];
    let e = Policy::load(&s).unwrap_err();
    assert!(e.file.ends_with("absent-cli.toml"), "{e}");
    // A bad managed file is an error naming it.
    s.session_files.clear();
    std::fs::write(&managed, "[permission]\nbash = \"alow\"\n").unwrap();
    let e = Policy::load(&s).unwrap_err();
    assert_eq!((e.file.clone(), e.line), (managed.display().to_string(), 2));
}

#[test]
fn policy_test_rechecks_examples() {
    let f = fixture();
    let text = "[[rules]]\naction = \"bash\"\nresource = \"cargo test *\"\neffect = \"allow\"\nmatch = [\"cargo test\", \"cargo test -p core\"]\nnot_match = [\"cargo testx\"]\n";
    let p = policy(&f, &[("p.toml", Layer::Project, text)], None);
    assert_eq!(p.examples().len(), 3);
    assert!(p.test_examples().is_empty());
}

#[test]
fn denies_wholesale_only_for_a_final_bare_deny() {
    let f = fixture();
    let p = policy(
        &f,
        &[(
            "p.toml",
            Layer::Project,
            "[permission]\nwebfetch = \"deny\"\n[permission.bash]\n\"*\" = \"deny\"\n\"ls\" = \"allow\"\n",
        )],
        None,
    );
    assert!(p.denies_wholesale("webfetch"));
    assert!(!p.denies_wholesale("bash"));
    assert!(!p.denies_wholesale("read"));
}

/// An upstream tool's own name is judged as an action only when a rule
/// covers it; without one a read of that action is allowed by default.
#[test]
fn names_action_sees_exact_names_patterns_over_actions_and_every_layer() {
    let f = fixture();
    let p = policy(
        &f,
        &[(
            "u.toml",
            Layer::User,
            "[permission]\nfs__write_file = \"ask\"\n[permission.\"tracker__*\"]\n\"*\" = \"deny\"\n",
        )],
        None,
    );
    assert!(p.names_action("fs__write_file"));
    assert!(p.names_action("tracker__create_issue"));
    assert!(!p.names_action("fs__read_text_file"));
    assert!(!p.names_action("fs__write_file_2"));
    let managed = policy(
        &f,
        &[(
            "m.toml",
            Layer::Managed,
            "[permission]\nev__echo = \"deny\"\n",
        )],
        None,
    );
    assert!(managed.names_action("ev__echo"));
    assert!(!managed.names_action("ev__add"));
    // A default for a read is an allow in every mode: nothing else can
    // decide a read request whose action no rule names.
    let read = PermissionRequest::new("fs__read_text_file", "*", Risk::Read);
    for mode in [Mode::Default, Mode::Plan, Mode::AcceptEdits, Mode::Auto] {
        let p = policy(&f, &[], Some(mode));
        let v = p.judge(&read, false, None, &f.loc, &NoApprovals);
        assert_eq!(v.decision.effect, Effect::Allow, "{mode:?}");
    }
}

/// Found by hand with `toolgate check`: `[permission.bash] "*" = "allow"` let
/// `sudo ls` run as root. Running as another user needs a rule that names it.
#[test]
fn bare_wildcard_never_allows_running_as_another_user() {
    let f = fixture();
    let loc = &f.loc;
    let home = Path::new(HOME).to_path_buf();
    let sudo_requests = |cmd: &str| {
        let ctx = ShellContext {
            location: loc,
            cwd: loc.root().to_path_buf(),
            home: home.clone(),
            inherited_env: true,
        };
        analyze(cmd, &ctx)
    };
    let strictest = |p: &Policy, cmd: &str| {
        sudo_requests(cmd)
            .iter()
            .map(|r| {
                p.judge(&r.request, r.opaque, None, loc, &NoApprovals)
                    .decision
                    .effect
            })
            .max()
            .unwrap()
    };
    let p = policy(
        &f,
        &[(
            "p.toml",
            Layer::Project,
            "[permission.bash]\n\"*\" = \"allow\"\n",
        )],
        None,
    );
    assert_eq!(strictest(&p, "ls"), Effect::Allow);
    assert_eq!(strictest(&p, "sudo ls"), Effect::Ask);
    assert_eq!(strictest(&p, "doas -u www cat index.html"), Effect::Ask);
    let p = policy(
        &f,
        &[("p.toml", Layer::Project, "[permission]\nbash = \"allow\"\n")],
        None,
    );
    assert_eq!(strictest(&p, "sudo ls"), Effect::Ask);
    // A rule that names the command may allow it.
    let text = "[permission.bash]\n\"*\" = \"allow\"\n\"sudo apt-get update *\" = \"allow\"\n";
    let p = policy(&f, &[("p.toml", Layer::Project, text)], None);
    assert_eq!(strictest(&p, "sudo apt-get update"), Effect::Allow);
}
