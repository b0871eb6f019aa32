//! OTLP export of every tool call (`[telemetry]`): one span per call,
//! `execute_tool {tool}`, after the OpenTelemetry GenAI semantic conventions
//! (`gen_ai.operation.name = "execute_tool"`, `gen_ai.tool.name`,
//! `gen_ai.tool.call.id`), with the gate's decision as `toolgate.*`
//! attributes.
//!
//! A call served over MCP (`toolgate mcp`, `toolgate serve`) also gets the
//! server's own span, `tools/call {tool}` (kind server, `mcp.method.name =
//! "tools/call"`, `mcp.session.id`), as the parent of its `execute_tool`.
//!
//! The span is built from the call's audit events as they are recorded, so
//! it says what the log says. Export never sits on the call path: ending a
//! span only puts it in a bounded queue (2,048 spans; beyond that spans are
//! dropped, not waited for), and a background thread sends batches over
//! OTLP/HTTP. A dead or slow collector costs a call nothing; at exit toolgate
//! waits at most a second for the last batch. Spans that never reached the
//! collector (dropped from a full queue, refused, or still queued at exit)
//! are counted in `<data dir>/telemetry-stats.json`, and `toolgate log` says
//! how many.
//!
//! ```toml
//! [telemetry]
//! endpoint = "http://collector.internal:4318"   # else OTEL_EXPORTER_OTLP_ENDPOINT / _TRACES_ENDPOINT
//! include_arguments = false                     # the call's arguments and output preview, opt-in
//! certificate = "/etc/ssl/collector-ca.pem"     # an https:// collector's CA, else OTEL_EXPORTER_OTLP_CERTIFICATE
//! ```

mod export;
pub mod hook_export;
pub mod otlp;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use toolgate_core::{DecisionSource, Effect, Event, EventKind, Risk};

use otlp::{FinishedSpan, SpanKind, Value};

/// Spans waiting for export at most; more are dropped.
const MAX_QUEUE: usize = 2048;
/// Calls whose end has not been seen, at most (a crash leaves some behind).
const MAX_OPEN_CALLS: usize = 4096;

/// `[telemetry]` as configured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TelemetrySettings {
    /// The collector's base URL (`/v1/traces` is added); `None`: the
    /// standard `OTEL_EXPORTER_OTLP_*` variables, else `http://localhost:4318`.
    pub endpoint: Option<String>,
    /// Whether the call's arguments and output preview go into the span.
    pub include_arguments: bool,
    /// A PEM file of the CA an `https://` collector's certificate chains
    /// to, trusted beside the system's; `None`: the standard
    /// `OTEL_EXPORTER_OTLP_CERTIFICATE` variables.
    pub certificate: Option<PathBuf>,
}

/// The exporter of one process.
pub struct Telemetry {
    queue: Arc<export::Queue>,
    ids: Mutex<Ids>,
    include_arguments: bool,
    calls: Mutex<HashMap<String, OpenCall>>,
    counts: Arc<Counts>,
    /// Where the delivery counts are kept (`<data dir>/telemetry-stats.json`).
    stats_file: Option<PathBuf>,
    /// What of `counts` is already in the file.
    recorded: Mutex<(u64, u64)>,
}

/// Spans ended and delivered by this process.
#[derive(Debug, Default)]
struct Counts {
    ended: AtomicU64,
    delivered: AtomicU64,
    last_error: Mutex<Option<String>>,
}

/// `<data dir>/telemetry-stats.json`: spans of every process so far.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryStats {
    /// Spans ended (one or two per call).
    pub spans: u64,
    /// Spans the collector took.
    pub delivered: u64,
    /// The collector's last refusal, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

impl DeliveryStats {
    /// The file's name in the data directory.
    pub const FILE: &'static str = "telemetry-stats.json";

    /// The counts in `dir`'s file (zero when there is none).
    pub fn read(dir: &Path) -> DeliveryStats {
        std::fs::read(dir.join(Self::FILE))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Spans that never reached the collector.
    pub fn undelivered(&self) -> u64 {
        self.spans.saturating_sub(self.delivered)
    }
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("include_arguments", &self.include_arguments)
            .finish_non_exhaustive()
    }
}

