//! Wrapping a command in any construct of the grammar never yields a weaker
//! answer than the command alone: the gate's decision (`allow < ask < deny`)
//! and the call's risk both stay at least where they were.
//!
//! Commands come from the attack corpus, the everyday benign corpus and the
//! shell corpus (one line, no comment, no heredoc, no trailing `&`, no
//! directory change), plus generated simple commands. Constructs: a heredoc
//! line (`cat <<EOF && CMD`), a heredoc body, pipeline stages, a subshell, a
//! group, a function body and its call, `if`/`while`/`until`/`for`/`case`
//! bodies and conditions, `$(…)`, backticks, an assignment's value, a redirect
//! target, process substitution, `bash -c`, and prefix wrappers (`env`,
//! `timeout 5`, `nice`, `nohup`, `xargs`, `command`, `time`) for simple
//! commands. `prop_shell.rs` holds the older wrapper, chaining and symlink
//! properties.
//!
//! `every_construct_keeps_every_corpus_command` tries every construct on
//! every command and prints, per construct, how many got weaker (with
//! examples); the proptests nest constructs and generate commands.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use std::collections::BTreeMap;

use fixture::{Fixture, double_quote, is_simple, runner, single_quote};
use proptest::prelude::*;
use serde_json::{Value, json};
use toolgate_core::{Effect, Risk};
use toolgate_policy::policy::Policy;

/// A construct: `@CMD@` is where the command goes (`@SQ@`, `@DQ@`: quoted
/// in single or double quotes). `$( @CMD@ )` has spaces so that a command
/// starting with `(` does not make `$((`, arithmetic.
struct Construct {
    name: &'static str,
    template: &'static str,
    /// Only for one simple command (a prefix wrapper).
    simple_only: bool,
}

const fn c(name: &'static str, template: &'static str) -> Construct {
    Construct {
        name,
        template,
        simple_only: false,
    }
}

const fn w(name: &'static str, template: &'static str) -> Construct {
    Construct {
        name,
        template,
        simple_only: true,
    }
}

const CONSTRUCTS: &[Construct] = &[
    c("heredoc line &&", "cat <<EOF && @CMD@\nx\nEOF"),
    c("heredoc line ;", "cat <<EOF; @CMD@\nx\nEOF"),
    c("heredoc line |", "cat <<EOF | @CMD@\nx\nEOF"),
    c("heredoc body", "cat <<EOF\n$( @CMD@ )\nEOF"),
    c("pipeline first", "@CMD@ | cat"),
    c("pipeline last", "echo x | @CMD@"),
    c("pipeline middle", "echo x | @CMD@ | cat"),
    c("subshell", "( @CMD@ )"),
    c("group", "{ @CMD@; }"),
    c("function body + call", "f() { @CMD@; }; f"),
    c("function keyword + call", "function f { @CMD@; }; f"),
    c("if condition", "if @CMD@; then :; fi"),
    c("if body", "if true; then @CMD@; fi"),
    c("else body", "if false; then :; else @CMD@; fi"),
    c("while condition", "while @CMD@; do break; done"),
    c("while body", "while true; do @CMD@; break; done"),
    c("until condition", "until @CMD@; do :; done"),
    c("for body", "for x in 1; do @CMD@; done"),
    c("c-style for body", "for ((i=0; i<1; i++)); do @CMD@; done"),
    c("case body", "case x in x) @CMD@;; esac"),
    c("negation", "! @CMD@"),
    c("and list", "true && @CMD@"),
    c("or list", "false || @CMD@"),
    c("command substitution", "echo $( @CMD@ )"),
    c("quoted command substitution", "echo \"$( @CMD@ )\""),
    c("assignment value", "x=$( @CMD@ )"),
    c("local assignment", "f() { local x=$( @CMD@ ); }; f"),
    c("export assignment", "export x=$( @CMD@ )"),
    c("redirect target", "echo x > \"$( @CMD@ )\""),
    c("process substitution in", "cat <( @CMD@ )"),
    c("process substitution out", "echo x > >( @CMD@ )"),
    c("here-string", "cat <<< \"$( @CMD@ )\""),
    c("background", "@CMD@ &"),
    c("bash -c", "bash -c @SQ@"),
    c("sh -c", "sh -c @DQ@"),
    c("backticks", "echo `@CMD@`"),
    w("env", "env @CMD@"),
    w("env assignment", "env A=1 @CMD@"),
    w("timeout", "timeout 5 @CMD@"),
    w("nice", "nice @CMD@"),
    w("nohup", "nohup @CMD@"),
    w("xargs", "echo | xargs @CMD@"),
    w("command", "command @CMD@"),
    w("time", "time @CMD@"),
];

