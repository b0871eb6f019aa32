//! The settle pipeline: every call, in the one order described below.
//!
//! ```text
//! settle name against the catalogue -> Unknown tool / Stale tool call
//! decode input                        -> invalid: error, the tool never runs
//! intent(input, location)             -> requests
//! gate.evaluate                       -> permission.requested (durable)
//! gate.resolve (asks)                 -> permission.resolved (durable)
//! execute                             -> tool.started (durable) ... cancellable, panic-safe
//! encode + check output schema        -> invalid: failure
//! bound                               -> spill when over the limit
//!                                     -> tool.completed / tool.failed
//! ```
//!
//! Every event is awaited until durable before the step it describes goes on, so
//! nothing runs unless each of its requests has a durable `permission.resolved`
//! with decision `allow` (invariant 1).

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::bound::{BoundError, OutputBounds, OutputStore, bound_checked};
use crate::content::Content;
use crate::context::{CallIdentity, Progress, ToolContext};
use crate::event::{Event, EventKind, EventPayload, EventSink, SinkError};
use crate::failure::Failure;
use crate::gate::{Gate, GateCall, GateError, Judged, PermissionRequest};
use crate::location::Location;
use crate::output_check::{Flag, OutputChecks, Redaction};
use crate::registry::{Catalogue, LookupError, ResolvedTool, ToolSet};
use crate::risk::{Decision, DecisionSource, Effect, Risk};
use crate::tool::{PrepareError, PreparedCall, RunError, ToolError};

/// How long a cancelled tool gets to wind down (bash needs 3 s between SIGTERM
/// and SIGKILL, then reaps the group) before its future is dropped.
pub const CANCEL_GRACE: Duration = Duration::from_secs(6);

const PREVIEW_CHARS: usize = 200;

/// A tool call as the model made it.
#[derive(Clone, Debug)]
pub struct CallRequest {
    /// The tool name.
    pub name: String,
    /// The raw JSON input.
    pub input: Value,
    /// Who is calling.
    pub identity: CallIdentity,
}

/// A successful call's result, bounded.
#[derive(Clone, Debug, PartialEq)]
pub struct CallResult {
    /// What the model receives.
    pub content: Vec<Content>,
    /// The structured output, unless it was truncated away.
    pub structured: Option<Value>,
    /// Where the full output was spilled, if it was.
    pub spill_path: Option<PathBuf>,
    /// The secrets redacted from `content` and `structured` (kind and line);
    /// the spilled text keeps the original.
    pub redactions: Vec<Redaction>,
    /// The prompt-injection cues seen in the output (kind, line, excerpt);
    /// the text is passed on unchanged.
    pub flags: Vec<Flag>,
    /// The decisions that let it run.
    pub decisions: Vec<Judged>,
}