/// What is known of a call before its end.
#[derive(Default)]
struct OpenCall {
    start_ms: Option<i64>,
    tool_call_id: Option<String>,
    arguments: Option<String>,
    decision: Option<Effect>,
    suggested: Option<Effect>,
    risk: Option<Risk>,
    source: Option<DecisionSource>,
    rule: Option<String>,
    actor: Option<String>,
    /// A hook's call: its last event read back from the log, to end the
    /// span with if the agent never reports the tool's outcome.
    last: Option<Event>,
    /// Ended without the agent reporting how the tool went.
    unreported: bool,
}

fn nanos(ms: i64) -> u64 {
    u64::try_from(ms).unwrap_or(0).saturating_mul(1_000_000)
}

/// The `execute_tool` span's attributes from the call's completion event `e`
/// and what its earlier events said (`call`), borrowing their strings.
fn call_attributes<'a>(
    e: &'a Event,
    call: &'a OpenCall,
    include_arguments: bool,
) -> Vec<(&'static str, Value<'a>)> {
    let p = &e.payload;
    let tool = p.tool.as_deref().unwrap_or("unknown");
    let text = |v: &'a str| Value::Text(Cow::Borrowed(v));
    let mut attrs: Vec<(&'static str, Value<'a>)> = Vec::with_capacity(20);
    attrs.push(("gen_ai.operation.name", text("execute_tool")));
    attrs.push(("gen_ai.tool.name", text(tool)));
    attrs.push((
        "gen_ai.tool.call.id",
        text(call.tool_call_id.as_deref().unwrap_or(&e.call_id)),
    ));
    attrs.push(("toolgate.call.id", text(&e.call_id)));
    attrs.push(("toolgate.session.id", text(&e.session_id)));
    let sandbox = call.source == Some(DecisionSource::Sandbox);
    let optional = [
        ("toolgate.decision", call.decision.map(Effect::as_str)),
        (
            "toolgate.decision.suggested",
            call.suggested.map(Effect::as_str),
        ),
        ("toolgate.risk", call.risk.map(Risk::as_str)),
        (
            "toolgate.decision.source",
            call.source.map(DecisionSource::as_str),
        ),
        ("toolgate.rule", call.rule.as_deref()),
        ("toolgate.actor", call.actor.as_deref()),
        ("toolgate.person", p.person.as_deref()),
        ("toolgate.machine", p.machine.as_deref()),
        ("toolgate.agent", p.agent.as_deref()),
    ];
    attrs.extend(
        optional
            .into_iter()
            .filter_map(|(key, v)| Some((key, text(v?)))),
    );
    if include_arguments {
        if let Some(args) = &call.arguments {
            attrs.push(("gen_ai.tool.call.arguments", text(args)));
        }
        if let Some(preview) = &p.preview {
            attrs.push(("gen_ai.tool.call.result", text(preview)));
        }
    }
    attrs.push(("toolgate.sandbox", Value::Bool(sandbox)));
    if call.unreported {
        attrs.push(("toolgate.outcome", text("not reported by the agent")));
    }
    // Staged writes of a sandboxed command that did not land.
    if let Some(refused) = p
        .extra
        .as_ref()
        .and_then(|x| x.get("staged_refused"))
        .and_then(|r| r.as_array())
    {
        let paths: Vec<&str> = refused.iter().filter_map(|p| p.as_str()).collect();
        attrs.push((
            "toolgate.sandbox.refused_count",
            Value::Int(i64::try_from(paths.len()).unwrap_or(i64::MAX)),
        ));
        attrs.push((
            "toolgate.sandbox.refused_paths",
            Value::Text(Cow::Owned(paths.join("\n"))),
        ));
    }
    attrs
}

/// Trace and span ids: random (`getrandom`) at the start, then a SplitMix64
/// sequence, so ids are unique without a system call per span.
struct Ids {
    state: u64,
}

impl Ids {
    fn new() -> Ids {
        let mut seed = [0u8; 8];
        if getrandom::fill(&mut seed).is_err() {
            // No randomness: the time and the process still make ids that
            // differ between processes.
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64);
            seed = (t ^ u64::from(std::process::id()).rotate_left(32)).to_le_bytes();
        }
        Ids {
            state: u64::from_le_bytes(seed),
        }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A span id (never all zero, which OTLP reads as none).
    fn span(&mut self) -> [u8; 8] {
        (self.next() | 1).to_le_bytes()
    }

