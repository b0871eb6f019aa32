//! One answer: `toolgate check` and the tools agree on what a call is. An
//! input the tool refuses before it is judged (`toolgate call` fails with
//! reason `invalid_input` or `intent`) is refused by `check`, alone and in a
//! batch, with the same message; an input the tool accepts gets a decision.
//! Real processes of the real binary on both sides.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use support::cli_env::CliEnv as Env;

fn env() -> Env {
    let e = Env::new();
    e.write(e.ws.join("a.txt"), "hello\nworld\n");
    e.write(e.ws.join("src/lib.rs"), "fn a() {}\n");
    e
}

fn command(e: &Env, args: &[&str]) -> Command {
    e.command(args)
}

/// Runs with `-` standing for `input`, given on stdin (a 128 KB command does
/// not fit in one argument).
fn run(e: &Env, args: &[&str], input: &Value) -> Output {
    let mut child = command(e, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.to_string().as_bytes()).unwrap();
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// What `call` said: `Some(message)` when the tool refused the input before
/// it was judged, `None` when the call got as far as the gate.
fn call_refusal(e: &Env, tool: &str, input: &Value) -> Option<String> {
    let o = run(e, &["call", "--json", tool, "-"], input);
    if o.status.success() {
        return None;
    }
    let out = String::from_utf8_lossy(&o.stdout);
    let v: Value = serde_json::from_str(out.trim())
        .unwrap_or_else(|err| panic!("{tool}: call printed {out:?}: {err}"));
    match v["reason"].as_str() {
        Some("invalid_input" | "intent") => Some(v["error"].as_str().unwrap().to_string()),
        _ => None,
    }
}

/// What `check TOOL JSON --json` said: the decision, or the error message.
fn check_one(e: &Env, tool: &str, input: &Value) -> Result<String, String> {
    let o = run(e, &["check", tool, "-", "--json"], input);
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() {
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        return Ok(v["decision"].as_str().unwrap().to_string());
    }
    assert_eq!(o.status.code(), Some(2), "{tool}: {err}");
    let message = err
        .trim_end()
        .strip_prefix("toolgate: error: ")
        .unwrap_or_else(|| panic!("{tool}: stderr {err:?}"));
    Err(message.to_string())
}

/// Every call through one `check --batch` process: one answer line each.
fn check_batch(e: &Env, calls: &[(&str, Value)]) -> Vec<Value> {
    let mut child = command(e, &["check", "--batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for (tool, input) in calls {
        writeln!(stdin, "{}", json!({"tool": tool, "input": input})).unwrap();
    }
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), calls.len());
    lines
}

/// Inputs each tool refuses, several per tool: decoding (missing, unknown,
/// mistyped fields) and the tool's own checks beyond the schema.
fn refused() -> Vec<(&'static str, Value)> {
    let patch = |text: &str| json!({ "patch": text });
    vec![
        ("read", json!({})),
        ("read", json!({"path": "a.txt", "extra": 1})),
        ("read", json!({"path": "a.txt", "offset": 0})),
        ("read", json!({"path": "a.txt", "limit": 0})),
        ("read", json!({"path": "a\u{0}b"})),
        ("read", json!({"path": 7})),
        ("write", json!({"path": "b.txt"})),
        ("write", json!({"path": "b\u{0}.txt", "content": "x"})),
        (
            "edit",
            json!({"path": "a.txt", "old_string": "x", "new_string": "x"}),
        ),
        (
            "edit",
            json!({"path": "a.txt", "old_string": "", "new_string": "x"}),
        ),
        ("apply_patch", patch("garbage")),
        ("apply_patch", patch("*** Begin Patch\n*** End Patch\n")),
        (
            "apply_patch",
            patch("*** Begin Patch\n*** Frobnicate File: a.txt\n*** End Patch\n"),
        ),
        ("bash", json!({"command": ""})),
        ("bash", json!({"command": "   "})),
        ("bash", json!({"command": "ls\u{0}"})),
        ("bash", json!({"command": "ls", "timeout_ms": 0})),
        (
            "bash",
            json!({"command": "ls", "timeout_ms": 99_999_999_999u64}),
        ),
        ("bash", json!({"command": "x".repeat(2 * 1024 * 1024)})),
        ("list", json!({"ignore": ["a["]})),
        ("list", json!({"ignore": [""]})),
        ("glob", json!({"pattern": "/etc/*"})),
        ("glob", json!({"pattern": "a["})),
        ("glob", json!({"pattern": ""})),
        ("glob", json!({"pattern": "**/*.rs", "path": "a\u{0}"})),
        ("grep", json!({"pattern": "("})),
        ("grep", json!({"pattern": "x", "include": "a["})),
        ("webfetch", json!({"url": "ftp://example.com/x"})),
        ("webfetch", json!({"url": "file:///etc/passwd"})),
        ("webfetch", json!({"url": "not a url"})),
        ("webfetch", json!({"url": "http://127.0.0.1/admin"})),
        ("webfetch", json!({"url": "http://[::1]:8080/"})),
        (
            "webfetch",
            json!({"url": "http://169.254.169.254/latest/meta-data/"}),
        ),
        ("webfetch", json!({"url": "http://10.0.0.1/"})),
        (
            "webfetch",
            json!({"url": "https://docs.rs/", "timeout_ms": 0}),
        ),
        ("websearch", json!({"query": ""})),
        ("websearch", json!({"query": "rust", "num_results": 0})),
        ("todowrite", json!({"todos": "x"})),
        (
            "todowrite",
            json!({"todos": [{"content": "", "status": "pending", "priority": "high"}]}),
        ),
        (
            "todowrite",
            json!({"todos": [{"content": "a", "status": "nope", "priority": "high"}]}),
        ),
        ("question", json!({"questions": []})),
        ("question", json!({"questions": [{"question": "  "}]})),
        ("skill", json!({"name": ""})),
        ("skill", json!({"name": "  "})),
    ]
}

