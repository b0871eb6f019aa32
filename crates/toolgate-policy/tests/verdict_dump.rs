//! The verdict dump: a tool for refactoring the command knowledge (the
//! command table and the read specs) without changing what is decided.
//!
//! `VERDICT_DUMP=FILE cargo test -p toolgate-policy --test all
//! verdict_dump -- --ignored` writes one line per command: where it comes
//! from, the command, the gate's decision under the default policy, and
//! each request the analyser makes of it (action, resource, risk, the
//! pattern "always" would save, opaque, reason). The commands are every
//! shell command of the corpus files
//! (`tests/corpus/*.jsonl`, paths wrapped as the path corpus wraps them),
//! every example of every read spec (`src/classify/specs/*.toml`), and each
//! of those examples again with an option no program knows put after the
//! program's name: that makes the spec's proof fail, so the line shows
//! what is known of the program beyond its read spec. Dump before and
//! after a change, and compare the files.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use std::fmt::Write as _;

use fixture::Fixture;
use serde_json::Value;

/// An option no program knows, to make a read spec's proof fail.
const UNKNOWN_OPTION: &str = "--toolgate-unknown-option";

/// Every shell command of the corpus files, each with where it comes from.
fn corpus_commands() -> Vec<(String, String)> {
    let dir = format!("{}/tests/corpus", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line).unwrap();
            let tag = v["tag"].as_str().unwrap_or("");
            let command = if let Some(c) = v["command"].as_str() {
                c.to_string()
            } else if let Some(p) = v["path"].as_str() {
                // As the path corpus wraps its paths.
                match tag {
                    "redirect" => format!("echo x > '{p}'"),
                    "write" => format!("touch -- '{p}'"),
                    _ => format!("cat -- '{p}'"),
                }
            } else {
                continue;
            };
            out.push((format!("{file}:{}", i + 1), command));
        }
    }
    out
}

/// Every `read`/`not_read` example of a spec entry and of its subcommands'
/// entries, with the entry's key path.
fn examples_of(entry: &toml::Table, at: &str, out: &mut Vec<(String, String)>) {
    for key in ["read", "not_read"] {
        let items = entry.get(key).and_then(toml::Value::as_array);
        for item in items.into_iter().flatten().filter_map(toml::Value::as_str) {
            out.push((format!("{at}.{key}"), item.to_string()));
        }
    }
    let subs = entry.get("sub").and_then(toml::Value::as_table);
    for (key, sub) in subs.into_iter().flatten() {
        if let Some(sub) = sub.as_table() {
            examples_of(sub, &format!("{at}.sub.{key}"), out);
        }
    }
}

/// Every example of every read spec, and each again with an unknown option.
fn spec_commands() -> Vec<(String, String)> {
    let dir = format!("{}/src/classify/specs", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut examples = Vec::new();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let table: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for (key, entry) in &table {
            if let Some(entry) = entry.as_table() {
                examples_of(entry, &format!("{file}.{key}"), &mut examples);
            }
        }
    }
    let mut out = Vec::new();
    for (at, command) in examples {
        let unproven = match command.split_once(' ') {
            Some((program, rest)) => format!("{program} {UNKNOWN_OPTION} {rest}"),
            None => format!("{command} {UNKNOWN_OPTION}"),
        };
        out.push((at.clone(), command));
        out.push((format!("{at}+unknown"), unproven));
    }
    out
}

/// One command's line: its decision and every request, with the fixture's
/// paths put back as placeholders.
fn line(fx: &Fixture, policy: &toolgate_policy::policy::Policy, at: &str, command: &str) -> String {
    let decision = fx.bash_decision(policy, command);
    let mut text = format!("{at}\t{command:?}\t{decision}");
    for r in fx.analyze(command) {
        write!(text, "\t[{}]", fixture::describe(&r)).unwrap();
    }
    let base = fx.ws.parent().unwrap();
    let placeholders = [
        (fx.ws.as_path(), "{ws}"),
        (fx.home.as_path(), "{home}"),
        (fx.out.as_path(), "{out}"),
        (base, "{base}"),
    ];
    let text = placeholders
        .iter()
        .fold(text, |t, (path, name)| {
            t.replace(&*path.to_string_lossy(), name)
        })
        .replace(&format!("/proc/{}", std::process::id()), "/proc/{pid}")
        .replace('\n', "\\n");
    without_thread_ids(&text)
}

/// `text` with the number after each `/proc/{pid}/task/` replaced by `{tid}`.
fn without_thread_ids(text: &str) -> String {
    const TASK: &str = "/proc/{pid}/task/";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(TASK) {
        out.push_str(&rest[..at + TASK.len()]);
        rest = rest[at + TASK.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push_str("{tid}");
    }
    out.push_str(rest);
    out
}

#[test]
#[ignore = "a tool: VERDICT_DUMP=FILE cargo test -p toolgate-policy --test all verdict_dump -- --ignored"]
fn verdict_dump() {
    let target = std::env::var_os("VERDICT_DUMP").expect("VERDICT_DUMP=FILE names the dump");
    let fx = Fixture::new();
    let policy = fx.policy(None);
    let commands: Vec<(String, String)> = corpus_commands()
        .into_iter()
        .chain(spec_commands())
        .collect();
    assert!(commands.len() > 1000, "only {} commands", commands.len());
    let mut dump = String::new();
    for (at, command) in &commands {
        dump.push_str(&line(&fx, &policy, at, command));
        dump.push('\n');
    }
    std::fs::write(&target, dump).unwrap();
    println!("{} commands dumped", commands.len());
}