/// Why a call did not succeed. Every variant's message is meant for the model.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// Unknown or stale tool.
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// The input does not match the schema.
    #[error("invalid input for {tool} at `{field}`: {message}")]
    InvalidInput {
        /// The tool.
        tool: String,
        /// The offending field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The intent could not be computed (for example a bad path).
    #[error("{0}")]
    Intent(ToolError),
    /// The gate denied the call.
    #[error("permission denied: {0}")]
    Denied(String),
    /// A person rejected the call. Without a message the caller's loop should stop.
    #[error("{}", rejected_text(.message))]
    Rejected {
        /// The person's message to the model, if any.
        message: Option<String>,
    },
    /// The gate failed.
    #[error(transparent)]
    Gate(#[from] GateError),
    /// The audit log failed, so nothing may go on.
    #[error(transparent)]
    Audit(#[from] SinkError),
    /// The tool failed.
    #[error("{0}")]
    Tool(ToolError),
    /// The tool's output did not match its schema.
    #[error("tool output does not match its schema: {0}")]
    InvalidOutput(String),
    /// The tool panicked.
    #[error("tool panicked: {0}")]
    Panicked(String),
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// What the call would touch changed while a person was deciding (a file
    /// appeared, a symlink now points elsewhere), so the answer given is not
    /// for what would run. Nothing ran.
    #[error(
        "the call's requests changed while it was being decided (now: {0}); nothing ran, make the call again"
    )]
    Changed(String),
    /// The output could not be bounded.
    #[error(transparent)]
    Bound(#[from] BoundError),
}

/// The gate's judgement of `requests`. A decision is CPU work (a shell
/// command is parsed and analysed, rules are matched) and a slow one must
/// never hold up the event loop, whose few workers serve every other call, so
/// it is computed on the blocking pool — unless the gate says these requests
/// are judged quickly ([`Gate::judges_quickly`]: a file path, a URL), where
/// the hand-off would cost more than the judgement. A gate that panics fails
/// the call (nothing runs) instead of the process.
async fn evaluate_off_loop(
    gate: &Arc<dyn Gate>,
    call: &CallRequest,
    location: &Arc<Location>,
    requests: Vec<PermissionRequest>,
) -> Result<Vec<Judged>, CallError> {
    if gate.judges_quickly(&requests) {
        let gate_call = GateCall {
            tool: &call.name,
            input: &call.input,
            location,
            session_id: &call.identity.session_id,
            call_id: &call.identity.call_id,
            preview: None,
        };
        let judged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            gate.evaluate(&gate_call, requests)
        }))
        .map_err(|panic| {
            CallError::Gate(GateError::Failed(Failure::new(format!(
                "the decision could not be computed: the gate panicked: {}",
                panic_message(panic.as_ref())
            ))))
        })?;
        return judged.map_err(CallError::Gate);
    }
    let gate = Arc::clone(gate);
    let location = Arc::clone(location);
    let call = call.clone();
    tokio::task::spawn_blocking(move || {
        let gate_call = GateCall {
            tool: &call.name,
            input: &call.input,
            location: &location,
            session_id: &call.identity.session_id,
            call_id: &call.identity.call_id,
            preview: None,
        };
        gate.evaluate(&gate_call, requests)
    })
    .await
    .map_err(|e| {
        CallError::Gate(GateError::Failed(Failure::caused(
            "the decision could not be computed",
            e,
        )))
    })?
    .map_err(CallError::Gate)
}

/// Decodes the input and computes the intent; nothing runs on failure.
fn prepare(
    tool: &ResolvedTool,
    call: &CallRequest,
    location: &Location,
) -> Result<PreparedCall, CallError> {
    tool.handler
        .prepare(&call.input, location)
        .map_err(|e| CallError::from_prepare(&call.name, e))
}

impl CallError {
    /// The error a call to `tool` fails with when its input is refused before it
    /// is judged (the text the caller sees, also for an oracle's answer).
    pub fn from_prepare(tool: &str, error: PrepareError) -> CallError {
        match error {
            PrepareError::InvalidInput { field, message } => CallError::InvalidInput {
                tool: tool.to_string(),
                field,
                message,
            },
            PrepareError::Intent(e) => CallError::Intent(e),
        }
    }
}

/// Requests as `action resource` pairs, for a message.
fn describe(requests: &[PermissionRequest]) -> String {
    requests
        .iter()
        .map(|r| format!("{} {}", r.action, r.resource))
        .collect::<Vec<_>>()
        .join(", ")
}

fn rejected_text(message: &Option<String>) -> String {
    match message {
        Some(m) => format!("the user rejected this call: {m}"),
        None => "the user rejected this call; stop and wait for instructions".to_string(),
    }
}