/// Inputs the tools accept (they reach the gate): `check` decides them.
fn accepted() -> Vec<(&'static str, Value)> {
    vec![
        ("read", json!({"path": "a.txt"})),
        ("read", json!({"path": "a.txt", "offset": 2, "limit": 1})),
        ("list", json!({})),
        ("glob", json!({"pattern": "**/*.rs"})),
        (
            "grep",
            json!({"pattern": "fn", "path": "src", "include": "*.rs"}),
        ),
        ("todowrite", json!({"todos": []})),
    ]
}

#[test]
fn an_input_the_tool_refuses_is_refused_by_check_with_the_same_error() {
    let e = env();
    let cases = refused();
    let mut tools: Vec<&str> = cases.iter().map(|(t, _)| *t).collect();
    tools.dedup();
    assert_eq!(tools.len(), 13, "every built-in tool has refused inputs");
    let batch = check_batch(&e, &cases);
    for ((tool, input), line) in cases.iter().zip(&batch) {
        let shown: String = input.to_string().chars().take(120).collect();
        let Some(from_call) = call_refusal(&e, tool, input) else {
            panic!("{tool} {shown}: the tool accepted it; the case is wrong");
        };
        let from_check = check_one(&e, tool, input);
        assert_eq!(from_check, Err(from_call.clone()), "{tool} {shown}");
        assert_eq!(
            line["error"],
            from_call.as_str(),
            "{tool} {shown} in a batch"
        );
    }
}

#[test]
fn an_input_the_tool_accepts_is_decided_by_check() {
    let e = env();
    let cases = accepted();
    let batch = check_batch(&e, &cases);
    for ((tool, input), line) in cases.iter().zip(&batch) {
        assert_eq!(call_refusal(&e, tool, input), None, "{tool} {input}");
        let decision = check_one(&e, tool, input)
            .unwrap_or_else(|err| panic!("{tool} {input}: check refused it: {err}"));
        assert_eq!(line["decision"], decision.as_str(), "{tool} {input}");
    }
}

/// The attack corpus's oracle rows (`tag: oracle-tool` in the policy crate's
/// `tests/corpus/attacks.jsonl`): each input, given to the real `toolgate
/// check`, is refused (as the tool refuses it) or at least not allowed.
#[test]
fn the_attack_corpus_oracle_rows_are_refused_or_not_allowed() {
    let e = env();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../toolgate-policy/tests/corpus/attacks.jsonl"
    ))
    .unwrap();
    let home = e.home.display().to_string();
    let ws = e.ws.display().to_string();
    let mut judged = 0;
    let mut allowed = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Ok(row) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if row["tag"] != "oracle-tool" {
            continue;
        }
        let tool = row["tool"].as_str().unwrap_or("bash");
        let mut input = match (row.get("input"), row["command"].as_str()) {
            (Some(input), _) => input.to_string(),
            (None, Some(c)) => json!({ "command": c }).to_string(),
            (None, None) => panic!("attacks.jsonl:{}: no input", i + 1),
        };
        input = input.replace("{home}", &home).replace("{ws}", &ws);
        let mut input: Value = serde_json::from_str(&input).unwrap();
        if let Some(n) = row["repeat"].as_u64() {
            // `repeat`: the command repeated to its size.
            let c = input["command"].as_str().unwrap_or("").repeat(n as usize);
            input["command"] = json!(c);
        }
        judged += 1;
        if let Ok(decision) = check_one(&e, tool, &input) {
            if decision == "allow" {
                allowed.push(format!("attacks.jsonl:{} {tool} {input}", i + 1));
            }
        }
    }
    assert!(judged >= 20, "only {judged} oracle rows");
    assert!(allowed.is_empty(), "allowed:\n{}", allowed.join("\n"));
}
