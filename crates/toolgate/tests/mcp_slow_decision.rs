//! `toolgate mcp` decides off its event loop: a client on a real pipe sends a
//! call whose decision is slow (a long bash script, denied part by part),
//! then a quick `read`; the read is answered first. On one thread with the
//! decision inline, the read would wait for the script's whole analysis, and
//! the script's answer (a deny, right after deciding) would come first. The
//! test asserts the order of the answers, never a duration.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[test]
fn a_slow_decision_does_not_delay_a_quick_call() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let ws = base.join("ws");
    let home = base.join("home");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(ws.join("a.txt"), "hello\n").unwrap();
    // Every part of the slow script is denied, so its answer comes as soon as
    // it is decided (nothing runs, nobody is asked).
    let config = base.join("deny-cat.toml");
    std::fs::write(&config, "[permission.bash]\n\"cat *\" = \"deny\"\n").unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("mcp")
        .arg("--root")
        .arg(&ws)
        .arg("--config")
        .arg(&config)
        .args(["--no-web", "--approval-channels", "mcp"])
        .env("TOOLGATE_DATA_DIR", base.join("data"))
        .env("HOME", &home)
        .env("TOOLGATE_MANAGED_CONFIG", home.join("no-managed.toml"))
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("TOOLGATE_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut to_server = server.stdin.take().unwrap();
    let mut from_server = BufReader::new(server.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(to_server, "{message}").unwrap();
        to_server.flush().unwrap();
    };
    send(json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            // No elicitation: the client cannot be asked.
            "capabilities": {},
            "clientInfo": {"name": "order-test", "version": "1"}
        }
    }));
    let mut line = String::new();
    from_server.read_line(&mut line).unwrap();
    let init: Value = serde_json::from_str(&line).unwrap();
    assert!(init["result"]["protocolVersion"].is_string(), "{init}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    // About 88 KB (under the bash tool's 128 KB limit): thousands of parts,
    // each classified, its path resolved and matched against the rules.
    let script = vec!["cat a.txt"; 8000].join("; ");
    send(json!({
        "jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": script}}
    }));
    send(json!({
        "jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "read", "arguments": {"path": "a.txt"}}
    }));

    let mut order = Vec::new();
    let mut answers = std::collections::HashMap::new();
    while order.len() < 2 {
        let mut line = String::new();
        let n = from_server.read_line(&mut line).unwrap();
        assert!(n > 0, "the server hung up after {order:?}");
        let message: Value = serde_json::from_str(&line).unwrap();
        let Some(id) = message["id"].as_i64() else {
            continue; // a notification
        };
        if message.get("method").is_some() {
            continue; // a request from the server
        }
        order.push(id);
        answers.insert(id, message);
    }
    drop(to_server);
    let _ = server.wait();

    let slow = &answers[&10];
    assert_eq!(slow["result"]["isError"], true, "{slow}");
    assert!(slow.to_string().contains("denied"), "{slow}");
    let quick = &answers[&11];
    assert_ne!(quick["result"]["isError"], true, "{quick}");
    assert!(quick.to_string().contains("hello"), "{quick}");
    assert_eq!(
        order,
        vec![11, 10],
        "the quick read waited for the slow decision"
    );
}