impl CallError {
    /// The short reason recorded in `tool.failed` (`cancelled`, `denied`, …).
    pub fn reason_code(&self) -> &'static str {
        match self {
            CallError::Lookup(LookupError::Unknown(_)) => "unknown_tool",
            CallError::Lookup(LookupError::Stale(_)) => "stale_tool",
            CallError::InvalidInput { .. } => "invalid_input",
            CallError::Intent(_) => "intent",
            CallError::Denied(_) => "denied",
            CallError::Rejected { .. } => "rejected",
            CallError::Gate(_) => "gate",
            CallError::Audit(_) => "audit",
            CallError::Tool(_) => "error",
            CallError::InvalidOutput(_) => "invalid_output",
            CallError::Panicked(_) => "panicked",
            CallError::Cancelled => "cancelled",
            CallError::Changed(_) => "changed",
            CallError::Bound(_) => "bound",
        }
    }
}

/// The engine every call goes through.
#[derive(Clone)]
pub struct Engine {
    tools: ToolSet,
    gate: Arc<dyn Gate>,
    sink: Arc<dyn EventSink>,
    outputs: Arc<dyn OutputStore>,
    bounds: OutputBounds,
    checks: OutputChecks,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("tools", &self.tools)
            .field("bounds", &self.bounds)
            .field("checks", &self.checks)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine over `tools`, deciding with `gate`, logging to `sink` and
    /// spilling to `outputs`. There is no default gate: a caller must choose one.
    pub fn new(
        tools: ToolSet,
        gate: Arc<dyn Gate>,
        sink: Arc<dyn EventSink>,
        outputs: Arc<dyn OutputStore>,
    ) -> Self {
        Engine {
            tools,
            gate,
            sink,
            outputs,
            bounds: OutputBounds::default(),
            checks: OutputChecks::default(),
        }
    }

    /// A judge of staged writes made outside the run of any one call (a
    /// long-running upstream server's, at the end of a session): the same
    /// judge a call's tool gets, deciding with this engine's gate and
    /// recording in its audit log as `tool` for `identity`. A path that
    /// needs a person waits for an answer until `cancel` is cancelled.
    pub fn write_judge(
        &self,
        tool: &str,
        identity: CallIdentity,
        location: Arc<Location>,
        cancel: CancellationToken,
    ) -> Arc<dyn crate::staged::WriteJudge> {
        Arc::new(crate::staged_judge::PipelineJudge {
            gate: Arc::clone(&self.gate),
            sink: Arc::clone(&self.sink),
            tool: tool.to_string(),
            input: Value::Object(serde_json::Map::new()),
            identity,
            location,
            cancel,
        })
    }

    /// Sets the output bounds.
    pub fn with_bounds(mut self, bounds: OutputBounds) -> Self {
        self.bounds = bounds;
        self
    }

    /// Sets the output checks (secret redaction, injection flags; both on by
    /// default).
    pub fn with_output_checks(mut self, checks: OutputChecks) -> Self {
        self.checks = checks;
        self
    }

    /// The tool set.
    pub fn tools(&self) -> &ToolSet {
        &self.tools
    }

    /// The gate.
    pub fn gate(&self) -> &Arc<dyn Gate> {
        &self.gate
    }

    /// The event sink.
    pub fn sink(&self) -> &Arc<dyn EventSink> {
        &self.sink
    }

    /// The catalogue the model sees, leaving out tools whose action (their
    /// name, unless the tool names another) the gate denies wholesale.
    pub fn materialize(&self) -> Catalogue {
        self.tools.materialize(|name| self.shown(name))
    }

    /// The entry `name` has in [`materialize`](Self::materialize)'s
    /// catalogue, alone (none when it would not be shown): what a call from a
    /// client that never listed is settled against, at the cost of one tool.
    pub fn materialize_one(&self, name: &str) -> Catalogue {
        self.tools.materialize_one(name, |n| self.shown(n))
    }

    /// Whether the tool `name` is shown to the model.
    fn shown(&self, name: &str) -> bool {
        let active = self.tools.active(name);
        let named = active
            .as_ref()
            .and_then(|t| t.handler.spec().action.clone());
        let action = named.as_deref().unwrap_or(name);
        if self.gate.denies_wholesale(action) {
            return false;
        }
        match active.as_ref().and_then(|t| t.handler.rule_resource()) {
            // Also hidden when a rule names the tool itself as the action.
            Some(resource) => {
                !self.gate.denies_resource(action, resource) && !self.gate.denies_wholesale(name)
            }
            None => true,
        }
    }