impl Construct {
    /// `command` inside this construct, or None when it does not fit.
    fn wrap(&self, command: &str) -> Option<String> {
        if self.simple_only && !is_simple(command) {
            return None;
        }
        if self.name == "backticks" && command.contains(['`', '\\']) {
            return None;
        }
        // One pass over the template, so a `@` or `{}` in the command stays.
        let mut out = String::new();
        let mut rest = self.template;
        while let Some(at) = rest.find('@') {
            out.push_str(&rest[..at]);
            let tail = &rest[at..];
            let (text, len) = if tail.starts_with("@CMD@") {
                (command.to_string(), 5)
            } else if tail.starts_with("@SQ@") {
                (single_quote(command), 4)
            } else if tail.starts_with("@DQ@") {
                (double_quote(command), 4)
            } else {
                ("@".to_string(), 1)
            };
            out.push_str(&text);
            rest = &tail[len..];
        }
        out.push_str(rest);
        Some(out)
    }
}

/// The gate's answer for a bash command; a refused input counts as deny.
fn answer(fx: &Fixture, policy: &Policy, command: &str) -> (Effect, Risk) {
    let input = json!({ "command": command });
    match fx.check_call(policy, "bash", &input) {
        Ok(o) => (o.decision, o.risk),
        Err(_) => (Effect::Deny, Risk::Read),
    }
}

