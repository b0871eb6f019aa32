//! `check`, the JSONL batch runner, `explain`, and the built-in intents against
//! the tools' own.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::intent;

use std::path::Path;

use intent::builtin_intent;
use serde_json::{Value, json};
use toolgate_core::{Effect, Location};
use toolgate_policy::check::{
    BatchLine, CheckOutcome, Judgement, check, explain, judge_call, run_batch,
};
use toolgate_policy::policy::{NoApprovals, Policy};
use toolgate_policy::rules::Layer;

fn workspace() -> (tempfile::TempDir, Location) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.rs"), "fn a() {}\n").unwrap();
    std::fs::write(dir.path().join(".env"), "TOKEN=x\n").unwrap();
    let loc = Location::new(dir.path()).unwrap();
    (dir, loc)
}

const CONFIG: &str = "[permission.bash]\n\"git status *\" = \"allow\"\n\"git push *\" = \"ask!\"\n\n[permission.edit]\n\"src/**\" = \"allow\"\n";

fn policy(loc: &Location) -> Policy {
    project_policy(loc, "/home/u", "cfg.toml", CONFIG)
}

/// A policy of one project-layer file `name` holding `text`.
fn project_policy(loc: &Location, home: &str, name: &str, text: &str) -> Policy {
    Policy::from_texts(
        loc.root(),
        Path::new(home),
        &[(name, Layer::Project, text)],
        None,
    )
    .unwrap()
}

/// The judgement of every request of one built-in tool call, with no approvals.
fn judge_all(p: &Policy, loc: &Location, tool: &str, input: &Value) -> Vec<Judgement> {
    judge_call(
        p,
        builtin_intent(tool, input, loc).unwrap(),
        loc,
        &NoApprovals,
    )
}

fn answer(p: &Policy, loc: &Location, tool: &str, input: Value) -> CheckOutcome {
    check(
        p,
        builtin_intent(tool, &input, loc).unwrap(),
        loc,
        &NoApprovals,
    )
}

#[test]
fn batch_answers_every_line_and_goes_on_after_bad_ones() {
    let (_d, loc) = workspace();
    let p = policy(&loc);
    let input = [
        r#"{"tool":"bash","input":{"command":"git status"}}"#,
        "",
        "this is not json",
        r#"{"tool":"read","input":{}}"#,
        r#"{"tool":"edit","input":{"path":"src/a.rs","old_string":"a","new_string":"b"},"root":"/elsewhere"}"#,
        r#"{"tool":"bash","input":{"command":"ls"},"extra":1}"#,
        r#"{"tool":"write","input":{"path":"src/new.rs","content":""}}"#,
    ]
    .join("\n");
    let mut out = Vec::new();
    let summary = run_batch(input.as_bytes(), &mut out, |line: &BatchLine| {
        if line.root.is_some() {
            return Err(format!("bad root {}", line.root.as_deref().unwrap_or("")));
        }
        let reqs = builtin_intent(&line.tool, &line.input, &loc).map_err(|e| e.to_string())?;
        Ok(check(&p, reqs, &loc, &NoApprovals))
    })
    .unwrap();
    assert_eq!((summary.evaluated, summary.errors), (2, 4));
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let numbers: Vec<u64> = lines.iter().map(|l| l["line"].as_u64().unwrap()).collect();
    assert_eq!(
        numbers,
        [1, 3, 4, 5, 6, 7],
        "blank lines are skipped but counted"
    );
    assert_eq!(lines[0]["decision"], "allow");
    assert_eq!(lines[0]["requests"][0]["rule"], "cfg.toml:2");
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap()
            .contains("invalid batch line")
    );
    assert!(lines[2]["error"].as_str().unwrap().contains("path"));
    assert!(lines[3]["error"].as_str().unwrap().contains("bad root"));
    assert!(lines[4]["error"].as_str().unwrap().contains("extra"));
    assert_eq!(lines[5]["decision"], "allow");
    // An error line has exactly `line` and `error`.
    assert_eq!(lines[1].as_object().unwrap().len(), 2);
    // An answer line is the check object plus `line`.
    let mut keys: Vec<&str> = lines[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "decision", "ignored", "line", "reason", "requests", "risk", "sandbox", "source"
        ]
    );
}

