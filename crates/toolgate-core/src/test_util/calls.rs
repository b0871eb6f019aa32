//! Builders for the identity and request of a call, in session `s1`.

use crate::{CallIdentity, CallRequest};

/// The identity of call `call` in session `s1`; every other field default.
pub fn identity(call: &str) -> CallIdentity {
    CallIdentity {
        session_id: "s1".into(),
        call_id: call.into(),
        ..CallIdentity::default()
    }
}

/// A request for tool `name` with `input`, as call `id` of session `s1`.
pub fn call(name: &str, input: serde_json::Value, id: &str) -> CallRequest {
    CallRequest {
        name: name.into(),
        input,
        identity: identity(id),
    }
}

/// Event `seq` of a log as a reader returns it: `kind` with `payload`, in
/// session `session_id`, call `c`, its hashes zeros (for views of events,
/// not for checks of the chain).
pub fn stored_event(
    seq: u64,
    kind: crate::EventKind,
    session_id: &str,
    payload: crate::EventPayload,
) -> crate::event_query::StoredEvent {
    crate::event_query::StoredEvent {
        seq,
        event: crate::Event::now(kind, session_id, "c", payload),
        prev_hash: "0".repeat(64),
        hash: "0".repeat(64),
    }
}
