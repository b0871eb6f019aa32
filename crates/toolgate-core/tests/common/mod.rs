//! Shared test fixtures: a scripted gate, an in-memory event sink, a spill
//! directory, and a few tools.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures::FutureExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use toolgate_core::*;

/// A gate that answers from a script: every request gets `effect`, and asks are
/// resolved to `answer`, after `during_ask` ran (what happens while a person reads).
pub struct ScriptedGate {
    pub effect: Effect,
    /// The source of the first decision (`Rule` unless set).
    pub source: DecisionSource,
    pub answer: Effect,
    pub feedback: Option<String>,
    pub asked: Mutex<usize>,
    pub during_ask: Option<Box<dyn Fn() + Send + Sync>>,
}

impl ScriptedGate {
    pub fn new(effect: Effect, answer: Effect) -> Arc<Self> {
        Arc::new(ScriptedGate {
            effect,
            source: DecisionSource::Rule,
            answer,
            feedback: None,
            asked: Mutex::new(0),
            during_ask: None,
        })
    }

    /// Asks about everything and allows, after `during_ask` ran.
    pub fn allowing_after(during_ask: impl Fn() + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(ScriptedGate {
            effect: Effect::Ask,
            source: DecisionSource::Rule,
            answer: Effect::Allow,
            feedback: None,
            asked: Mutex::new(0),
            during_ask: Some(Box::new(during_ask)),
        })
    }

    /// Allows everything with `source`, without asking.
    pub fn allowing_from(source: DecisionSource) -> Arc<Self> {
        Arc::new(ScriptedGate {
            effect: Effect::Allow,
            source,
            answer: Effect::Allow,
            feedback: None,
            asked: Mutex::new(0),
            during_ask: None,
        })
    }
}

#[async_trait]
impl Gate for ScriptedGate {
    fn evaluate(
        &self,
        _call: &GateCall<'_>,
        requests: Vec<PermissionRequest>,
    ) -> Result<Vec<Judged>, GateError> {
        Ok(requests
            .into_iter()
            .map(|r| Judged {
                decision: Decision::new(self.effect, r.risk, self.source, "scripted"),
                request: r,
            })
            .collect())
    }

    async fn resolve(
        &self,
        _call: &GateCall<'_>,
        judged: &[Judged],
        _cancel: &CancellationToken,
    ) -> Result<Vec<Decision>, GateError> {
        *self.asked.lock().unwrap() += 1;
        if let Some(during_ask) = &self.during_ask {
            during_ask();
        }
        Ok(judged
            .iter()
            .map(|j| {
                if j.decision.effect == Effect::Ask {
                    let mut d = Decision::new(
                        self.answer,
                        j.request.risk,
                        DecisionSource::User,
                        "answered",
                    );
                    d.feedback = self.feedback.clone();
                    d
                } else {
                    j.decision.clone()
                }
            })
            .collect())
    }

    fn denies_wholesale(&self, tool: &str) -> bool {
        tool == "forbidden"
    }
}

/// Keeps events in memory, in order, assigning sequence numbers.
#[derive(Default)]
pub struct MemorySink {
    pub events: Mutex<Vec<Event>>,
    pub fail: Mutex<bool>,
}

impl EventSink for MemorySink {
    fn submit(&self, event: Event) -> EventAck {
        let fail = *self.fail.lock().unwrap();
        let mut events = self.events.lock().unwrap();
        let result = if fail {
            Err(SinkError::Storage("disk full".into()))
        } else {
            events.push(event);
            Ok(events.len() as u64)
        };
        async move { result }.boxed()
    }
}

impl MemorySink {
    pub fn kinds(&self) -> Vec<EventKind> {
        self.events.lock().unwrap().iter().map(|e| e.kind).collect()
    }
    pub fn last(&self) -> Event {
        self.events.lock().unwrap().last().cloned().unwrap()
    }
}

/// Spills into a directory, like the store does.
pub struct DirSpill(pub PathBuf);