    fn trace(&mut self) -> [u8; 16] {
        let mut t = [0u8; 16];
        t[..8].copy_from_slice(&self.next().to_le_bytes());
        t[8..].copy_from_slice(&(self.next() | 1).to_le_bytes());
        t
    }
}

impl Telemetry {
    /// The process's exporter, started on first use with `settings` (later
    /// settings are ignored: one provider per process).
    pub fn global(
        settings: &TelemetrySettings,
        data_dir: Option<&Path>,
    ) -> Result<Arc<Telemetry>, String> {
        static ONE: OnceLock<Arc<Telemetry>> = OnceLock::new();
        if let Some(t) = ONE.get() {
            return Ok(Arc::clone(t));
        }
        let settings = settings.clone();
        let stats_file = data_dir.map(|d| d.join(DeliveryStats::FILE));
        // The exporter's HTTP client must not be made on an async runtime's thread.
        let made = std::thread::spawn(move || Telemetry::start(&settings, stats_file))
            .join()
            .map_err(|_| "starting the OTLP exporter panicked".to_string())??;
        Ok(Arc::clone(ONE.get_or_init(|| Arc::new(made))))
    }

    fn start(
        settings: &TelemetrySettings,
        stats_file: Option<PathBuf>,
    ) -> Result<Telemetry, String> {
        let destination = export::Destination::resolve(
            settings.endpoint.as_deref(),
            settings.certificate.as_deref(),
            |n| std::env::var(n).ok(),
        );
        let counts = Arc::new(Counts::default());
        let queue = export::start(destination, Arc::clone(&counts), MAX_QUEUE)?;
        Ok(Telemetry {
            queue,
            ids: Mutex::new(Ids::new()),
            include_arguments: settings.include_arguments,
            calls: Mutex::new(HashMap::new()),
            counts,
            stats_file,
            recorded: Mutex::new((0, 0)),
        })
    }

    /// Takes note of an event as it is recorded; a call's last event ends
    /// (and queues) its span (under an MCP server span when `over_mcp`).
    /// Never blocks on the collector.
    pub fn observe(&self, e: &Event, over_mcp: bool) {
        if e.call_id.is_empty() {
            return;
        }
        let p = &e.payload;
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        match e.kind {
            EventKind::PermissionRequested
            | EventKind::PermissionResolved
            | EventKind::ToolStarted => {
                // Looked up before inserting: most events are of a call
                // already open, and need no copy of its id.
                if !calls.contains_key(&e.call_id) {
                    if calls.len() >= MAX_OPEN_CALLS {
                        calls.clear();
                    }
                    calls.insert(e.call_id.clone(), OpenCall::default());
                }
                let Some(call) = calls.get_mut(&e.call_id) else {
                    return;
                };
                call.start_ms.get_or_insert(e.ts_ms);
                if call.tool_call_id.is_none() {
                    call.tool_call_id.clone_from(&p.tool_call_id);
                }
                if self.include_arguments && call.arguments.is_none() {
                    call.arguments = p.args.as_ref().map(|a| a.to_string());
                }
                if e.kind == EventKind::PermissionRequested {
                    if let Some(s) = p.suggested_decision.or(p.decision) {
                        call.suggested =
                            Some(call.suggested.map_or(s, |old| Effect::strictest([old, s])));
                    }
                }
                if e.kind == EventKind::PermissionResolved {
                    if let Some(d) = p.decision {
                        // The strictest request decides the call, and says why.
                        let stricter = call
                            .decision
                            .is_none_or(|old| Effect::strictest([old, d]) != old);
                        if stricter {
                            call.decision = Some(d);
                            call.risk = p.risk_at_decision;
                            call.source = p.sourced_from;
                            call.rule.clone_from(&p.rule);
                            call.actor.clone_from(&p.actor);
                        }
                    }
                }
            }
            EventKind::ToolCompleted | EventKind::ToolFailed => {
                let call = calls.remove(&e.call_id).unwrap_or_default();
                drop(calls);
                self.end(e, call, over_mcp);
            }
            EventKind::SessionStarted | EventKind::NetworkConnection => {}
        }
    }

