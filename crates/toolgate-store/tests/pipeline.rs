//! The core settle pipeline on this crate's stores: events are durable in the
//! order of the steps, a dropped call's `tool.failed` is committed, and a
//! failing spill fails the call.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate_core::{
    CallError, CallIdentity, CallRequest, Decision, DecisionSource, Effect, Engine, EventKind,
    EventSink, Gate, GateCall, GateError, Judged, Location, PermissionRequest, Registry, Risk,
    Tool, ToolContext, ToolError, ToolSet,
};
use toolgate_store::{Durability, EventFilter, EventLog, EventReader, SpillStore, verify};

struct Repeat;

#[derive(Deserialize, JsonSchema)]
struct RepeatIn {
    line: String,
    times: usize,
    #[serde(default)]
    hang: bool,
}

#[derive(Serialize, JsonSchema)]
struct RepeatOut {
    line: String,
    lines: usize,
}

impl Tool for Repeat {
    type Input = RepeatIn;
    type Output = RepeatOut;
    fn description(&self) -> String {
        "Prints a line many times.".into()
    }
    fn intent(&self, _: &RepeatIn, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new("repeat", "*", Risk::Read)])
    }
    async fn execute(&self, input: RepeatIn, _: ToolContext) -> Result<RepeatOut, ToolError> {
        if input.hang {
            std::future::pending::<()>().await;
        }
        Ok(RepeatOut {
            line: input.line,
            lines: input.times,
        })
    }
    fn project(&self, out: &RepeatOut) -> Vec<toolgate_core::Content> {
        vec![toolgate_core::Content::text(
            format!("{}\n", out.line).repeat(out.lines),
        )]
    }
}

struct AllowAll;

#[async_trait]
impl Gate for AllowAll {
    fn evaluate(
        &self,
        _: &GateCall<'_>,
        requests: Vec<PermissionRequest>,
    ) -> Result<Vec<Judged>, GateError> {
        Ok(requests
            .into_iter()
            .map(|request| Judged {
                decision: Decision::new(Effect::Allow, request.risk, DecisionSource::Rule, "test"),
                request,
            })
            .collect())
    }
    async fn resolve(
        &self,
        _: &GateCall<'_>,
        judged: &[Judged],
        _: &CancellationToken,
    ) -> Result<Vec<Decision>, GateError> {
        Ok(judged.iter().map(|j| j.decision.clone()).collect())
    }
}

fn call(id: &str, input: serde_json::Value) -> CallRequest {
    CallRequest {
        name: "repeat".into(),
        input,
        identity: CallIdentity {
            session_id: "s1".into(),
            call_id: id.into(),
            ..CallIdentity::default()
        },
    }
}

fn engine(data: &std::path::Path, log: Arc<EventLog>) -> (Engine, toolgate_core::Registration) {
    let tools = ToolSet::new(Registry::new(), Registry::new());
    let reg = tools.process().register("repeat", Repeat).unwrap();
    let sink: Arc<dyn EventSink> = log;
    (
        Engine::new(
            tools,
            Arc::new(AllowAll),
            sink,
            Arc::new(SpillStore::new(data)),
        ),
        reg,
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
            call("c1", json!({"line": "x", "times": 5000})),
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
        call("hang", json!({"line": "x", "times": 1, "hang": true})),
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
            call("big", json!({"line": "x", "times": 5000})),
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