impl OutputStore for DirSpill {
    fn spill(&self, call_id: &str, text: &str) -> Result<PathBuf, SpillError> {
        let dir = self.0.join("tool-output");
        let path = dir.join(format!("{call_id}.txt"));
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|source| SpillError {
                path: path.clone(),
                source,
            })?;
        Ok(path)
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EchoIn {
    pub text: String,
    #[serde(default)]
    pub repeat: Option<u32>,
}

#[derive(Serialize, JsonSchema)]
pub struct EchoOut {
    pub text: String,
}

/// Echoes its input; counts executions.
pub struct Echo {
    pub label: &'static str,
    pub runs: Arc<Mutex<usize>>,
}

impl Echo {
    pub fn new(label: &'static str) -> (Self, Arc<Mutex<usize>>) {
        let runs = Arc::new(Mutex::new(0));
        (
            Echo {
                label,
                runs: Arc::clone(&runs),
            },
            runs,
        )
    }
}

impl Tool for Echo {
    type Input = EchoIn;
    type Output = EchoOut;
    fn description(&self) -> String {
        format!("echo ({})", self.label)
    }
    fn intent(&self, i: &EchoIn, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new(
            "echo",
            i.text.clone(),
            Risk::Read,
        )])
    }
    async fn execute(&self, i: EchoIn, _: ToolContext) -> Result<EchoOut, ToolError> {
        *self.runs.lock().unwrap() += 1;
        let n = i.repeat.unwrap_or(1) as usize;
        Ok(EchoOut {
            text: format!("{}:{}", self.label, i.text.repeat(n)),
        })
    }
    fn project(&self, o: &EchoOut) -> Vec<Content> {
        vec![Content::text(o.text.clone())]
    }
}

/// Waits on a notifier before finishing, so a test can change the registry mid-call.
pub struct Slow {
    pub release: Arc<tokio::sync::Notify>,
    pub started: Arc<tokio::sync::Notify>,
    pub label: &'static str,
}

#[derive(Deserialize, JsonSchema)]
pub struct Empty {}

impl Tool for Slow {
    type Input = Empty;
    type Output = EchoOut;
    fn description(&self) -> String {
        "slow".into()
    }
    fn intent(&self, _: &Empty, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new("slow", "*", Risk::Read)])
    }
    async fn execute(&self, _: Empty, ctx: ToolContext) -> Result<EchoOut, ToolError> {
        self.started.notify_one();
        tokio::select! {
            () = self.release.notified() => Ok(EchoOut { text: self.label.into() }),
            () = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
        }
    }
}

/// Sleeps forever unless cancelled; ignores cancellation when `stubborn`.
pub struct Sleeper {
    pub stubborn: bool,
}

impl Tool for Sleeper {
    type Input = Empty;
    type Output = EchoOut;
    fn description(&self) -> String {
        "sleeps".into()
    }
    fn intent(&self, _: &Empty, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new("sleep", "*", Risk::Read)])
    }
    async fn execute(&self, _: Empty, ctx: ToolContext) -> Result<EchoOut, ToolError> {
        if self.stubborn {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        } else {
            ctx.cancel.cancelled().await;
        }
        Err(ToolError::Cancelled)
    }
}

pub struct Panicker;

impl Tool for Panicker {
    type Input = Empty;
    type Output = EchoOut;
    fn description(&self) -> String {
        "panics".into()
    }
    fn intent(&self, _: &Empty, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new("panic", "*", Risk::Read)])
    }
    async fn execute(&self, _: Empty, _: ToolContext) -> Result<EchoOut, ToolError> {
        panic!("boom in tool")
    }
}

/// Claims an output schema its output violates (a number where a string is due).
pub struct Liar;

#[derive(Serialize, JsonSchema)]
pub struct Strict {
    pub count: u32,
}

pub struct LyingOutput;

impl Serialize for LyingOutput {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Strict", 1)?;
        st.serialize_field("count", "not a number")?;
        st.end()
    }
}

impl JsonSchema for LyingOutput {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Strict".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Strict::json_schema(g)
    }
}

impl Tool for Liar {
    type Input = Empty;
    type Output = LyingOutput;
    fn description(&self) -> String {
        "lies about its output".into()
    }
    fn intent(&self, _: &Empty, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new("liar", "*", Risk::Read)])
    }
    async fn execute(&self, _: Empty, _: ToolContext) -> Result<LyingOutput, ToolError> {
        Ok(LyingOutput)
    }
}

pub fn identity(call: &str) -> CallIdentity {
    CallIdentity {
        session_id: "s1".into(),
        call_id: call.into(),
        ..CallIdentity::default()
    }
}

pub fn call(name: &str, input: serde_json::Value, id: &str) -> CallRequest {
    CallRequest {
        name: name.into(),
        input,
        identity: identity(id),
    }
}
