//! Prompts for tests, in one line.

use toolgate_core::Risk;

use crate::approvals::{AskItem, AskPrompt};

/// An ask for call `call_id` of session `s1` about `tool`, with no requests,
/// offering both `session` and `always`, waiting a minute.
pub fn ask_prompt(call_id: &str, tool: &str) -> AskPrompt {
    AskPrompt {
        session_id: "s1".into(),
        call_id: call_id.into(),
        tool: tool.into(),
        items: Vec::new(),
        offer_session: true,
        offer_always: true,
        timeout_ms: 60_000,
        preview: None,
    }
}

/// [`ask_prompt`] with one request: action `tool` on `resource` at `risk`,
/// asked for `reason`.
pub fn ask_about(
    call_id: &str,
    tool: &str,
    risk: Risk,
    resource: &str,
    reason: impl Into<String>,
) -> AskPrompt {
    AskPrompt {
        items: vec![AskItem {
            action: tool.into(),
            resource: resource.into(),
            risk,
            reason: reason.into(),
            save_pattern: None,
        }],
        ..ask_prompt(call_id, tool)
    }
}
