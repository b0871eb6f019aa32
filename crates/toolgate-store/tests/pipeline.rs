//! The core settle pipeline on this crate's stores: events are durable in the
//! order of the steps, a dropped call's `tool.failed` is committed, and a
//! failing spill fails the call.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate_core::test_util::{Echo, ScriptedGate, Sleeper, call};
use toolgate_core::{CallError, Engine, EventKind, EventSink, Location, Registry, ToolSet};
use toolgate_store::{Durability, EventFilter, EventLog, EventReader, SpillStore, verify};

/// An engine that allows everything, on `log` and a spill store in `data`,
/// with an `echo` (whose repeated text is long enough to spill) and a `sleep`
/// that only ends when its call is dropped.
fn engine(
    data: &std::path::Path,
    log: Arc<EventLog>,
) -> (Engine, Vec<toolgate_core::Registration>) {
    let tools = ToolSet::new(Registry::new(), Registry::new());
    let regs = vec![
        tools.process().register("echo", Echo::plain()).unwrap(),
        tools
            .process()
            .register("sleep", Sleeper { stubborn: true })
            .unwrap(),
    ];
    let sink: Arc<dyn EventSink> = log;
    (
        Engine::new(
            tools,
            ScriptedGate::allow_all(),
            sink,
            Arc::new(SpillStore::new(data)),
        ),
        regs,
    )
}

#[tokio::test]
async fn a_call_leaves_its_steps_in_order_and_its_spill_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(EventLog::open(dir.path().join("events.db"), Durability::Normal).unwrap());
    let (engine, _reg) = engine(dir.path(), Arc::clone(&log));
    let location = Arc::new(Location::new(dir.path()).unwrap());
    let cat = engine.materialize();
    let result = engine
        .settle(
            &cat,
            call("echo", json!({"text": "x\n", "repeat": 5000}), "c1"),
            location,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let spill = result.spill_path.unwrap();
    assert!(spill.starts_with(dir.path().join("tool-output")));
    let events = log
        .query(&EventFilter {
            call_id: Some("c1".into()),
            ..Default::default()
        })
        .unwrap();
    let kinds: Vec<_> = events.iter().map(|e| e.event.kind).collect();
    assert_eq!(
        kinds,
        [
            EventKind::PermissionRequested,
            EventKind::PermissionResolved,
            EventKind::ToolStarted,
            EventKind::ToolCompleted
        ]
    );
    assert_eq!(
        events[3].event.payload.spill_path.as_deref(),
        Some(spill.to_str().unwrap())
    );
    assert!(log.verify().unwrap().is_ok());
}

#[tokio::test]
async fn a_dropped_call_still_records_tool_failed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = Arc::new(EventLog::open(&path, Durability::Normal).unwrap());
    let (engine, reg) = engine(dir.path(), Arc::clone(&log));
    let location = Arc::new(Location::new(dir.path()).unwrap());
    let cat = engine.materialize();
    let fut = engine.settle(
        &cat,
        call("sleep", json!({}), "hang"),
        location,
        CancellationToken::new(),
    );
    // Let it reach the tool, then drop the future: the guard submits without awaiting.
    let _ = tokio::time::timeout(std::time::Duration::from_millis(200), fut).await;
    drop((engine, reg, log));
    let events = EventReader::open(&path)
        .unwrap()
        .query(&EventFilter {
            call_id: Some("hang".into()),
            ..Default::default()
        })
        .unwrap();
    let last = events.last().unwrap();
    assert_eq!(last.event.kind, EventKind::ToolFailed);
    assert_eq!(last.event.payload.reason.as_deref(), Some("cancelled"));
    assert!(verify(&path).unwrap().is_ok());
}

#[tokio::test]
async fn a_failing_spill_fails_the_call_and_is_logged() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tool-output"), "in the way").unwrap();
    let log = Arc::new(EventLog::open(dir.path().join("events.db"), Durability::Normal).unwrap());
    let (engine, _reg) = engine(dir.path(), Arc::clone(&log));
    let location = Arc::new(Location::new(dir.path()).unwrap());
    let cat = engine.materialize();
    let err = engine
        .settle(
            &cat,
            call("echo", json!({"text": "x\n", "repeat": 5000}), "big"),
            location,
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Bound(_)), "{err}");
    let events = log
        .query(&EventFilter {
            call_id: Some("big".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(events.last().unwrap().event.kind, EventKind::ToolFailed);
}
