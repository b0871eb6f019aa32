//! Audit events and the event-sink port that the store implements.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::risk::{DecisionSource, Effect, Risk};

/// The kind of step an event records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum EventKind {
    /// A request was judged (before anyone was asked).
    #[serde(rename = "permission.requested")]
    PermissionRequested,
    /// A request has its final decision.
    #[serde(rename = "permission.resolved")]
    PermissionResolved,
    /// The tool is about to run.
    #[serde(rename = "tool.started")]
    ToolStarted,
    /// The tool finished and its output was encoded and bounded.
    #[serde(rename = "tool.completed")]
    ToolCompleted,
    /// The call failed (at any step after resolution), was cancelled or panicked.
    #[serde(rename = "tool.failed")]
    ToolFailed,
    /// A session began (an MCP connection, a CLI invocation).
    #[serde(rename = "session.started")]
    SessionStarted,
    /// A confined command's connection through the sandbox's allowlisting
    /// proxy, admitted (`decision: allow`) or refused (`deny`).
    #[serde(rename = "network.connection")]
    NetworkConnection,
}

impl EventKind {
    /// The dotted name stored in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::PermissionRequested => "permission.requested",
            EventKind::PermissionResolved => "permission.resolved",
            EventKind::ToolStarted => "tool.started",
            EventKind::ToolCompleted => "tool.completed",
            EventKind::ToolFailed => "tool.failed",
            EventKind::SessionStarted => "session.started",
            EventKind::NetworkConnection => "network.connection",
        }
    }

    /// Parses the dotted name.
    pub fn parse(s: &str) -> Option<EventKind> {
        Some(match s {
            "permission.requested" => EventKind::PermissionRequested,
            "permission.resolved" => EventKind::PermissionResolved,
            "tool.started" => EventKind::ToolStarted,
            "tool.completed" => EventKind::ToolCompleted,
            "tool.failed" => EventKind::ToolFailed,
            "session.started" => EventKind::SessionStarted,
            "network.connection" => EventKind::NetworkConnection,
            _ => return None,
        })
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The payload of an event. Fields that do not apply to a kind are absent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventPayload {
    /// The tool name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The decoded input, logged once per call: on its first `permission.requested`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// The model's id for this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The request's action (permission events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The request's resource (permission events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The risk when decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk_at_decision: Option<Risk>,
    /// Where the decision came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sourced_from: Option<DecisionSource>,
    /// The gate's decision before anyone was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_decision: Option<Effect>,
    /// The final decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Effect>,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The rule that matched, as `file:line`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Who decided or acted (`policy`, `user`, a client name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// A process exit code (bash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Bytes of the full output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_full: Option<u64>,
    /// Bytes the model received after bounding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_returned: Option<u64>,
    /// Where the full output was spilled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spill_path: Option<String>,
    /// How long the step took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The first few hundred bytes of the output or error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// Who the person behind the call is (`[identity] person`, else the OS
    /// user and host, `user@host`): stamped by the process that records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
    /// The machine that recorded the event (its host name, or `[identity] machine`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// The agent the call came from (`claude-code` for a hook, the MCP
    /// client's name, `toolgate` for `toolgate call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Anything else (client name and version for `session.started`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Value>,
}

/// One durable record of a step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Event {
    /// What step.
    pub kind: EventKind,
    /// The session the step belongs to.
    pub session_id: String,
    /// The call the step belongs to (empty for session events).
    pub call_id: String,
    /// Milliseconds since the Unix epoch.
    pub ts_ms: i64,
    /// The details.
    pub payload: EventPayload,
}

impl Event {
    /// An event stamped with the current time.
    pub fn now(
        kind: EventKind,
        session_id: impl Into<String>,
        call_id: impl Into<String>,
        payload: EventPayload,
    ) -> Self {
        Event {
            kind,
            session_id: session_id.into(),
            call_id: call_id.into(),
            ts_ms: now_ms(),
            payload,
        }
    }
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `ms` since the Unix epoch as RFC 3339 UTC with milliseconds; times before
/// 1970 show as the epoch.
///
/// ```
/// assert_eq!(toolgate_core::event::format_utc_ms(1_795_996_800_123), "2026-11-30T00:00:00.123Z");
/// ```
pub fn format_utc_ms(ms: i64) -> String {
    let since = std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(UNIX_EPOCH + since).to_string()
}

/// Errors from an event sink.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SinkError {
    /// The sink was shut down.
    #[error("the audit log is closed")]
    Closed,
    /// Writing failed; nothing that depends on this event may continue.
    #[error("the audit log could not store the event: {0}")]
    Storage(#[source] crate::failure::Failure),
}

/// Resolves to the event's sequence number once the event is durable.
pub type EventAck = BoxFuture<'static, Result<u64, SinkError>>;

/// Where events go. Implemented by `toolgate-store` (SQLite, hash-chained).
///
/// `submit` only queues, so it can be called from `Drop`; awaiting the returned
/// [`EventAck`] waits until the event is committed.
pub trait EventSink: Send + Sync {
    /// Queues an event and returns a future that resolves when it is durable.
    fn submit(&self, event: Event) -> EventAck;

    /// Queues several events, in order, and returns one future that resolves
    /// (to the last event's sequence number) once every one of them is durable.
    /// A sink may commit them together. The default submits them one by one.
    fn submit_batch(&self, events: Vec<Event>) -> EventAck {
        let acks: Vec<EventAck> = events.into_iter().map(|e| self.submit(e)).collect();
        Box::pin(async move {
            let mut last = 0;
            for r in futures::future::join_all(acks).await {
                last = r?;
            }
            Ok(last)
        })
    }
}
