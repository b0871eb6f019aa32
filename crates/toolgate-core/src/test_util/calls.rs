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
