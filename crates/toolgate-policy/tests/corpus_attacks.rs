//! The attack corpus of the fail-closed analyser: every way in that an
//! adversarial review found, by class, each with many instances beyond the
//! example that found it (`tests/corpus/attacks.jsonl`), and the everyday
//! read-only commands that must stay allowed (`tests/corpus/benign_daily.jsonl`).
//!
//! An attack row is `{"tag", "command", "not": "allow"}` (optionally
//! `"min_risk"`): the built-in default policy, through the public `check`, must
//! not allow it, and its risk must reach `min_risk`. A row of the oracle class
//! names a tool and its input instead of a command (`"tool"`, `"input"`): `check`
//! must refuse it (as the tool does) or not allow it. A row may hold
//! `"repeat": {"open", "middle", "close", "times"}`: `{repeat}` in the command is
//! replaced by `open` × times, `middle`, `close` × times (inputs too large to
//! write out). Rows of the `stall` class are judged in a child process (the same
//! test binary), so a stack overflow or a stall is reported as such instead of
//! killing the run; a `stall` row may leave out `not` (it must only finish).
//!
//! Placeholders `{ws}`, `{home}` and `{out}` name the fixture's workspace, fake
//! home and outside directory (see `corpus/fixture.rs` for what they hold).
//!
//! `CORPUS_DUMP=1` prints every row's requests; `CORPUS_TAG=heredoc` runs one
//! class; `CORPUS_STALL_SECS=N` bounds a stall row's child (default 20 s).

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fixture::{Fixture, dumping, parse_effect, parse_risk};
use serde_json::{Value, json};
use toolgate_core::{Effect, Risk};
use toolgate_policy::config::Mode;
use toolgate_policy::policy::Policy;

/// The classes of issue 10, by tag, in its order, then those of issue 25.
const CLASSES: &[(&str, &str)] = &[
    (
        "heredoc",
        "1 grammar the walker drops (heredoc lines, other nodes)",
    ),
    ("builtin-code", "2 builtins that run code or arithmetic"),
    ("path-name", "3 a command given as a path or redefined"),
    (
        "global-option",
        "4 an option's value taken for the subcommand",
    ),
    ("wrapper-option", "5 wrapper options parsed partially"),
    ("reads-more", "6 read tools that read more than operands"),
    ("runs-code", "7 read tools that run code"),
    ("writes", "8 read tools that write"),
    ("cwd-form", "9 working-directory and path forms"),
    (
        "destructive-network",
        "10 destructive and network commands classed read",
    ),
    ("secret-print", "11 secrets printed by ordinary commands"),
    ("stall", "12 inputs that crash or stall the gate"),
    ("oracle-tool", "13 the oracle and the tool disagree"),
    (
        "secret-env",
        "25.3 secret variables, by name or by a password in the value",
    ),
    (
        "code-eval",
        "25.4 programs given code or a module by their arguments",
    ),
    (
        "secret-file",
        "25.2 secret files under names the credential table gained",
    ),
    ("unbounded", "25.5 words past the brace expansion's bound"),
    ("upload", "25.8 secret files read and sent over the network"),
];

const ATTACKS: &str = "attacks.jsonl";
const BENIGN: &str = "benign_daily.jsonl";
/// Set in a child process: `<line>` of the attack row it judges.
const CHILD_ENV: &str = "CORPUS_ATTACK_CHILD";
/// What a child prints before its answer.
const CHILD_MARK: &str = "CORPUS_CHILD_ANSWER ";

/// One row of a corpus file.
#[derive(Clone, Debug)]
struct Row {
    line: usize,
    tag: String,
    /// `bash` unless the row names another tool.
    tool: String,
    /// The tool's input, placeholders not yet expanded.
    input: Value,
    /// The decision the row must not get (attacks).
    not: Option<Effect>,
    /// The decision the row must get (benign).
    decision: Option<Effect>,
    min_risk: Option<Risk>,
}