    /// The prompt-injection cues in the text of a failure the tool produced
    /// (an upstream's error message, a tool's own error), as this engine's
    /// output checks find them: what its `tool.failed` records, for a
    /// front end to pass on with the error (MCP: `_meta`
    /// `toolgate/flags`). Empty for toolgate's own refusals and lookups,
    /// which are not scanned, and when injection cues are not flagged.
    pub fn failure_flags(&self, err: &CallError) -> Vec<crate::output_check::Flag> {
        failure_flags(err, &err.to_string(), self.checks)
    }

    /// Settles one call. Cancelling `cancel` or dropping the future stops the tool
    /// and records `tool.failed` with reason `cancelled`.
    pub async fn settle(
        &self,
        catalogue: &Catalogue,
        call: CallRequest,
        location: Arc<Location>,
        cancel: CancellationToken,
    ) -> Result<CallResult, CallError> {
        self.settle_with_progress(catalogue, call, location, cancel, None)
            .await
    }

    /// Like [`settle`](Self::settle), forwarding the tool's progress reports.
    pub async fn settle_with_progress(
        &self,
        catalogue: &Catalogue,
        call: CallRequest,
        location: Arc<Location>,
        cancel: CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<CallResult, CallError> {
        let started = Instant::now();
        let mut guard = DropGuard {
            sink: Arc::clone(&self.sink),
            identity: call.identity.clone(),
            tool: call.name.clone(),
            cancel: cancel.clone(),
            armed: true,
        };
        let result = self
            .run_steps(catalogue, &call, location, &cancel, progress)
            .await;
        guard.armed = false;
        if let Err(err) = &result {
            let mut payload = self.payload(&call);
            let text = err.to_string();
            payload.reason = Some(err.reason_code().to_string());
            payload.duration_ms = Some(millis(started.elapsed()));
            payload.extra = checks_record(&[], &self.failure_flags(err), None);
            payload.preview = Some(preview(&text));
            let event = Event::now(
                EventKind::ToolFailed,
                &call.identity.session_id,
                &call.identity.call_id,
                payload,
            );
            // An audit failure is already the error; don't mask it.
            if let Err(e) = self.sink.submit(event).await {
                if !matches!(err, CallError::Audit(_)) {
                    return Err(CallError::Audit(e));
                }
            }
        }
        result
    }

    fn payload(&self, call: &CallRequest) -> EventPayload {
        EventPayload {
            tool: Some(call.name.clone()),
            tool_call_id: Some(call.identity.call_id.clone()),
            agent: call.identity.agent_id.clone(),
            ..EventPayload::default()
        }
    }

    async fn run_steps(
        &self,
        catalogue: &Catalogue,
        call: &CallRequest,
        location: Arc<Location>,
        cancel: &CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<CallResult, CallError> {
        // 1. The handler advertised, captured for the rest of the call.
        let tool = self.tools.settle(catalogue, &call.name)?;
        // 2–3. Decode and intent; nothing runs on failure.
        let prepared = prepare(&tool, call, &location)?;
        let mut requests = prepared.requests.clone();
        // A read that only a rule naming its action can decide adds an
        // allow by default and nothing else when no rule names it.
        requests.extend(
            prepared
                .when_named
                .iter()
                .filter(|r| r.risk != Risk::Read || self.gate.names_action(&r.action))
                .cloned(),
        );
        if requests.is_empty() {
            // A tool that declares nothing is still judged, as itself.
            let risk = if tool.handler.spec().traits.read_only {
                Risk::Read
            } else {
                Risk::Execute
            };
            requests.push(PermissionRequest::new(&call.name, &call.name, risk));
        }
        let gate_call = GateCall {
            tool: &call.name,
            input: &call.input,
            location: &location,
            session_id: &call.identity.session_id,
            call_id: &call.identity.call_id,
            preview: None,
        };
        // 4. Judge, and make every judgement durable.
        let judged = evaluate_off_loop(&self.gate, call, &location, requests).await?;
        if judged.is_empty() {
            return Err(CallError::Gate(GateError::Invalid(
                "the gate returned no decisions".into(),
            )));
        }
        // Each event must be durable before the step it describes goes on. With
        // nobody to ask, the next step with an effect is the tool's start, so the
        // judgements, the decisions and `tool.started` go in one batch (one
        // commit); before asking a person, the judgements are made durable first.
        let mut batch = self.permission_events(call, &judged, EventKind::PermissionRequested, None);
        // 5. Ask when needed, and make every final decision durable.
        let overall = Effect::strictest(judged.iter().map(|j| j.decision.effect));
        let finals: Vec<Decision> = if overall == Effect::Ask {
            self.sink.submit_batch(std::mem::take(&mut batch)).await?;
            // The person sees what the call will do, as its tool describes it.
            let preview = tool.handler.preview(&call.input, &location);
            let asking = GateCall {
                preview: preview.as_ref(),
                ..gate_call
            };
            let finals = self.gate.resolve(&asking, &judged, cancel).await?;
            if finals.len() != judged.len() {
                return Err(CallError::Gate(GateError::Invalid(format!(
                    "the gate resolved {} of {} requests",
                    finals.len(),
                    judged.len()
                ))));
            }
            finals
        } else {
            judged.iter().map(|j| j.decision.clone()).collect()
        };
        batch.extend(self.permission_events(
            call,
            &judged,
            EventKind::PermissionResolved,
            Some(&finals),
        ));
        if let Some(err) = refusal(&judged, &finals) {
            self.sink.submit_batch(batch).await?;
            return Err(err);
        }
        if cancel.is_cancelled() {
            self.sink.submit_batch(batch).await?;
            return Err(CallError::Cancelled);
        }
        // A person may take seconds to answer, and what the requests name can
        // change meanwhile (a symlink swapped by another call): the answer only
        // holds for the requests it was given. Without an ask the tool starts
        // at once, so there is no wait to re-check.
        if overall == Effect::Ask {
            let changed = match prepare(&tool, call, &location) {
                Ok(again)
                    if again.requests == prepared.requests
                        && again.when_named == prepared.when_named =>
                {
                    None
                }
                Ok(again) => Some(describe(&again.requests)),
                Err(e) => Some(e.to_string()),
            };
            if let Some(now) = changed {
                self.sink.submit_batch(batch).await?;
                return Err(CallError::Changed(now));
            }
        }
        // 6. Run, once every event so far is durable.
        // The input is in the call's first `permission.requested`, not repeated here.
        batch.push(Event::now(
            EventKind::ToolStarted,
            &call.identity.session_id,
            &call.identity.call_id,
            self.payload(call),
        ));
        self.sink.submit_batch(batch).await?;
        let started = Instant::now();
        let tool_cancel = cancel.child_token();
        let mut ctx = ToolContext::new(call.identity.clone(), location, tool_cancel.clone());
        // The machine's network, only for a network request a rule, an
        // approval or a person allowed: one that mode `auto` allowed because
        // the sandbox's proxy serves it keeps the proxy only.
        ctx.network_allowed = finals.iter().any(|d| {
            d.effect == Effect::Allow
                && d.risk == Risk::Network
                && d.source != DecisionSource::Sandbox
        });
        ctx.network_hosts = crate::staged_judge::network_hosts(&judged, &finals);
        ctx.write_judge = Some(Arc::new(crate::staged_judge::PipelineJudge {
            gate: Arc::clone(&self.gate),
            sink: Arc::clone(&self.sink),
            tool: call.name.clone(),
            input: call.input.clone(),
            identity: call.identity.clone(),
            location: Arc::clone(&ctx.location),
            cancel: cancel.clone(),
        }));
        if let Some(tx) = progress {
            ctx = ctx.with_progress(tx);
        }
        let output = run_cancellable(prepared.run(ctx), cancel, &tool_cancel)
            .await
            .map_err(|e| redact_failure(e, self.checks))?;
        let exit_status = output.exit_status;
        // 7–8. Encoded and checked by the handler; now bound.
        let mut bounded = bound_checked(
            output,
            self.bounds,
            self.checks,
            self.outputs.as_ref(),
            &call.identity.call_id,
        )?;
        // A shrunk structured output is only passed on while it still matches
        // the schema the tool advertised.
        if bounded.spill_path.is_some() {
            if let Some(s) = &bounded.structured {
                if let Err(e) = tool.handler.check_output(s) {
                    tracing::debug!(tool = %call.name, "shrunk structured output dropped: {e}");
                    bounded.structured = None;
                }
            }
        }
        let mut payload = self.payload(call);
        payload.duration_ms = Some(millis(started.elapsed()));
        payload.bytes_full = Some(bounded.bytes_full);
        payload.bytes_returned = Some(bounded.bytes_returned);
        payload.spill_path = bounded.spill_path.as_ref().map(|p| p.display().to_string());
        payload.exit_code = exit_status.map(i64::from);
        payload.preview = bounded
            .content
            .iter()
            .find_map(Content::as_text)
            .map(preview);
        payload.extra = checks_record(
            &bounded.redactions,
            &bounded.flags,
            bounded.structured.as_ref(),
        );
        self.sink
            .submit(Event::now(
                EventKind::ToolCompleted,
                &call.identity.session_id,
                &call.identity.call_id,
                payload,
            ))
            .await?;
        Ok(CallResult {
            content: bounded.content,
            structured: bounded.structured,
            spill_path: bounded.spill_path,
            redactions: bounded.redactions,
            flags: bounded.flags,
            decisions: judged
                .into_iter()
                .zip(finals)
                .map(|(j, d)| Judged {
                    request: j.request,
                    decision: d,
                })
                .collect(),
        })
    }

    /// One permission event per request.
    fn permission_events(
        &self,
        call: &CallRequest,
        judged: &[Judged],
        kind: EventKind,
        finals: Option<&[Decision]>,
    ) -> Vec<Event> {
        judged
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let decision = finals.map_or(&j.decision, |f| &f[i]);
                // The input is logged once per call: on its first event that
                // always precedes a run (readers look it up there).
                let args =
                    (kind == EventKind::PermissionRequested && i == 0).then(|| call.input.clone());
                permission_event(
                    kind,
                    &call.identity,
                    &call.name,
                    j,
                    decision,
                    finals.is_some(),
                    args,
                )
            })
            .collect()
    }
}

