//! `toolgate mcp` serves calls in flight at the same time: a client on a real
//! pipe sends eight calls before reading any answer; all eight are answered,
//! and afterwards the real audit log holds each call's events in the order of
//! the pipeline (judged, decided, started, completed), their commits grouped or
//! not, with an intact hash chain.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, HashSet};

use serde_json::json;
use toolgate_core::EventKind;
use toolgate_store::{EventFilter, EventReader, verify};

use crate::support;
use support::cli_env::CliEnv;
use support::stdio_mcp::StdioMcp;

const IN_FLIGHT: usize = 8;

#[test]
fn eight_calls_in_flight_all_complete_and_each_is_logged_in_order() {
    let e = CliEnv::new();
    for i in 0..IN_FLIGHT {
        e.write(e.ws.join(format!("f{i}.txt")), &format!("content {i}\n"));
        e.write(e.ws.join(format!("dir/e{i}.txt")), "x");
    }
    let mut server = StdioMcp::start(&e.ws, &e.data, &e.home, &[], "parallel-test");

    // Reads and lists mixed, all sent before any answer is read.
    let mut expected = HashMap::new();
    for i in 0..IN_FLIGHT {
        let id = 100 + i as i64;
        let (tool, arguments, needle) = if i % 2 == 0 {
            let path = format!("f{i}.txt");
            ("read", json!({"path": path}), format!("content {i}"))
        } else {
            ("list", json!({"path": "dir"}), format!("e{i}.txt"))
        };
        server.send(json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}
        }));
        expected.insert(id, needle);
    }
    let mut answered = HashSet::new();
    while answered.len() < IN_FLIGHT {
        let Some((id, message)) = server.next_answer() else {
            panic!("the server hung up after answering {answered:?}");
        };
        let needle = &expected[&id];
        assert_ne!(message["result"]["isError"], true, "{message}");
        assert!(message.to_string().contains(needle.as_str()), "{message}");
        assert!(answered.insert(id), "answered twice: {message}");
    }
    let status = server.close();
    assert!(status.success(), "{status}");

    let log = e.data.join("audit.db");
    let report = verify(&log).unwrap();
    assert!(report.is_ok(), "{report:?}");
    let events = EventReader::open(&log)
        .unwrap()
        .query(&EventFilter::default())
        .unwrap();
    let mut per_call: HashMap<String, Vec<(u64, EventKind)>> = HashMap::new();
    for stored in &events {
        if !stored.event.call_id.is_empty() {
            per_call
                .entry(stored.event.call_id.clone())
                .or_default()
                .push((stored.seq, stored.event.kind));
        }
    }
    assert_eq!(per_call.len(), IN_FLIGHT, "{per_call:?}");
    for (call, kinds) in &per_call {
        assert!(
            kinds.windows(2).all(|w| w[0].0 < w[1].0),
            "{call}: {kinds:?}"
        );
        let order: Vec<EventKind> = kinds.iter().map(|(_, k)| *k).collect();
        assert_eq!(
            order,
            vec![
                EventKind::PermissionRequested,
                EventKind::PermissionResolved,
                EventKind::ToolStarted,
                EventKind::ToolCompleted,
            ],
            "{call}"
        );
    }
}