impl Row {
    /// The command or input, for reports (long ones cut).
    fn label(&self) -> String {
        let only_command = self.input.as_object().is_some_and(|m| m.len() == 1);
        let text = match self.input.get("command").and_then(Value::as_str) {
            Some(c) if self.tool == "bash" && only_command => format!("{c:?}"),
            _ => format!("{} {}", self.tool, self.input),
        };
        if text.chars().count() > 160 {
            let cut: String = text.chars().take(160).collect();
            format!("{cut}… ({} bytes)", text.len())
        } else {
            text
        }
    }
}

fn load(file: &str) -> Vec<Row> {
    let path = format!("{}/tests/corpus/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut rows = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let at = format!("{file}:{}", i + 1);
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{at}: {e}"));
        let text_of = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        let tag = text_of("tag").unwrap_or_else(|| panic!("{at}: no tag"));
        let tool = text_of("tool").unwrap_or_else(|| "bash".into());
        let input = if tool == "bash" && v.get("input").is_none() {
            let mut command = text_of("command").unwrap_or_else(|| panic!("{at}: no command"));
            if let Some(r) = v.get("repeat") {
                let part = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
                let times = r
                    .get("times")
                    .and_then(Value::as_u64)
                    .unwrap_or_else(|| panic!("{at}: repeat without times"))
                    as usize;
                let built = format!(
                    "{}{}{}",
                    part("open").repeat(times),
                    part("middle"),
                    part("close").repeat(times)
                );
                assert!(command.contains("{repeat}"), "{at}: no {{repeat}}");
                command = command.replace("{repeat}", &built);
            }
            json!({ "command": command })
        } else {
            v.get("input")
                .cloned()
                .unwrap_or_else(|| panic!("{at}: a {tool} row needs an input"))
        };
        rows.push(Row {
            line: i + 1,
            tag,
            tool,
            input,
            not: text_of("not").map(|s| parse_effect(&s)),
            decision: text_of("decision").map(|s| parse_effect(&s)),
            min_risk: text_of("min_risk").map(|s| parse_risk(&s)),
        });
    }
    rows
}

/// What the gate answered for one row.
#[derive(Clone, Debug, PartialEq)]
enum Answer {
    /// Judged: decision and risk.
    Judged(Effect, Risk, String),
    /// The intent refused the input (the tool refuses it too).
    Refused(String),
    /// The child process died (stack overflow, abort, panic).
    Crashed(String),
    /// The child did not finish within the bound.
    Stalled(u64),
}

fn judge(fx: &Fixture, policy: &Policy, row: &Row) -> Answer {
    let input = fx.expand_json(&row.input);
    if dumping() && row.tool == "bash" {
        if let Some(c) = row.input.get("command").and_then(Value::as_str) {
            fx.dump(&format!("[{}] line {}", row.tag, row.line), c);
        }
    }
    match fx.check_call(policy, &row.tool, &input) {
        Ok(o) => Answer::Judged(o.decision, o.risk, o.reason),
        Err(e) => Answer::Refused(e.to_string()),
    }
}