    /// Takes note of an event of an agent's hook call, read back from the
    /// audit log ([`hook_export`]). The agent runs the tool itself, so the
    /// call's span ends where its outcome is known: a denial (the tool never
    /// runs), the outcome the agent reports, or
    /// [`end_unreported`](Self::end_unreported) when no report comes. An
    /// outcome whose decision this process never saw (recorded before it
    /// started reading) has no span to end, and is passed over.
    pub fn observe_hook_event(&self, e: &Event) {
        if e.call_id.is_empty() {
            return;
        }
        match e.kind {
            EventKind::ToolCompleted | EventKind::ToolFailed => {
                if self.open_call(&e.call_id, |_| ()).is_none() {
                    return;
                }
                self.observe(e, false);
            }
            EventKind::PermissionResolved if e.payload.decision == Some(Effect::Deny) => {
                self.observe(e, false);
                let mut denied = e.clone();
                denied.kind = EventKind::ToolFailed;
                denied.payload.reason = Some("denied".into());
                self.observe(&denied, false);
            }
            _ => {
                self.observe(e, false);
                self.open_call(&e.call_id, |call| call.last = Some(e.clone()));
            }
        }
    }

    /// Runs `f` on the open call `call_id`, if there is one.
    fn open_call<T>(&self, call_id: &str, f: impl FnOnce(&mut OpenCall) -> T) -> Option<T> {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        calls.get_mut(call_id).map(f)
    }