#[test]
fn check_answers_for_compound_commands_take_the_strictest() {
    let (_d, loc) = workspace();
    let p = policy(&loc);
    let a = answer(
        &p,
        &loc,
        "bash",
        json!({"command": "git status && cat .env"}),
    );
    assert_eq!(a.decision, Effect::Deny);
    assert_eq!(a.risk, toolgate_core::Risk::Credential);
    assert!(
        a.requests
            .iter()
            .any(|r| r.resource == "git status" && r.decision == Effect::Allow)
    );
    assert!(a.reason.contains(".env"), "{}", a.reason);
    let a = answer(&p, &loc, "bash", json!({"command": "git push origin main"}));
    assert_eq!(a.decision, Effect::Ask);
    assert_eq!(a.source, toolgate_core::DecisionSource::Rule);
}

#[test]
fn explain_says_why_in_words() {
    let (_d, loc) = workspace();
    let p = policy(&loc);
    let input = json!({"command": "git push --force origin main && git status"});
    let judged = judge_all(&p, &loc, "bash", &input);
    let text = explain(&p, "bash", &input, &judged);
    assert!(text.contains("Decision: ASK"), "{text}");
    assert!(
        text.contains("rule bash \"git push *\" at cfg.toml:3"),
        "{text}"
    );
    assert!(text.contains("forces asking"), "{text}");
    assert!(text.contains("destructive"), "{text}");
    assert!(text.contains("asked every time"), "{text}");
    assert!(
        text.contains("rule bash \"git status *\" at cfg.toml:2"),
        "{text}"
    );
    // A default is named as such.
    let input = json!({"url": "https://docs.rs/x"});
    let judged = judge_all(&p, &loc, "webfetch", &input);
    let text = explain(&p, "webfetch", &input, &judged);
    assert!(
        text.contains("no rule matched, so the default for network applies"),
        "{text}"
    );
    assert!(text.contains("remembered as `https://docs.rs/*`"), "{text}");
}

#[test]
fn explain_lists_rules_that_matched_but_did_not_decide() {
    let (_d, loc) = workspace();
    let text = "[permission.bash]\n\"*\" = \"ask\"\n\"git *\" = \"allow\"\n";
    let p = project_policy(&loc, "/h", "c.toml", text);
    let input = json!({"command": "git log"});
    let judged = judge_all(&p, &loc, "bash", &input);
    let out = explain(&p, "bash", &input, &judged);
    assert!(out.contains("also matched, but did not decide"), "{out}");
    assert!(out.contains("bash \"*\" = \"ask\" at c.toml:2"), "{out}");
}

#[test]
fn explain_names_the_another_user_default_not_the_bare_wildcard_it_refused() {
    let (_d, loc) = workspace();
    let text = "[permission.bash]\n\"*\" = \"allow\"\n";
    let p = project_policy(&loc, "/h", "c.toml", text);
    for command in ["sudo ls", "doas -u www cat src/a.rs"] {
        let input = json!({ "command": command });
        let judged = judge_all(&p, &loc, "bash", &input);
        let sudo = judged
            .iter()
            .find(|j| j.expanded.request.action == "bash")
            .unwrap();
        let d = &sudo.verdict.decision;
        assert_eq!(d.effect, Effect::Ask, "{command}");
        assert_eq!(d.source, toolgate_core::DecisionSource::Default);
        assert!(d.rule.is_none(), "{command}: {d:?}");
        // The judge's own reason says what decided, not "no rule matched".
        assert!(!d.reason.contains("no rule matched"), "{}", d.reason);
        assert!(d.reason.contains("another user"), "{}", d.reason);
        assert!(d.reason.contains("c.toml:2"), "{}", d.reason);
        let out = explain(&p, "bash", &input, &judged);
        assert!(out.contains("Decision: ASK"), "{out}");
        assert!(
            out.contains("the default for commands run as another user"),
            "{out}"
        );
        assert!(!out.contains("no rule matched"), "{out}");
        assert!(!out.contains("because: rule bash \"*\""), "{out}");
        // The refused rule is still shown, with why it could not decide.
        assert!(
            out.contains("bash \"*\" = \"allow\" at c.toml:2 (a bare wildcard never allows a command run as another user)"),
            "{out}"
        );
    }
    // A rule that names the command still decides, and explain names it.
    let text = "[permission.bash]\n\"*\" = \"allow\"\n\"sudo ls *\" = \"allow\"\n";
    let p = project_policy(&loc, "/h", "c.toml", text);
    let input = json!({"command": "sudo ls"});
    let judged = judge_all(&p, &loc, "bash", &input);
    let out = explain(&p, "bash", &input, &judged);
    assert!(out.contains("Decision: ALLOW"), "{out}");
    assert!(
        out.contains("because: rule bash \"sudo ls *\" at c.toml:3"),
        "{out}"
    );
}