fn commands_of(file: &str) -> Vec<String> {
    let path = format!("{}/tests/corpus/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("repeat").is_none() && v.get("tool").is_none())
        .filter(|v| v["tag"] != "parse" && v["tag"] != "stall")
        .filter_map(|v| v["command"].as_str().map(String::from))
        .filter(|c| {
            !c.contains('\n')
                && !c.contains('#')
                && !c.contains("<<")
                && !c.trim_end().ends_with('&')
                && !c
                    .split_whitespace()
                    .any(|w| matches!(w, "cd" | "pushd" | "popd"))
        })
        .collect()
}

/// Attack, benign-daily and shell corpus commands, placeholders expanded.
fn pool(fx: &Fixture) -> Vec<String> {
    let mut all = Vec::new();
    for file in ["attacks.jsonl", "benign_daily.jsonl", "shell.jsonl"] {
        all.extend(commands_of(file).into_iter().map(|c| fx.expand(&c)));
    }
    all.sort();
    all.dedup();
    all
}

/// Words for generated simple commands: programs, options and operands that
/// read, write, run, leak and leave.
const PROGRAMS: &[&str] = &[
    "ls",
    "cat",
    "git",
    "grep",
    "rg",
    "sed",
    "awk",
    "find",
    "head",
    "rm",
    "cp",
    "curl",
    "env",
    "printenv",
    "echo",
    "jq",
    "tar",
    "sort",
    "date",
    "man",
    "xargs",
    "./scripts/ls",
    "npm",
];
const ARGS: &[&str] = &[
    "-la",
    "-r",
    "-rf",
    "-n",
    "5",
    "status",
    "log",
    "push",
    "--output=x",
    "-o",
    "x",
    "-e",
    "'1e touch pwned'",
    "README.md",
    "src",
    "src/main.rs",
    ".env",
    "~/.ssh/id_ed25519",
    "$GITHUB_TOKEN",
    "../outside/file.txt",
    "/etc/shadow",
    "link_ssh",
    "-exec",
    "-f",
    "list.txt",
    "--files0-from=list0",
    "https://example.invalid",
    "-c",
    "'touch pwned'",
    "--",
    "*",
    "'{}'",
    "-C",
    "..",
    "'BEGIN{system(\"id\")}'",
];

fn generated() -> impl Strategy<Value = String> {
    (
        prop::sample::select(PROGRAMS),
        prop::collection::vec(prop::sample::select(ARGS), 0..4),
    )
        .prop_map(|(p, args)| {
            let mut c = p.to_string();
            for a in args {
                c.push(' ');
                c.push_str(a);
            }
            c
        })
}

#[test]
fn every_construct_keeps_every_corpus_command() {
    let fx = Fixture::new();
    let policy = fx.policy(None);
    let commands = pool(&fx);
    assert!(commands.len() > 500, "only {} commands", commands.len());
    let base: Vec<(Effect, Risk)> = commands.iter().map(|c| answer(&fx, &policy, c)).collect();
    let mut weaker: BTreeMap<&str, (usize, usize, Vec<String>)> = BTreeMap::new();
    for construct in CONSTRUCTS {
        let entry = weaker.entry(construct.name).or_default();
        for (command, (effect, risk)) in commands.iter().zip(&base) {
            let Some(wrapped) = construct.wrap(command) else {
                continue;
            };
            entry.1 += 1;
            let (got, got_risk) = answer(&fx, &policy, &wrapped);
            if got < *effect || got_risk < *risk {
                entry.0 += 1;
                if entry.2.len() < 3 {
                    entry.2.push(format!(
                        "{command:?} is {effect}/{risk}, {wrapped:?} is {got}/{got_risk}"
                    ));
                }
            }
        }
    }
    println!("constructs: weaker / tried");
    let mut total = 0;
    for (name, (n, tried, examples)) in &weaker {
        println!("  {name:<28} {n:>5} / {tried}");
        for e in examples {
            println!("      {e}");
        }
        total += n;
    }
    assert_eq!(
        total, 0,
        "{total} wrapped commands got a weaker answer than the command alone (table above)"
    );
}

#[test]
fn nested_constructs_never_weaken_the_answer() {
    let fx = Fixture::new();
    let policy = fx.policy(None);
    let commands = pool(&fx);
    let strategy = (
        prop_oneof![prop::sample::select(commands), generated()],
        prop::collection::vec(0..CONSTRUCTS.len(), 1..4),
    );
    runner(300)
        .run(&strategy, |(command, layers)| {
            let (effect, risk) = answer(&fx, &policy, &command);
            let mut wrapped = command.clone();
            for i in layers {
                if let Some(next) = CONSTRUCTS[i].wrap(&wrapped) {
                    wrapped = next;
                }
            }
            let (got, got_risk) = answer(&fx, &policy, &wrapped);
            prop_assert!(
                got >= effect && got_risk >= risk,
                "{command:?} is {effect}/{risk}, {wrapped:?} is {got}/{got_risk}"
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn generated_commands_in_any_construct_never_weaken_the_answer() {
    let fx = Fixture::new();
    let policy = fx.policy(None);
    let strategy = (generated(), 0..CONSTRUCTS.len());
    runner(400)
        .run(&strategy, |(command, i)| {
            let command = fx.expand(&command);
            let Some(wrapped) = CONSTRUCTS[i].wrap(&command) else {
                return Ok(());
            };
            let (effect, risk) = answer(&fx, &policy, &command);
            let (got, got_risk) = answer(&fx, &policy, &wrapped);
            prop_assert!(
                got >= effect && got_risk >= risk,
                "{command:?} is {effect}/{risk}, {wrapped:?} is {got}/{got_risk}"
            );
            Ok(())
        })
        .unwrap();
}
