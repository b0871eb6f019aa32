//! The boundary corpus of issue 25 (`tests/corpus/boundary.jsonl`): writes
//! that make a program run code later, judged in the modes that let
//! ordinary writes through (`config-runs-code`); secret files the credential
//! table knows by name or ending (`secret-file`); the writes that must stay
//! routine (`routine-write`); everyday read-only commands that must not be
//! asked (`friction`) and their look-alikes that must (`friction-held`).
//!
//! A row is `{"tag", "command" | "tool"+"input", "mode"?, "not"? |
//! "decision"?, "min_risk"?}`; placeholders `{ws}` and `{home}` name the
//! fixture's workspace and home (see `corpus/fixture.rs`). In mode `auto`
//! the sandbox is taken as available. `CORPUS_TAG=friction` runs one class.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use std::collections::BTreeMap;

use fixture::{Fixture, parse_effect, parse_risk};
use serde_json::{Value, json};
use toolgate_core::{Effect, Risk};
use toolgate_policy::config::Mode;

const FILE: &str = "boundary.jsonl";

/// The classes, with what they hold.
const CLASSES: &[(&str, &str)] = &[
    (
        "config-runs-code",
        "1 a write that makes another program run code later",
    ),
    ("secret-file", "2 a secret file the credential table knows"),
    (
        "routine-write",
        "1 a write that stays routine (inert, ignored, ordinary)",
    ),
    ("friction", "6 an everyday read-only command"),
    (
        "friction-held",
        "6 a look-alike of one that must stay asked",
    ),
];

struct Row {
    line: usize,
    tag: String,
    tool: String,
    input: Value,
    mode: Option<Mode>,
    not: Option<Effect>,
    decision: Option<Effect>,
    min_risk: Option<Risk>,
}

fn load() -> Vec<Row> {
    let path = format!("{}/tests/corpus/{FILE}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut rows = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let at = format!("{FILE}:{}", i + 1);
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{at}: {e}"));
        let text_of = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        let tool = text_of("tool").unwrap_or_else(|| "bash".into());
        let input = match v.get("input") {
            Some(input) => input.clone(),
            None => {
                json!({ "command": text_of("command").unwrap_or_else(|| panic!("{at}: no command")) })
            }
        };
        rows.push(Row {
            line: i + 1,
            tag: text_of("tag").unwrap_or_else(|| panic!("{at}: no tag")),
            tool,
            input,
            mode: text_of("mode").map(|m| m.parse().unwrap_or_else(|e| panic!("{at}: {e}"))),
            not: text_of("not").map(|s| parse_effect(&s)),
            decision: text_of("decision").map(|s| parse_effect(&s)),
            min_risk: text_of("min_risk").map(|s| parse_risk(&s)),
        });
    }
    rows
}

#[test]
fn boundary_corpus() {
    let rows = load();
    let only = std::env::var("CORPUS_TAG").ok();
    let fx = Fixture::new();
    let mut policies = BTreeMap::new();
    let mut table: BTreeMap<&str, [usize; 2]> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut seen = BTreeMap::new();
    for row in &rows {
        assert!(
            CLASSES.iter().any(|(t, _)| *t == row.tag),
            "{FILE}:{}: unknown class {:?}",
            row.line,
            row.tag
        );
        assert!(
            row.not.is_some() != row.decision.is_some(),
            "{FILE}:{}: a row has either `not` or `decision`",
            row.line
        );
        let key = format!("{} {} {:?}", row.tool, row.input, row.mode);
        if let Some(first) = seen.insert(key, row.line) {
            failures.push(format!("{FILE}:{} repeats line {first}", row.line));
        }
        if only.as_deref().is_some_and(|t| t != row.tag) {
            continue;
        }
        let policy = policies
            .entry(row.mode.map(|m| m.to_string()))
            .or_insert_with(|| {
                let mut p = fx.policy(row.mode);
                p.set_sandbox_available(true);
                p
            });
        let input = fx.expand_json(&row.input);
        let counts = table.entry(row.tag.as_str()).or_default();
        counts[0] += 1;
        let at = format!(
            "{FILE}:{} [{}] {} {}",
            row.line, row.tag, row.tool, row.input
        );
        let (effect, risk, why) = match fx.check_call(policy, &row.tool, &input) {
            Ok(o) => (o.decision, o.risk, o.reason),
            Err(e) => {
                if row.not.is_none() {
                    counts[1] += 1;
                    failures.push(format!("{at}: refused: {e}"));
                }
                continue;
            }
        };
        let wrong = row.not == Some(effect)
            || row.decision.is_some_and(|d| d != effect)
            || row.min_risk.is_some_and(|m| risk < m);
        if wrong {
            counts[1] += 1;
            failures.push(format!("{at}: {effect} (risk {risk}: {why})"));
        }
    }
    println!("boundary corpus: per class, rows / wrong");
    for (tag, what) in CLASSES {
        if let Some(c) = table.get(tag) {
            println!("  {tag:<18} {:>4} {:>4}   {what}", c[0], c[1]);
        }
    }
    let attacks = rows.iter().filter(|r| r.not.is_some()).count();
    let benign: Vec<&Row> = rows.iter().filter(|r| r.decision.is_some()).collect();
    let benign_wrong = failures
        .iter()
        .filter(|f| f.contains("[friction]") || f.contains("[routine-write]"))
        .count();
    println!(
        "  {attacks} rows that must not be allowed; {} routine rows, {benign_wrong} of them not allowed ({:.1} %)",
        benign.len(),
        100.0 * benign_wrong as f64 / benign.len().max(1) as f64
    );
    for f in &failures {
        println!("  wrong: {f}");
    }
    assert!(attacks >= 150, "{attacks} attack rows; at least 150");
    assert!(benign.len() >= 50, "{} routine rows", benign.len());
    assert!(failures.is_empty(), "{} rows wrong", failures.len());
}