/// What the output checks found, for the `tool.completed` event's `extra`:
/// `{"redactions": [...], "flags": [...]}`, each list only when not empty.
/// What the completion event records beyond the common fields: the output
/// checks' findings, and the paths a sandboxed command changed that did not
/// land (a `refused` list of `{path, …}` in the tool's structured output, as
/// `bash` reports them), as `staged_refused`.
fn checks_record(
    redactions: &[Redaction],
    flags: &[Flag],
    structured: Option<&Value>,
) -> Option<Value> {
    let refused: Vec<Value> = structured
        .and_then(|s| s.get("refused"))
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.get("path").filter(|p| p.is_string()).cloned())
                .collect()
        })
        .unwrap_or_default();
    if redactions.is_empty() && flags.is_empty() && refused.is_empty() {
        return None;
    }
    let mut map = serde_json::Map::new();
    if !refused.is_empty() {
        map.insert("staged_refused".into(), Value::Array(refused));
    }
    if !redactions.is_empty() {
        map.insert("redactions".into(), serde_json::to_value(redactions).ok()?);
    }
    if !flags.is_empty() {
        map.insert("flags".into(), serde_json::to_value(flags).ok()?);
    }
    Some(Value::Object(map))
}

/// The `permission.requested` or `.resolved` event of one judged request;
/// `resolved` says `decision` is final.
pub(crate) fn permission_event(
    kind: EventKind,
    identity: &CallIdentity,
    tool: &str,
    j: &Judged,
    decision: &Decision,
    resolved: bool,
    args: Option<Value>,
) -> Event {
    let mut payload = EventPayload {
        tool: Some(tool.to_string()),
        tool_call_id: Some(identity.call_id.clone()),
        agent: identity.agent_id.clone(),
        ..EventPayload::default()
    };
    payload.args = args;
    payload.action = Some(j.request.action.clone());
    payload.resource = Some(j.request.resource.clone());
    payload.risk_at_decision = Some(decision.risk);
    payload.sourced_from = Some(decision.source);
    payload.suggested_decision = Some(j.decision.effect);
    payload.reason = Some(decision.reason.clone());
    payload.rule = decision.rule.as_ref().map(|r| r.location());
    payload.actor = Some(actor(decision.source).to_string());
    if resolved {
        payload.decision = Some(decision.effect);
    }
    Event::now(kind, &identity.session_id, &identity.call_id, payload)
}

