//! The least CPU an MCP server can spend on the benchmark's calls: the bench
//! binary, re-run with `--floor-server`, answers JSON-RPC lines on stdin with
//! plain blocking `std` I/O and `serde_json` — no async runtime, no MCP SDK, no
//! policy, no path checks, no output bounding. With `--log DIR` it also writes
//! the events toolgate's pipeline writes for an allowed call (the judgement,
//! decision and `tool.started` in one commit before the tool runs, then
//! `tool.completed`) through the real `toolgate_store::EventLog`.
//!
//! It is not a server anyone should run: it exists so that the benchmark can
//! show how much of toolgate's CPU per call is the floor that any server doing
//! this work pays (kernel directory reads, pipe round trips, the audit log's
//! commits), beside what toolgate adds on top.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};
use toolgate_core::{DecisionSource, Effect, Event, EventKind, EventPayload, EventSink, Risk};
use toolgate_store::{Durability, EventLog};

/// The argument that makes the bench binary a floor server.
pub const FLAG: &str = "--floor-server";

/// Serves stdin until it closes. `args` are the process arguments after [`FLAG`]:
/// `ROOT [--log DIR]`.
pub fn serve(args: &[String]) {
    let root = PathBuf::from(&args[0]);
    let log = match args.get(1).map(String::as_str) {
        Some("--log") => {
            let dir = PathBuf::from(&args[2]);
            std::fs::create_dir_all(&dir).unwrap();
            Some(EventLog::open(dir.join("audit.db"), Durability::Normal).unwrap())
        }
        _ => None,
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::stdout().lock();
    let mut line = String::new();
    let mut calls = 0u64;
    loop {
        line.clear();
        if input.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let msg: Value = serde_json::from_str(&line).unwrap();
        let Some(id) = msg.get("id") else { continue };
        let result = match msg["method"].as_str().unwrap_or("") {
            "initialize" => json!({
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "floor", "version": "0"}
            }),
            "tools/list" => {
                let tools = ["read", "list", "glob", "write"]
                    .map(|n| json!({"name": n, "inputSchema": {"type": "object"}}));
                json!({ "tools": tools })
            }
            "tools/call" => {
                calls += 1;
                call(&root, log.as_ref(), &msg["params"], calls)
            }
            other => panic!("floor server: unexpected method {other}"),
        };
        let mut reply =
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result})).unwrap();
        reply.push(b'\n');
        out.write_all(&reply).unwrap();
        out.flush().unwrap();
    }
    if let Some(log) = log {
        log.close().unwrap();
    }
}

fn call(root: &Path, log: Option<&EventLog>, params: &Value, n: u64) -> Value {
    let tool = params["name"].as_str().unwrap();
    let args = &params["arguments"];
    let call_id = format!("floor-{n}");
    let resource = root
        .join(args["path"].as_str().unwrap_or("."))
        .display()
        .to_string();
    if let Some(log) = log {
        futures::executor::block_on(
            log.submit_batch(before_events(tool, args, &call_id, &resource)),
        )
        .unwrap();
    }
    let started = Instant::now();
    let text = run(root, tool, args);
    if let Some(log) = log {
        let payload = EventPayload {
            tool: Some(tool.into()),
            tool_call_id: Some(call_id.clone()),
            duration_ms: Some(started.elapsed().as_millis() as u64),
            bytes_full: Some(text.len() as u64),
            bytes_returned: Some(text.len() as u64),
            preview: Some(text.chars().take(200).collect()),
            ..EventPayload::default()
        };
        let done = Event::now(EventKind::ToolCompleted, "floor", &call_id, payload);
        futures::executor::block_on(log.submit(done)).unwrap();
    }
    json!({"content": [{"type": "text", "text": text}], "structuredContent": {"text": text}})
}

/// What toolgate commits before an allowed tool starts.
fn before_events(tool: &str, args: &Value, call_id: &str, resource: &str) -> Vec<Event> {
    let judged = |kind, decision: Option<Effect>, args: Option<Value>| {
        let payload = EventPayload {
            tool: Some(tool.into()),
            args,
            tool_call_id: Some(call_id.into()),
            action: Some(tool.into()),
            resource: Some(resource.into()),
            risk_at_decision: Some(Risk::Read),
            sourced_from: Some(DecisionSource::Default),
            suggested_decision: Some(Effect::Allow),
            decision,
            reason: Some(format!(
                "{tool} `{resource}` ({tool}): no rule matched; reads are allowed by default"
            )),
            actor: Some("policy".into()),
            ..EventPayload::default()
        };
        Event::now(kind, "floor", call_id, payload)
    };
    let started = EventPayload {
        tool: Some(tool.into()),
        tool_call_id: Some(call_id.into()),
        ..EventPayload::default()
    };
    vec![
        judged(EventKind::PermissionRequested, None, Some(args.clone())),
        judged(EventKind::PermissionResolved, Some(Effect::Allow), None),
        Event::now(EventKind::ToolStarted, "floor", call_id, started),
    ]
}

/// The tool's work, as plainly as `std` does it.
fn run(root: &Path, tool: &str, args: &Value) -> String {
    let path = root.join(args["path"].as_str().unwrap_or("."));
    match tool {
        "read" => std::fs::read_to_string(path).unwrap(),
        "write" => {
            std::fs::write(&path, args["content"].as_str().unwrap()).unwrap();
            format!("wrote {}", path.display())
        }
        "list" => {
            let mut names: Vec<String> = std::fs::read_dir(&path)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort_unstable();
            let total = names.len();
            names.truncate(100);
            format!("{}\n({total} files)", names.join("\n"))
        }
        // Only the benchmark's pattern: files named `*signal*.rs` anywhere.
        "glob" => {
            let mut found = Vec::new();
            find_signal_files(root, &mut found);
            found.sort_unstable();
            found.join("\n")
        }
        other => panic!("floor server: unknown tool {other}"),
    }
}

fn find_signal_files(dir: &Path, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if kind.is_dir() {
            find_signal_files(&entry.path(), found);
        } else if name.contains("signal") && name.ends_with(".rs") {
            found.push(entry.path().display().to_string());
        }
    }
}
