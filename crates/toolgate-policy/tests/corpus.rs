//! The shell corpus: commands and path cases kept as data in `tests/corpus/`,
//! each with its expected risk and decision under the default policy, checked
//! against a real filesystem fixture (git repo, `.env` files, a fake home,
//! symlinks in and out).
//!
//! The decision is the gate's: the public `Policy` (built-in defaults, no config
//! files) judging the bash tool's intent through `check`, cross-checked against
//! the decision tree's defaults applied to the analyser's requests.
//!
//! Prints how many dangerous commands were allowed (must be zero) and how many
//! benign read-only commands are asked (friction).

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use fixture::{Fixture, default_decision, dumping, max_risk, parse_effect, parse_risk};
use serde_json::Value;
use toolgate_core::{Effect, Risk};
use toolgate_policy::config::Mode;

struct Case {
    line: usize,
    tag: String,
    command: String,
    risk: Risk,
    decision: Effect,
    opaque: Option<bool>,
    /// The mode to judge in (`"mode": "accept-edits"`); the default otherwise.
    mode: Option<Mode>,
}

fn load(file: &str, key: &str) -> Vec<Case> {
    let path = format!("{}/tests/corpus/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{file}:{}: {e}", i + 1));
            let field = |k: &str| {
                v[k].as_str()
                    .unwrap_or_else(|| panic!("{file}:{}: missing {k}", i + 1))
                    .to_string()
            };
            Case {
                line: i + 1,
                tag: field("tag"),
                command: field(key),
                risk: parse_risk(&field("risk")),
                decision: parse_effect(&field("decision")),
                opaque: v["opaque"].as_bool(),
                mode: v["mode"].as_str().map(|m| {
                    m.parse()
                        .unwrap_or_else(|e| panic!("{file}:{}: {e}", i + 1))
                }),
            }
        })
        .collect()
}

/// Runs `cases`, returning (failures, dangerous allowed, friction).
fn run(
    fx: &Fixture,
    file: &str,
    cases: &[Case],
    command_of: impl Fn(&Case) -> String,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut failures = Vec::new();
    let mut dangerous_allowed = Vec::new();
    let mut friction = Vec::new();
    let dump = dumping();
    let policy = fx.policy(None);
    for case in cases {
        let command = command_of(case);
        let requests = fx.analyze(&command);
        let risk = max_risk(&requests);
        // The gate's answer, and the decision tree's defaults applied to the
        // analyser's requests directly: they must agree (the defaults know
        // no modes and no protected paths, so a row with a mode, or one
        // writing a protected path, is judged by the gate alone).
        let moded;
        let policy = match case.mode {
            Some(m) => {
                moded = fx.policy(Some(m));
                &moded
            }
            None => &policy,
        };
        let decision = fx.bash_decision(policy, &command);
        let guarded = case.mode.is_some() || case.tag == "redirect";
        let by_default = if guarded {
            decision
        } else {
            default_decision(&requests)
        };
        let opaque = requests.iter().any(|r| r.opaque);
        if dump {
            fx.dump(&format!("{file}:{} [{}]", case.line, case.tag), &command);
        }
        let mut wrong = Vec::new();
        if risk != case.risk {
            wrong.push(format!("risk {risk} (expected {})", case.risk));
        }
        if decision != case.decision {
            wrong.push(format!("decision {decision} (expected {})", case.decision));
        }
        if by_default != decision {
            wrong.push(format!(
                "the gate says {decision}, the defaults over the analyser's requests say {by_default}"
            ));
        }
        if let Some(want) = case.opaque {
            if want != opaque {
                wrong.push(format!("opaque {opaque} (expected {want})"));
            }
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{file}:{} {command:?}: {}",
                case.line,
                wrong.join(", ")
            ));
        }
        if case.decision != Effect::Allow && decision == Effect::Allow {
            dangerous_allowed.push(format!("{file}:{} {command:?}", case.line));
        }
        if (case.tag == "benign" || case.tag == "friction") && decision != Effect::Allow {
            friction.push(format!("{file}:{} {command:?} -> {decision}", case.line));
        }
    }
    (failures, dangerous_allowed, friction)
}

#[test]
fn shell_corpus() {
    let fx = Fixture::new();
    let cases = load("shell.jsonl", "command");
    assert!(
        cases.len() >= 300,
        "the corpus holds {} commands",
        cases.len()
    );
    let (failures, dangerous, friction) = run(&fx, "shell.jsonl", &cases, |c| c.command.clone());
    let benign = cases
        .iter()
        .filter(|c| c.tag == "benign" || c.tag == "friction")
        .count();
    println!(
        "shell corpus: {} commands, {} dangerous allowed, {} of {} benign read-only commands asked (friction)",
        cases.len(),
        dangerous.len(),
        friction.len(),
        benign
    );
    for f in &friction {
        println!("  friction: {f}");
    }
    for f in &failures {
        println!("  wrong: {f}");
    }
    assert!(
        dangerous.is_empty(),
        "dangerous commands allowed:\n{}",
        dangerous.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn path_corpus() {
    let fx = Fixture::new();
    let cases = load("paths.jsonl", "path");
    assert!(
        cases.len() >= 60,
        "the path corpus holds {} cases",
        cases.len()
    );
    // Each path is read with `cat` (tag `read`), written with `touch` (tag
    // `write`) or by a redirect (tag `redirect`), quoted so the shell passes
    // it unchanged.
    let (failures, dangerous, _) = run(&fx, "paths.jsonl", &cases, |c| match c.tag.as_str() {
        "redirect" => format!("echo x > '{}'", c.command),
        "write" => format!("touch -- '{}'", c.command),
        _ => format!("cat -- '{}'", c.command),
    });
    println!(
        "path corpus: {} cases, {} dangerous allowed",
        cases.len(),
        dangerous.len()
    );
    assert!(
        dangerous.is_empty(),
        "dangerous paths allowed:\n{}",
        dangerous.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