fn actor(source: DecisionSource) -> &'static str {
    match source {
        DecisionSource::User => "user",
        DecisionSource::Hook => "hook",
        DecisionSource::Timeout => "timeout",
        DecisionSource::Client => "client",
        _ => "policy",
    }
}

/// The error for a call that may not run, or `None` when every request is allowed.
fn refusal(judged: &[Judged], finals: &[Decision]) -> Option<CallError> {
    if finals.iter().all(|d| d.effect == Effect::Allow) {
        return None;
    }
    if let Some(d) = finals
        .iter()
        .find(|d| d.effect == Effect::Deny && d.source == DecisionSource::User)
    {
        return Some(CallError::Rejected {
            message: d.feedback.clone(),
        });
    }
    let reasons: Vec<String> = judged
        .iter()
        .zip(finals)
        .filter(|(_, d)| d.effect != Effect::Allow)
        .map(|(j, d)| {
            format!(
                "{} {} ({}): {}",
                j.request.action, j.request.resource, d.risk, d.reason
            )
        })
        .collect();
    Some(CallError::Denied(reasons.join("; ")))
}

async fn run_cancellable(
    run: futures::future::BoxFuture<'static, Result<crate::content::ToolOutput, RunError>>,
    cancel: &CancellationToken,
    tool_cancel: &CancellationToken,
) -> Result<crate::content::ToolOutput, CallError> {
    let mut fut = AssertUnwindSafe(run).catch_unwind();
    let outcome = tokio::select! {
        r = &mut fut => r,
        () = cancel.cancelled() => {
            tool_cancel.cancel();
            // Give the tool a moment to clean up (kill its processes), then drop it.
            let _ = tokio::time::timeout(CANCEL_GRACE, &mut fut).await;
            return Err(CallError::Cancelled);
        }
    };
    match outcome {
        Err(panic) => Err(CallError::Panicked(panic_message(panic.as_ref()))),
        Ok(Err(RunError::Tool(ToolError::Cancelled))) => Err(CallError::Cancelled),
        Ok(Err(RunError::Tool(e))) => Err(CallError::Tool(e)),
        Ok(Err(RunError::InvalidOutput(m))) => Err(CallError::InvalidOutput(m)),
        Ok(Ok(out)) => Ok(out),
    }
}

