//! A small engine for the MCP tests: test tools, a test gate that asks through
//! MCP elicitation, a JSONL event log and a spill directory. The real policy
//! gate and SQLite store are built by other crates; these stand in for them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures::FutureExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_core::{
    Decision, DecisionSource, Effect, Engine, Event, EventAck, EventSink, Gate, GateCall,
    GateError, Judged, Location, OutputStore, PermissionRequest, Progress, Registry, Risk,
    SinkError, SpillError, Tool, ToolContext, ToolError, ToolSet, ToolTraits,
};
use toolgate_mcp::{ApprovalAnswer, ApprovalQuestion, ElicitationChannel, ToolgateServer};

/// Repeats its input (read-only).
pub struct Echo;
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EchoIn {
    /// What to repeat.
    pub text: String,
}
#[derive(Serialize, JsonSchema)]
pub struct EchoOut {
    text: String,
    length: usize,
}

impl Tool for Echo {
    type Input = EchoIn;
    type Output = EchoOut;
    fn description(&self) -> String {
        "Repeats its input.".into()
    }
    fn traits(&self) -> ToolTraits {
        ToolTraits::read_only()
    }
    fn intent(&self, i: &EchoIn, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new(
            "echo",
            i.text.chars().take(40).collect::<String>(),
            Risk::Read,
        )])
    }
    async fn execute(&self, i: EchoIn, _: ToolContext) -> Result<EchoOut, ToolError> {
        Ok(EchoOut {
            length: i.text.len(),
            text: i.text,
        })
    }
    fn project(&self, o: &EchoOut) -> Vec<toolgate_core::Content> {
        vec![toolgate_core::Content::text(o.text.clone())]
    }
}

/// Works in steps, reporting progress, until done or cancelled.
pub struct Slow;
#[derive(Deserialize, JsonSchema)]
pub struct SlowIn {
    steps: u32,
    step_ms: u64,
}
#[derive(Serialize, JsonSchema)]
pub struct SlowOut {
    steps_done: u32,
}

impl Tool for Slow {
    type Input = SlowIn;
    type Output = SlowOut;
    fn description(&self) -> String {
        "Works in steps and reports progress.".into()
    }
    fn traits(&self) -> ToolTraits {
        ToolTraits {
            read_only: false,
            concurrency_safe: true,
            destructive: false,
            open_world: false,
        }
    }
    fn intent(&self, _: &SlowIn, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new("slow", "steps", Risk::Execute)])
    }
    async fn execute(&self, i: SlowIn, ctx: ToolContext) -> Result<SlowOut, ToolError> {
        for step in 1..=i.steps {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(i.step_ms)) => {}
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            }
            ctx.report(Progress {
                message: format!("step {step}"),
                progress: f64::from(step),
                total: Some(f64::from(i.steps)),
            });
        }
        Ok(SlowOut {
            steps_done: i.steps,
        })
    }
}

/// Writes a marker file; the test gate asks a person first.
pub struct Guarded;
#[derive(Deserialize, JsonSchema)]
pub struct GuardedIn {
    target: String,
}
#[derive(Serialize, JsonSchema)]
pub struct GuardedOut {
    written: String,
}

impl Tool for Guarded {
    type Input = GuardedIn;
    type Output = GuardedOut;
    fn description(&self) -> String {
        "Writes a marker file (asks first).".into()
    }
    fn traits(&self) -> ToolTraits {
        ToolTraits {
            read_only: false,
            concurrency_safe: false,
            destructive: true,
            open_world: false,
        }
    }
    fn intent(&self, i: &GuardedIn, loc: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        let path = loc.resolve(&i.target)?;
        Ok(vec![PermissionRequest::new(
            "guarded",
            path.path.display().to_string(),
            Risk::Write,
        )])
    }
    async fn execute(&self, i: GuardedIn, ctx: ToolContext) -> Result<GuardedOut, ToolError> {
        let path = ctx.location.resolve(&i.target)?.path;
        std::fs::write(&path, "marker").map_err(|e| ToolError::io("writing the marker", e))?;
        Ok(GuardedOut {
            written: path.display().to_string(),
        })
    }
}

/// Would fetch a URL; the test gate denies it.
pub struct Forbidden;
#[derive(Deserialize, JsonSchema)]
pub struct ForbiddenIn {
    url: String,
}
#[derive(Serialize, JsonSchema)]
pub struct ForbiddenOut {
    body: String,
}

impl Tool for Forbidden {
    type Input = ForbiddenIn;
    type Output = ForbiddenOut;
    fn description(&self) -> String {
        "Fetches a URL (denied by the test policy).".into()
    }
    fn intent(&self, i: &ForbiddenIn, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new(
            "forbidden",
            i.url.clone(),
            Risk::Network,
        )])
    }
    async fn execute(&self, _: ForbiddenIn, _: ToolContext) -> Result<ForbiddenOut, ToolError> {
        Err(ToolError::Failed("must never run".into()))
    }
}

