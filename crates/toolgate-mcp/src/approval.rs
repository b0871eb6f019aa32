//! Approvals through MCP elicitation: an `ask` becomes a form shown by the
//! client (action, resource, risk, reason) with the choices once / session /
//! always / reject and an optional message for the model.
//!
//! An [`ElicitationChannel`] is shared by every connection of a server. Each
//! connection whose client declared the form-elicitation capability registers
//! its peer under its session id; an ask for that session goes to that client.
//! An ask for a session without such a client is an error, so that the next
//! approval channel (the web page, the terminal) is tried.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, ServiceError};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate_core::Risk;

/// What a person is asked to approve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalQuestion {
    /// The tool being called.
    pub tool: String,
    /// The permission asked for (`bash`, `edit`, `external_directory`, …).
    pub action: String,
    /// What is touched: a command, a canonical path, a host.
    pub resource: String,
    /// The risk class.
    pub risk: Risk,
    /// Why the policy asks.
    pub reason: String,
    /// Where a shell command starts, when it is one.
    pub cwd: Option<String>,
    /// Extra facts (`create` vs `overwrite`, …).
    pub note: Option<String>,
    /// Whether "always" may be offered (never for destructive requests or ones
    /// whose approval cannot be saved).
    pub always_offered: bool,
}

/// A person's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// Allow this call only.
    Once,
    /// Allow matching calls for the rest of the session.
    Session,
    /// Allow matching calls in this project from now on.
    Always,
    /// Refuse, optionally telling the model why.
    Reject {
        /// The person's message to the model.
        message: Option<String>,
    },
}

/// Why no answer came through elicitation.
#[derive(Debug, thiserror::Error)]
pub enum ElicitError {
    /// No connected client of that session can show forms.
    #[error("no MCP client with the elicitation capability is connected for session {0}")]
    Unsupported(String),
    /// The request to the client failed.
    #[error("elicitation failed: {0}")]
    Transport(String),
    /// The call was cancelled while waiting.
    #[error("cancelled while waiting for an answer")]
    Cancelled,
    /// The client's answer does not fit the form.
    #[error("invalid elicitation answer: {0}")]
    InvalidAnswer(String),
}

/// The peers of connected clients that can answer approval forms, by session.
#[derive(Clone, Default)]
pub struct ElicitationChannel {
    peers: Arc<Mutex<HashMap<String, Peer<RoleServer>>>>,
}

impl std::fmt::Debug for ElicitationChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sessions: Vec<String> = self.lock().keys().cloned().collect();
        f.debug_struct("ElicitationChannel")
            .field("sessions", &sessions)
            .finish()
    }
}

impl ElicitationChannel {
    /// An empty channel.
    pub fn new() -> Self {
        ElicitationChannel::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Peer<RoleServer>>> {
        self.peers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `peer` for `session_id` if its client declared form
    /// elicitation at `initialize`. Returns whether it was registered.
    pub(crate) fn register(&self, session_id: &str, peer: &Peer<RoleServer>) -> bool {
        if !peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return false;
        }
        self.lock().insert(session_id.to_string(), peer.clone());
        true
    }

    /// Forgets the session's peer (the connection closed).
    pub(crate) fn unregister(&self, session_id: &str) {
        self.lock().remove(session_id);
    }

    /// Whether a client that can answer is connected for `session_id`.
    pub fn can_ask(&self, session_id: &str) -> bool {
        self.lock().contains_key(session_id)
    }

    /// Asks the client of `session_id` to approve `question`.
    pub async fn ask(
        &self,
        session_id: &str,
        question: &ApprovalQuestion,
        cancel: &CancellationToken,
    ) -> Result<ApprovalAnswer, ElicitError> {
        let peer = self
            .lock()
            .get(session_id)
            .cloned()
            .ok_or_else(|| ElicitError::Unsupported(session_id.to_string()))?;
        let (message, schema) = approval_form(question);
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: schema,
        };
        let result = tokio::select! {
            r = peer.create_elicitation(params) => r,
            () = cancel.cancelled() => return Err(ElicitError::Cancelled),
        };
        match result {
            Ok(answer) => parse_answer(&answer, question.always_offered),
            Err(ServiceError::TransportClosed) => {
                self.unregister(session_id);
                Err(ElicitError::Transport("the client disconnected".into()))
            }
            Err(e) => Err(ElicitError::Transport(e.to_string())),
        }
    }
}

/// The message and form schema for a question.
pub fn approval_form(question: &ApprovalQuestion) -> (String, ElicitationSchema) {
    let mut message = format!(
        "toolgate asks: allow {} on {}?\nrisk: {}\nreason: {}\ntool: {}",
        question.action, question.resource, question.risk, question.reason, question.tool
    );
    if let Some(cwd) = &question.cwd {
        message.push_str(&format!("\nworking directory: {cwd}"));
    }
    if let Some(note) = &question.note {
        message.push_str(&format!("\nnote: {note}"));
    }
    let mut choices = vec![
        json!({"const": "once", "title": "Allow once"}),
        json!({"const": "session", "title": "Allow for this session"}),
    ];
    if question.always_offered {
        choices.push(json!({"const": "always", "title": "Always allow in this project"}));
    }
    choices.push(json!({"const": "reject", "title": "Reject"}));
    let schema = json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "oneOf": choices,
            },
            "message": {
                "type": "string",
                "title": "Message to the model (optional)",
                "description": "Sent to the model with a rejection, e.g. what to do instead.",
            },
        },
        "required": ["decision"],
    });
    let schema = match schema {
        Value::Object(map) => ElicitationSchema::from_json_schema(map).ok(),
        _ => None,
    }
    // The schema above is fixed and valid; this fallback is never reached.
    .unwrap_or_else(|| {
        ElicitationSchema::builder()
            .required_string("decision")
            .build_unchecked()
    });
    (message, schema)
}