/// A failed run's message, with the secrets the output checks find in it
/// replaced: the model reads a failure as it reads output (an upstream MCP
/// server's error result, a tool echoing what it was given).
/// The prompt-injection cues in the text of a failure the tool produced
/// (an upstream's error message, a tool's own error): recorded with the
/// call's `tool.failed` as a result's flags are with `tool.completed`.
/// Refusals and lookups are toolgate's own words, and are not scanned.
fn failure_flags(
    err: &CallError,
    text: &str,
    checks: crate::output_check::OutputChecks,
) -> Vec<crate::output_check::Flag> {
    let from_the_tool = matches!(
        err,
        CallError::Tool(_) | CallError::InvalidOutput(_) | CallError::Panicked(_)
    );
    if !checks.flag_injection || !from_the_tool {
        return Vec::new();
    }
    crate::output_check::scanner()
        .map(|scanner| scanner.flags(text))
        .unwrap_or_default()
}

fn redact_failure(e: CallError, checks: crate::output_check::OutputChecks) -> CallError {
    if !checks.redact_secrets {
        return e;
    }
    let text = match &e {
        CallError::Tool(ToolError::Cancelled) => return e,
        CallError::Tool(t) => t.to_string(),
        CallError::InvalidOutput(m) | CallError::Panicked(m) => m.clone(),
        _ => return e,
    };
    let scanner = match crate::output_check::scanner() {
        Ok(s) => s,
        // Without the scanner nothing is shown that it might have hidden.
        Err(_) => {
            return CallError::Tool(ToolError::Failed(
                "the tool failed (its message is withheld: the output checks could not run)".into(),
            ));
        }
    };
    let Some(redacted) = scanner.redact(&text) else {
        return e;
    };
    match e {
        CallError::InvalidOutput(_) => CallError::InvalidOutput(redacted.text),
        CallError::Panicked(_) => CallError::Panicked(redacted.text),
        _ => CallError::Tool(ToolError::Failed(redacted.text)),
    }
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

fn preview(text: &str) -> String {
    text.chars().take(PREVIEW_CHARS).collect()
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Records `tool.failed` (reason `cancelled`) when a settle future is dropped
/// before it finished, and cancels the tool's token.
struct DropGuard {
    sink: Arc<dyn EventSink>,
    identity: CallIdentity,
    tool: String,
    cancel: CancellationToken,
    armed: bool,
}

impl Drop for DropGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        self.cancel.cancel();
        let payload = EventPayload {
            tool: Some(self.tool.clone()),
            tool_call_id: Some(self.identity.call_id.clone()),
            reason: Some("cancelled".to_string()),
            preview: Some("the call was dropped before it finished".to_string()),
            ..EventPayload::default()
        };
        // Queued now; the store commits it without anyone awaiting.
        drop(self.sink.submit(Event::now(
            EventKind::ToolFailed,
            &self.identity.session_id,
            &self.identity.call_id,
            payload,
        )));
    }
}

#[cfg(test)]
mod actor_tests {
    use super::*;

    #[test]
    fn a_decision_the_client_made_is_recorded_with_actor_client() {
        assert_eq!(actor(DecisionSource::Client), "client");
        assert_eq!(actor(DecisionSource::User), "user");
        assert_eq!(actor(DecisionSource::Default), "policy");
    }
}

#[cfg(test)]
mod completion_record_tests {
    use super::checks_record;
    use serde_json::json;

    #[test]
    fn refused_staged_paths_are_recorded_with_the_completion() {
        let structured = json!({"refused": [
            {"path": ".git/hooks/pre-commit", "change": "created", "reason": "protected"},
            {"path": 7},
        ]});
        let record = checks_record(&[], &[], Some(&structured));
        assert_eq!(
            record,
            Some(json!({"staged_refused": [".git/hooks/pre-commit"]}))
        );
    }

    #[test]
    fn nothing_refused_nothing_found_records_nothing() {
        assert_eq!(checks_record(&[], &[], Some(&json!({"refused": []}))), None);
        assert_eq!(checks_record(&[], &[], Some(&json!("text"))), None);
        assert_eq!(checks_record(&[], &[], None), None);
    }
}