/// Allows everything except `forbidden` (deny) and `guarded` (ask, through
/// the MCP client's elicitation).
pub struct TestGate {
    pub channel: ElicitationChannel,
}

#[async_trait]
impl Gate for TestGate {
    fn evaluate(
        &self,
        _: &GateCall<'_>,
        requests: Vec<PermissionRequest>,
    ) -> Result<Vec<Judged>, GateError> {
        Ok(requests
            .into_iter()
            .map(|request| {
                let (effect, reason) = match request.action.as_str() {
                    "forbidden" => (Effect::Deny, "the test policy forbids this"),
                    "guarded" => (Effect::Ask, "the test policy asks for guarded"),
                    _ => (Effect::Allow, "the test policy allows this"),
                };
                Judged {
                    decision: Decision::new(effect, request.risk, DecisionSource::Rule, reason),
                    request,
                }
            })
            .collect())
    }

    async fn resolve(
        &self,
        call: &GateCall<'_>,
        judged: &[Judged],
        cancel: &CancellationToken,
    ) -> Result<Vec<Decision>, GateError> {
        let mut finals = Vec::new();
        for j in judged {
            if j.decision.effect != Effect::Ask {
                finals.push(j.decision.clone());
                continue;
            }
            let question = ApprovalQuestion {
                tool: call.tool.to_string(),
                action: j.request.action.clone(),
                resource: j.request.resource.clone(),
                risk: j.decision.risk,
                reason: j.decision.reason.clone(),
                cwd: j.request.cwd.clone(),
                note: j.request.note.clone(),
                always_offered: j.decision.risk != Risk::Destructive,
            };
            let risk = j.decision.risk;
            let decision = match self.channel.ask(call.session_id, &question, cancel).await {
                Ok(ApprovalAnswer::Reject { message }) => {
                    let mut d = Decision::new(
                        Effect::Deny,
                        risk,
                        DecisionSource::User,
                        "rejected by the user",
                    );
                    d.feedback = message;
                    d
                }
                Ok(answer) => Decision::new(
                    Effect::Allow,
                    risk,
                    DecisionSource::User,
                    format!("approved: {answer:?}"),
                ),
                Err(e) => Decision::new(
                    Effect::Deny,
                    risk,
                    DecisionSource::Timeout,
                    format!("nobody answered: {e}"),
                ),
            };
            finals.push(decision);
        }
        Ok(finals)
    }
}

/// Appends each event as one JSON line, flushed before the ack.
pub struct JsonlSink {
    file: Mutex<std::fs::File>,
    seq: AtomicU64,
}

impl JsonlSink {
    pub fn create(path: &Path) -> Self {
        JsonlSink {
            file: Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .expect("open event log"),
            ),
            seq: AtomicU64::new(1),
        }
    }
}

impl EventSink for JsonlSink {
    fn submit(&self, event: Event) -> EventAck {
        let line = serde_json::to_string(&event).map_err(|e| SinkError::Storage(e.to_string()));
        let result = line.and_then(|mut line| {
            line.push('\n');
            let mut f = self.file.lock().unwrap();
            f.write_all(line.as_bytes())
                .and_then(|()| f.flush())
                .map_err(|e| SinkError::Storage(e.to_string()))?;
            Ok(self.seq.fetch_add(1, Ordering::SeqCst))
        });
        futures::future::ready(result).boxed()
    }
}

/// Spills into a directory.
pub struct DirStore(pub PathBuf);

impl OutputStore for DirStore {
    fn spill(&self, call_id: &str, text: &str) -> Result<PathBuf, SpillError> {
        let path = self.0.join(format!("{call_id}.txt"));
        std::fs::write(&path, text).map_err(|source| SpillError {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    }
}

/// The test server over `root`, logging to `events`.
pub fn test_server(root: &Path, events: &Path) -> ToolgateServer {
    let registry = Registry::new();
    registry.register("echo", Echo).unwrap().leak();
    registry.register("slow", Slow).unwrap().leak();
    registry.register("guarded", Guarded).unwrap().leak();
    registry.register("forbidden", Forbidden).unwrap().leak();
    let channel = ElicitationChannel::new();
    let spill = root.join(".spill");
    std::fs::create_dir_all(&spill).unwrap();
    let engine = Engine::new(
        ToolSet::new(registry, Registry::new()),
        Arc::new(TestGate {
            channel: channel.clone(),
        }),
        Arc::new(JsonlSink::create(events)),
        Arc::new(DirStore(spill)),
    );
    let location = Arc::new(Location::new(root).unwrap());
    ToolgateServer::with_elicitation(engine, location, channel)
}

/// The events logged so far.
pub fn read_events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("event line is JSON"))
        .collect()
}
