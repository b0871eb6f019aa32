//! `toolgate mcp` decides off its event loop: a client on a real pipe sends a
//! call whose decision is slow (a long bash script, denied part by part),
//! then a quick `read`; the read is answered first. On one thread with the
//! decision inline, the read would wait for the script's whole analysis, and
//! the script's answer (a deny, right after deciding) would come first. The
//! test asserts the order of the answers, never a duration.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;

use serde_json::json;

use crate::support;
use support::cli_env::CliEnv;
use support::stdio_mcp::StdioMcp;

#[test]
fn a_slow_decision_does_not_delay_a_quick_call() {
    let e = CliEnv::new();
    e.write(e.ws.join("a.txt"), "hello\n");
    // Every part of the slow script is denied, so its answer comes as soon as
    // it is decided (nothing runs, nobody is asked).
    let config = e.base.join("deny-cat.toml");
    e.write(&config, "[permission.bash]\n\"cat *\" = \"deny\"\n");
    let extra = [OsStr::new("--config"), config.as_os_str()];
    let mut server = StdioMcp::start(&e.ws, &e.data, &e.home, &extra, "order-test");

    // About 88 KB (under the bash tool's 128 KB limit): thousands of parts,
    // each classified, its path resolved and matched against the rules.
    let script = vec!["cat a.txt"; 8000].join("; ");
    server.send(json!({
        "jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": script}}
    }));
    server.send(json!({
        "jsonrpc": "2.0", "id": 11, "method": "tools/call",
        "params": {"name": "read", "arguments": {"path": "a.txt"}}
    }));

    let mut order = Vec::new();
    let mut answers = std::collections::HashMap::new();
    while order.len() < 2 {
        let Some((id, message)) = server.next_answer() else {
            panic!("the server hung up after {order:?}");
        };
        order.push(id);
        answers.insert(id, message);
    }
    let _ = server.close();

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