/// Judges `row` in a child process: this test binary, running only
/// `test_name` with [`CHILD_ENV`] naming the row, under a 2 GiB address-space
/// limit (an input that makes the analyser allocate without bound must not
/// take the machine down with it).
fn spawn_child(test_name: &str, row: &Row, mode: &str) -> Child {
    let exe = std::env::current_exe().unwrap();
    // Files, not pipes: a child never blocks on a full pipe.
    let out = tempfile::tempfile().unwrap();
    let err = tempfile::tempfile().unwrap();
    let process = Command::new("/bin/sh")
        .arg("-c")
        .arg("ulimit -v 2097152 2>/dev/null; exec \"$0\" \"$@\"")
        .arg(exe)
        .args([
            fixture::harness_name(module_path!(), test_name).as_str(),
            "--exact",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_ENV, format!("{}:{mode}", row.line))
        .env_remove("CORPUS_DUMP")
        .stdin(Stdio::null())
        .stdout(Stdio::from(out.try_clone().unwrap()))
        .stderr(Stdio::from(err.try_clone().unwrap()))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start a child for line {}: {e}", row.line));
    Child { process, out, err }
}

/// A child process and the files holding its output.
struct Child {
    process: std::process::Child,
    out: std::fs::File,
    err: std::fs::File,
}

/// Children running at once (the machine is shared).
const CHILDREN_AT_ONCE: usize = 3;

/// Judges `rows` in child processes, a few at a time, killing a child still
/// running after the bound (`CORPUS_STALL_SECS`, default 20 s of wall time
/// for what must take at most 50 ms of CPU).
fn judge_in_children(test_name: &str, rows: &[&Row], mode: &str) -> BTreeMap<usize, Answer> {
    let bound = std::env::var("CORPUS_STALL_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20u64);
    let mut queue = rows.iter().rev().copied().collect::<Vec<_>>();
    let mut running: Vec<(usize, Instant, Child)> = Vec::new();
    let mut answers = BTreeMap::new();
    while !queue.is_empty() || !running.is_empty() {
        while running.len() < CHILDREN_AT_ONCE {
            let Some(row) = queue.pop() else { break };
            running.push((row.line, Instant::now(), spawn_child(test_name, row, mode)));
        }
        let mut still = Vec::new();
        for (line, started, mut child) in running {
            match child.process.try_wait() {
                Ok(Some(status)) => {
                    answers.insert(line, child_answer(status, &mut child));
                }
                Ok(None) if started.elapsed() > Duration::from_secs(bound) => {
                    let _ = child.process.kill();
                    let _ = child.process.wait();
                    answers.insert(line, Answer::Stalled(bound));
                }
                Ok(None) => still.push((line, started, child)),
                Err(e) => {
                    answers.insert(line, Answer::Crashed(format!("wait failed: {e}")));
                }
            }
        }
        running = still;
        if !running.is_empty() {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    answers
}

/// The answer a finished child printed, or how it died.
fn child_answer(status: std::process::ExitStatus, child: &mut Child) -> Answer {
    let read = |f: &mut std::fs::File| {
        let mut text = String::new();
        let _ = f.seek(SeekFrom::Start(0));
        let _ = f.read_to_string(&mut text);
        text
    };
    let out = read(&mut child.out);
    let err = read(&mut child.err);
    // libtest prints `test NAME ... ` before the test's own output.
    out.lines()
        .find_map(|l| l.split_once(CHILD_MARK).map(|(_, j)| j))
        .and_then(|j| serde_json::from_str::<Value>(j).ok())
        .map(|v| answer_from_json(&v))
        .unwrap_or_else(|| {
            let why = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            Answer::Crashed(format!("{status}: {why}"))
        })
}

fn answer_json(a: &Answer) -> Value {
    match a {
        Answer::Judged(e, r, why) => json!({"decision": e, "risk": r, "reason": why}),
        Answer::Refused(e) => json!({"refused": e}),
        Answer::Crashed(e) => json!({"crashed": e}),
        Answer::Stalled(s) => json!({"stalled": s}),
    }
}

fn answer_from_json(v: &Value) -> Answer {
    if let Some(e) = v.get("refused").and_then(Value::as_str) {
        return Answer::Refused(e.into());
    }
    let effect = v
        .get("decision")
        .and_then(Value::as_str)
        .map(parse_effect)
        .unwrap_or(Effect::Allow);
    let risk = v
        .get("risk")
        .and_then(Value::as_str)
        .map(parse_risk)
        .unwrap_or(Risk::Read);
    let why = v.get("reason").and_then(Value::as_str).unwrap_or("");
    Answer::Judged(effect, risk, why.into())
}

/// In a child: judges the one row named by [`CHILD_ENV`], prints the answer
/// and returns true. In the parent: false.
fn run_as_child() -> bool {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return false;
    };
    let (line, mode) = spec.split_once(':').unwrap_or((spec.as_str(), "default"));
    let line: usize = line.parse().unwrap();
    let row = load(ATTACKS)
        .into_iter()
        .find(|r| r.line == line)
        .unwrap_or_else(|| panic!("no attack row at line {line}"));
    let fx = Fixture::new();
    let policy = fx.policy(mode_of(mode));
    let answer = judge(&fx, &policy, &row);
    println!("{CHILD_MARK}{}", answer_json(&answer));
    true
}

fn mode_of(name: &str) -> Option<Mode> {
    match name {
        "plan" => Some(Mode::Plan),
        _ => None,
    }
}

fn selected(rows: Vec<Row>) -> Vec<Row> {
    match std::env::var("CORPUS_TAG") {
        Ok(tag) => rows.into_iter().filter(|r| r.tag == tag).collect(),
        Err(_) => rows,
    }
}

/// Judges every attack row in `mode` and returns the failures; prints a
/// per-class table. `in_children`: judge `stall` rows in child processes.
fn run_attacks(test_name: &str, mode: &str, in_children: bool) -> Vec<String> {
    let rows = selected(load(ATTACKS));
    let fx = Fixture::new();
    let policy = fx.policy(mode_of(mode));
    let mut answers = BTreeMap::new();
    let mut children = Vec::new();
    for row in &rows {
        if row.tag == "stall" {
            if in_children {
                children.push(row);
            }
            continue;
        }
        if row.tag == "oracle-tool" {
            // "check and the tool agree" needs the tools, which this crate
            // does not know: `crates/toolgate/tests/one_answer.rs` judges these
            // rows with the real `toolgate check` against the real tools.
            continue;
        }
        answers.insert(row.line, judge(&fx, &policy, row));
    }
    answers.extend(judge_in_children(test_name, &children, mode));
    // Per class: rows, allowed, under the risk floor, crashed or stalled.
    let mut table: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    let mut failures = Vec::new();
    for row in &rows {
        let Some(answer) = answers.get(&row.line) else {
            continue;
        };
        let counts = table.entry(row.tag.as_str()).or_default();
        counts[0] += 1;
        let at = format!("{ATTACKS}:{} [{}] {}", row.line, row.tag, row.label());
        match answer {
            Answer::Judged(effect, risk, why) => {
                if row.not == Some(*effect) {
                    counts[1] += 1;
                    failures.push(format!("{at}: {effect} (risk {risk}: {why})"));
                } else if let Some(min) = row.min_risk.filter(|m| risk < m) {
                    counts[2] += 1;
                    failures.push(format!("{at}: risk {risk}, at least {min} expected"));
                }
            }
            Answer::Refused(_) => {}
            Answer::Crashed(why) => {
                counts[3] += 1;
                failures.push(format!("{at}: the gate crashed: {why}"));
            }
            Answer::Stalled(secs) => {
                counts[3] += 1;
                failures.push(format!("{at}: no decision within {secs} s"));
            }
        }
    }
    println!(
        "attack corpus, mode {mode}: per class, rows / allowed / under min_risk / crashed or stalled"
    );
    for (tag, what) in CLASSES {
        if let Some(c) = table.get(tag) {
            println!(
                "  {tag:<20} {:>4} {:>4} {:>4} {:>4}   {what}",
                c[0], c[1], c[2], c[3]
            );
        }
    }
    let total = table.values().fold([0; 4], |mut acc, c| {
        for i in 0..4 {
            acc[i] += c[i];
        }
        acc
    });
    println!(
        "  {:<20} {:>4} {:>4} {:>4} {:>4}",
        "total", total[0], total[1], total[2], total[3]
    );
    for f in &failures {
        println!("  not held: {f}");
    }
    failures
}

#[test]
fn attacks_are_never_allowed() {
    if run_as_child() {
        return;
    }
    let failures = run_attacks("attacks_are_never_allowed", "default", true);
    assert!(
        failures.is_empty(),
        "{} attack rows not held in the default mode (the table and the `not held` lines above say which)",
        failures.len()
    );
}

/// Plan mode denies whatever is not `read`: an attack classed `read` is the
/// one thing it lets through. (`stall` rows are judged by
/// `attacks_are_never_allowed`; the mode does not change the analysis.)
#[test]
fn attacks_are_never_allowed_in_plan_mode() {
    let failures = run_attacks("attacks_are_never_allowed_in_plan_mode", "plan", false);
    assert!(
        failures.is_empty(),
        "{} attack rows not held in plan mode (the table and the `not held` lines above say which)",
        failures.len()
    );
}

#[test]
fn benign_daily_friction_at_most_5_percent() {
    let rows = load(BENIGN);
    let fx = Fixture::new();
    let policy = fx.policy(None);
    let mut asked = Vec::new();
    for row in &rows {
        let want = row.decision.unwrap_or(Effect::Allow);
        let answer = judge(&fx, &policy, row);
        let got = match &answer {
            Answer::Judged(e, r, why) => {
                if *e == want {
                    continue;
                }
                format!("{e} (risk {r}: {why})")
            }
            other => format!("{other:?}"),
        };
        asked.push(format!("{BENIGN}:{} {} -> {got}", row.line, row.label()));
    }
    let percent = 100.0 * asked.len() as f64 / rows.len().max(1) as f64;
    println!(
        "benign daily corpus: {} of {} everyday read-only commands not allowed ({percent:.1} %)",
        asked.len(),
        rows.len()
    );
    for a in &asked {
        println!("  friction: {a}");
    }
    assert!(
        asked.len() * 100 <= rows.len() * 5,
        "{} of {} benign commands ({percent:.1} %) are not allowed; at most 5 % may be:\n{}",
        asked.len(),
        rows.len(),
        asked.join("\n")
    );
}

#[test]
fn corpus_covers_every_class() {
    let attacks = load(ATTACKS);
    let benign = load(BENIGN);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut problems = Vec::new();
    for row in &attacks {
        if !CLASSES.iter().any(|(t, _)| *t == row.tag) {
            problems.push(format!(
                "{ATTACKS}:{}: unknown class tag {:?}",
                row.line, row.tag
            ));
        }
        if row.not.is_none() && row.tag != "stall" {
            problems.push(format!("{ATTACKS}:{}: no \"not\"", row.line));
        }
        if row.decision.is_some() {
            problems.push(format!(
                "{ATTACKS}:{}: an attack has no expected decision",
                row.line
            ));
        }
        *counts.entry(row.tag.as_str()).or_default() += 1;
    }
    for (tag, what) in CLASSES {
        let n = counts.get(tag).copied().unwrap_or(0);
        println!("  {tag:<20} {n:>4}   {what}");
        if n < 10 {
            problems.push(format!("class {tag} ({what}) has {n} rows; at least 10"));
        }
    }
    if attacks.len() < 220 {
        problems.push(format!("{} attack rows; at least 220", attacks.len()));
    }
    if benign.len() < 170 {
        problems.push(format!("{} benign rows; at least 170", benign.len()));
    }
    for row in &benign {
        if row.tag != "benign-daily" || row.decision != Some(Effect::Allow) || row.tool != "bash" {
            problems.push(format!(
                "{BENIGN}:{}: a benign row is a bash command with tag benign-daily and decision allow",
                row.line
            ));
        }
    }
    // No row twice: a duplicate inflates a class without covering anything.
    let mut seen = BTreeMap::new();
    for row in attacks.iter().chain(&benign) {
        let key = format!("{} {}", row.tool, row.input);
        if let Some(first) = seen.insert(key, row.line) {
            problems.push(format!(
                "line {} repeats line {first}: {}",
                row.line,
                row.label()
            ));
        }
    }
    println!(
        "{} attack rows, {} benign rows",
        attacks.len(),
        benign.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