    /// Ends the span of every hook call still open whose last event is
    /// older than `before_ms` (every one with `None`), at that event, as
    /// not reported by the agent. Returns how many were ended.
    pub fn end_unreported(&self, before_ms: Option<i64>) -> usize {
        let stale: Vec<OpenCall> = {
            let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
            let ids: Vec<String> = calls
                .iter()
                .filter(|(_, c)| {
                    c.last
                        .as_ref()
                        .is_some_and(|l| before_ms.is_none_or(|b| l.ts_ms < b))
                })
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| calls.remove(id)).collect()
        };
        let ended = stale.len();
        for mut call in stale {
            let Some(mut last) = call.last.take() else {
                continue;
            };
            last.kind = EventKind::ToolCompleted;
            call.unreported = true;
            self.end(&last, call, false);
        }
        ended
    }

    /// Spans this process has ended so far.
    pub fn spans_ended(&self) -> u64 {
        self.counts.ended.load(Ordering::Relaxed)
    }

    fn end(&self, e: &Event, call: OpenCall, over_mcp: bool) {
        let p = &e.payload;
        let tool = p.tool.as_deref().unwrap_or("unknown");
        let start = call
            .start_ms
            .unwrap_or_else(|| e.ts_ms - i64::try_from(p.duration_ms.unwrap_or(0)).unwrap_or(0));
        let mut attrs = call_attributes(e, &call, self.include_arguments);
        let failed = e.kind == EventKind::ToolFailed;
        let error = failed.then(|| Cow::Borrowed(p.reason.as_deref().unwrap_or_default()));
        if failed {
            attrs.push((
                "error.type",
                Value::Text(Cow::Borrowed(p.reason.as_deref().unwrap_or("tool_error"))),
            ));
        }
        let (trace_id, tool_id, server_id) = {
            let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
            (ids.trace(), ids.span(), over_mcp.then(|| ids.span()))
        };
        let (start_ns, end_ns) = (nanos(start), nanos(e.ts_ms));
        self.counts
            .ended
            .fetch_add(if over_mcp { 2 } else { 1 }, Ordering::Relaxed);
        self.queue.offer(&FinishedSpan {
            trace_id,
            span_id: tool_id,
            parent: server_id,
            name: Cow::Owned(format!("execute_tool {tool}")),
            kind: SpanKind::Internal,
            start_ns,
            end_ns,
            attributes: attrs,
            error: error.clone(),
        });
        // The MCP server's span for the request, around the tool's.
        if let Some(server_id) = server_id {
            self.queue.offer(&FinishedSpan {
                trace_id,
                span_id: server_id,
                parent: None,
                name: Cow::Owned(format!("tools/call {tool}")),
                kind: SpanKind::Server,
                start_ns,
                end_ns,
                attributes: vec![
                    ("mcp.method.name", Value::Text(Cow::Borrowed("tools/call"))),
                    ("mcp.session.id", Value::Text(Cow::Borrowed(&e.session_id))),
                    ("gen_ai.tool.name", Value::Text(Cow::Borrowed(tool))),
                ],
                error,
            });
        }
    }

    /// Sends what is queued, waiting at most `within` (a dead collector
    /// does not hold the process).
    pub fn flush(self: &Arc<Self>, within: Duration) {
        let (done, answered) = std::sync::mpsc::sync_channel(1);
        self.queue.flush(done);
        if answered.recv_timeout(within).is_err() {
            tracing::warn!("the OTLP collector did not take the last spans in time");
        }
        if let Some(e) = self
            .counts
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            tracing::warn!("exporting spans failed: {e}");
        }
        self.record();
    }

    /// Adds what this process ended and delivered since the last record to
    /// the data directory's counts. Concurrent processes may lose an update
    /// (the counts are a diagnosis, not the audit log).
    fn record(&self) {
        let Some(file) = &self.stats_file else {
            return;
        };
        let mut recorded = self.recorded.lock().unwrap_or_else(PoisonError::into_inner);
        let ended = self.counts.ended.load(Ordering::Relaxed);
        let delivered = self.counts.delivered.load(Ordering::Relaxed);
        let Some(dir) = file.parent() else {
            return;
        };
        let mut stats = DeliveryStats::read(dir);
        stats.spans += ended - recorded.0;
        stats.delivered += delivered - recorded.1;
        let last = self
            .counts
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if last.is_some() {
            stats.last_error = last;
        }
        let tmp = file.with_extension("json.tmp");
        let written = serde_json::to_vec(&stats)
            .map_err(std::io::Error::other)
            .and_then(|b| std::fs::write(&tmp, b))
            .and_then(|()| std::fs::rename(&tmp, file));
        match written {
            Ok(()) => *recorded = (ended, delivered),
            Err(e) => tracing::warn!("cannot record telemetry counts in {}: {e}", file.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::EventPayload;

    fn completion(extra: Option<serde_json::Value>) -> Event {
        let payload = EventPayload {
            tool: Some("bash".into()),
            extra,
            ..EventPayload::default()
        };
        Event::now(EventKind::ToolCompleted, "s1", "c1", payload)
    }

    fn find<'a>(attrs: &'a [(&'static str, Value<'a>)], key: &str) -> Option<&'a Value<'a>> {
        attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    #[test]
    fn refused_staged_paths_become_span_attributes() {
        let e = completion(Some(serde_json::json!({
            "staged_refused": [".git/hooks/pre-commit", ".envrc"]
        })));
        let call = OpenCall {
            source: Some(DecisionSource::Sandbox),
            ..OpenCall::default()
        };
        let attrs = call_attributes(&e, &call, false);
        assert_eq!(find(&attrs, "toolgate.sandbox"), Some(&Value::Bool(true)));
        assert_eq!(
            find(&attrs, "toolgate.sandbox.refused_count"),
            Some(&Value::Int(2))
        );
        assert_eq!(
            find(&attrs, "toolgate.sandbox.refused_paths"),
            Some(&Value::Text(".git/hooks/pre-commit\n.envrc".into()))
        );
        assert_eq!(
            find(&attrs, "gen_ai.tool.name"),
            Some(&Value::Text("bash".into()))
        );
    }

    #[test]
    fn a_call_with_nothing_refused_has_no_refusal_attributes_and_no_arguments_unless_asked() {
        let (e, call) = (completion(None), OpenCall::default());
        let attrs = call_attributes(&e, &call, false);
        assert_eq!(find(&attrs, "toolgate.sandbox.refused_count"), None);
        assert_eq!(find(&attrs, "gen_ai.tool.call.arguments"), None);
        assert_eq!(find(&attrs, "toolgate.sandbox"), Some(&Value::Bool(false)));
    }

    #[test]
    fn ids_are_never_zero_and_do_not_repeat() {
        let mut ids = Ids::new();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let s = ids.span();
            assert_ne!(s, [0; 8]);
            assert!(seen.insert(s));
        }
        assert_ne!(ids.trace(), [0; 16]);
    }
}