/// Interprets the client's answer. Declining or dismissing the form rejects.
pub fn parse_answer(
    answer: &ElicitResult,
    always_offered: bool,
) -> Result<ApprovalAnswer, ElicitError> {
    let content = match answer.action {
        ElicitationAction::Accept => answer.content.as_ref(),
        // Decline, cancel, or anything newer: not an approval.
        _ => return Ok(ApprovalAnswer::Reject { message: None }),
    };
    let content = content
        .and_then(Value::as_object)
        .ok_or_else(|| ElicitError::InvalidAnswer("accepted without content".into()))?;
    let message = content
        .get("message")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    match content.get("decision").and_then(Value::as_str) {
        Some("once") => Ok(ApprovalAnswer::Once),
        Some("session") => Ok(ApprovalAnswer::Session),
        Some("always") if always_offered => Ok(ApprovalAnswer::Always),
        Some("always") => Err(ElicitError::InvalidAnswer(
            "\"always\" was not offered for this request".into(),
        )),
        Some("reject") => Ok(ApprovalAnswer::Reject { message }),
        Some(other) => Err(ElicitError::InvalidAnswer(format!(
            "unknown decision {other:?}; expected once, session, always or reject"
        ))),
        None => Err(ElicitError::InvalidAnswer("missing `decision`".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(always: bool) -> ApprovalQuestion {
        ApprovalQuestion {
            tool: "bash".into(),
            action: "bash".into(),
            resource: "git push origin main".into(),
            risk: Risk::Network,
            reason: "network commands ask".into(),
            cwd: Some("/ws".into()),
            note: None,
            always_offered: always,
        }
    }

    fn answer(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
        let mut r = ElicitResult::new(action);
        r.content = content;
        r
    }

    #[test]
    fn form_shows_action_resource_risk_reason_and_choices() {
        let (message, schema) = approval_form(&question(true));
        assert!(message.contains("bash on git push origin main"));
        assert!(message.contains("risk: network"));
        assert!(message.contains("reason: network commands ask"));
        assert!(message.contains("working directory: /ws"));
        let v = serde_json::to_value(&schema).unwrap();
        let consts: Vec<&str> = v["properties"]["decision"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["const"].as_str().unwrap())
            .collect();
        assert_eq!(consts, ["once", "session", "always", "reject"]);
        assert_eq!(v["required"], json!(["decision"]));
    }

    #[test]
    fn no_always_when_not_offered() {
        let (_, schema) = approval_form(&question(false));
        let v = serde_json::to_value(&schema).unwrap();
        let text = v["properties"]["decision"].to_string();
        assert!(!text.contains("always"), "{text}");
        let a = answer(
            ElicitationAction::Accept,
            Some(json!({"decision": "always"})),
        );
        assert!(matches!(
            parse_answer(&a, false),
            Err(ElicitError::InvalidAnswer(_))
        ));
    }

    #[test]
    fn answers_map_to_approvals() {
        let once = answer(ElicitationAction::Accept, Some(json!({"decision": "once"})));
        assert_eq!(parse_answer(&once, true).unwrap(), ApprovalAnswer::Once);
        let always = answer(
            ElicitationAction::Accept,
            Some(json!({"decision": "always"})),
        );
        assert_eq!(parse_answer(&always, true).unwrap(), ApprovalAnswer::Always);
        let reject = answer(
            ElicitationAction::Accept,
            Some(json!({"decision": "reject", "message": " use a branch "})),
        );
        assert_eq!(
            parse_answer(&reject, true).unwrap(),
            ApprovalAnswer::Reject {
                message: Some("use a branch".into())
            }
        );
        let declined = answer(ElicitationAction::Decline, None);
        assert_eq!(
            parse_answer(&declined, true).unwrap(),
            ApprovalAnswer::Reject { message: None }
        );
        let bogus = answer(ElicitationAction::Accept, Some(json!({"decision": "yes"})));
        assert!(parse_answer(&bogus, true).is_err());
        let empty = answer(ElicitationAction::Accept, None);
        assert!(parse_answer(&empty, true).is_err());
    }

    #[tokio::test]
    async fn unknown_session_is_an_error_so_the_next_channel_is_tried() {
        let channel = ElicitationChannel::new();
        let err = channel
            .ask("s1", &question(true), &CancellationToken::new())
            .await
            .unwrap_err();
        assert!(matches!(err, ElicitError::Unsupported(_)));
        assert!(!channel.can_ask("s1"));
    }
}
