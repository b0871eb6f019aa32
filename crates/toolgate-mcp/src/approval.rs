//! Approvals through MCP elicitation: an ask becomes a form shown by the
//! client — the tool, and for each request its action, resource, risk and
//! reason — with the choices once / session / always / reject (only those the
//! prompt offers) and an optional message for the model.
//!
//! An [`ElicitationChannel`] is shared by every connection of a server. Each
//! connection whose client declared the form-elicitation capability at
//! `initialize` registers its peer under its session id; an ask for that
//! session goes to that client. An ask for a session without such a client
//! fails with [`ChannelError::Unavailable`], so the next approval channel (the
//! web page, the terminal) is tried. Protocol 2026-07-28 forbids server-to-client
//! requests: its calls register by call id instead, and the form travels in an
//! input-required result (see [`crate::mrtr`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, ServiceError};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use toolgate_core::Failure;
use toolgate_policy::approvals::{Answer, ApprovalChannel, AskPrompt, ChannelError};

use crate::mrtr::{APPROVAL_KEY, InputAsk};

/// The peers of connected clients that can answer approval forms, by session,
/// and the calls of 2026-07-28 clients that answer through input-required
/// results, by call id.
#[derive(Clone, Default)]
pub struct ElicitationChannel {
    peers: Arc<Mutex<HashMap<String, Peer<RoleServer>>>>,
    calls: Arc<Mutex<HashMap<String, mpsc::UnboundedSender<InputAsk>>>>,
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

    /// Routes the asks of call `call_id` to the `tools/call` waiting for it.
    pub(crate) fn register_call(&self, call_id: &str, tx: mpsc::UnboundedSender<InputAsk>) {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(call_id.to_string(), tx);
    }

    /// Forgets a finished call.
    pub(crate) fn unregister_call(&self, call_id: &str) {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(call_id);
    }

    fn call_route(&self, call_id: &str) -> Option<mpsc::UnboundedSender<InputAsk>> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(call_id)
            .cloned()
    }

    /// Whether a client that can answer is connected for `session_id`.
    pub fn can_ask(&self, session_id: &str) -> bool {
        self.lock().contains_key(session_id)
    }
}

impl ElicitationChannel {
    /// Shows a form to the client of `session_id` and waits for its answer: in
    /// an input-required result when call `call_id` answers that way (protocol
    /// 2026-07-28, under `key` in `inputRequests`), else as an elicitation
    /// request. `Unavailable` when no client that can answer is connected.
    pub async fn elicit_form(
        &self,
        session_id: &str,
        call_id: &str,
        key: &'static str,
        message: String,
        requested_schema: ElicitationSchema,
    ) -> Result<ElicitResult, ChannelError> {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        };
        if let Some(route) = self.call_route(call_id) {
            let (reply, answer) = oneshot::channel();
            route.send(InputAsk { key, params, reply }).map_err(|_| {
                ChannelError::Unavailable("the MCP call is no longer waiting".into())
            })?;
            return answer.await.map_err(|_| {
                ChannelError::Unavailable("the MCP client did not come back with an answer".into())
            });
        }
        let peer = self.lock().get(session_id).cloned().ok_or_else(|| {
            ChannelError::Unavailable(Failure::new(format!(
                "no MCP client with the elicitation capability is connected for session {session_id}"
            )))
        })?;
        match peer.create_elicitation(params).await {
            Ok(answer) => Ok(answer),
            Err(ServiceError::TransportClosed) => {
                self.unregister(session_id);
                Err(ChannelError::Unavailable(
                    "the MCP client disconnected".into(),
                ))
            }
            Err(e) => Err(ChannelError::Failed(Failure::caused(
                "elicitation failed",
                e,
            ))),
        }
    }
}

#[async_trait]
impl ApprovalChannel for ElicitationChannel {
    async fn ask(&self, prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        let (message, schema) = approval_form(prompt);
        let sent = std::time::Instant::now();
        let answer = self
            .elicit_form(
                &prompt.session_id,
                &prompt.call_id,
                APPROVAL_KEY,
                message,
                schema,
            )
            .await?;
        parse_answer_after(&answer, prompt, sent.elapsed())
    }
}

/// The message and form schema for a prompt.
pub fn approval_form(prompt: &AskPrompt) -> (String, ElicitationSchema) {
    // The client may render the text as it is: escapes and overrides made visible.
    let prompt = &prompt.shown();
    let mut message = format!("toolgate: {} asks for permission", prompt.tool);
    for item in &prompt.items {
        message.push_str(&format!(
            "\n- {} {}\n  risk: {}\n  reason: {}",
            item.action, item.resource, item.risk, item.reason
        ));
        if prompt.offer_always {
            message.push_str(&format!("\n  {}", item.saves()));
        }
    }
    let mut choices = vec![json!({"const": "once", "title": "Allow once"})];
    if prompt.offer_session {
        choices.push(json!({"const": "session", "title": "Allow for this session"}));
    }
    if prompt.offer_always {
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

/// A decline or cancel that comes back sooner than this after the form was
/// sent is the client's own answer, not a person's: nobody reads a form and
/// answers it in a third of a second, while a client with nobody at its
/// prompt (Claude Code's `-p`, Codex's `exec`) declines at once.
pub const CLIENT_DECLINE_WITHIN: std::time::Duration = std::time::Duration::from_millis(300);

/// [`parse_answer`] for an answer that came `elapsed` after the form was
/// sent: a decline or cancel within [`CLIENT_DECLINE_WITHIN`] is
/// [`Answer::ClientDeclined`], recorded with actor `client`.
pub fn parse_answer_after(
    answer: &ElicitResult,
    prompt: &AskPrompt,
    elapsed: std::time::Duration,
) -> Result<Answer, ChannelError> {
    if answer.action != ElicitationAction::Accept && elapsed < CLIENT_DECLINE_WITHIN {
        let action = serde_json::to_value(&answer.action)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "decline".into());
        return Ok(Answer::ClientDeclined {
            why: format!(
                "the MCP client answered `{action}` {} ms after the form was sent, sooner than a person reads it",
                elapsed.as_millis()
            ),
        });
    }
    parse_answer(answer, prompt)
}

/// Interprets the client's answer. Declining or dismissing the form rejects;
/// a choice the prompt did not offer is an error.
pub fn parse_answer(answer: &ElicitResult, prompt: &AskPrompt) -> Result<Answer, ChannelError> {
    let invalid =
        |m: String| ChannelError::Failed(format!("invalid elicitation answer: {m}").into());
    let content = match answer.action {
        ElicitationAction::Accept => answer.content.as_ref(),
        // Decline, cancel, or anything newer: not an approval.
        _ => return Ok(Answer::Reject { message: None }),
    };
    let content = content
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("accepted without content".into()))?;
    let message = content
        .get("message")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    match content.get("decision").and_then(Value::as_str) {
        Some("once") => Ok(Answer::Once),
        Some("session") if prompt.offer_session => Ok(Answer::Session),
        Some("always") if prompt.offer_always => Ok(Answer::Always),
        Some("reject") => Ok(Answer::Reject { message }),
        Some(c @ ("session" | "always")) => Err(invalid(format!("{c:?} was not offered"))),
        Some(other) => Err(invalid(format!(
            "unknown decision {other:?}; expected once, session, always or reject"
        ))),
        None => Err(invalid("missing `decision`".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::Risk;
    use toolgate_policy::approvals::AskItem;

    fn prompt(offer: bool) -> AskPrompt {
        AskPrompt {
            session_id: "s1".into(),
            call_id: "c1".into(),
            tool: "bash".into(),
            items: vec![
                AskItem {
                    action: "bash".into(),
                    resource: "git push origin main".into(),
                    risk: Risk::Network,
                    reason: "network commands ask".into(),
                    save_pattern: Some("git push origin main".into()),
                },
                AskItem {
                    action: "bash".into(),
                    resource: "rm -rf build".into(),
                    risk: Risk::Destructive,
                    reason: "destructive commands ask every time".into(),
                    save_pattern: None,
                },
            ],
            offer_session: offer,
            offer_always: offer,
            timeout_ms: 1000,
            preview: None,
        }
    }

    fn answer(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
        let mut r = ElicitResult::new(action);
        r.content = content;
        r
    }

    fn choices(p: &AskPrompt) -> Vec<String> {
        let (_, schema) = approval_form(p);
        let v = serde_json::to_value(&schema).unwrap();
        v["properties"]["decision"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["const"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn form_shows_every_request_with_risk_and_reason() {
        let (message, schema) = approval_form(&prompt(true));
        assert!(message.contains("bash git push origin main"));
        assert!(message.contains("risk: network"));
        assert!(message.contains("reason: network commands ask"));
        assert!(message.contains("rm -rf build") && message.contains("risk: destructive"));
        assert!(
            message.contains("\"always\" saves bash `git push origin main`"),
            "{message}"
        );
        assert!(
            message.contains("saves nothing for this request"),
            "{message}"
        );
        assert_eq!(
            choices(&prompt(true)),
            ["once", "session", "always", "reject"]
        );
        let v = serde_json::to_value(&schema).unwrap();
        assert_eq!(v["required"], json!(["decision"]));
        assert_eq!(v["properties"]["message"]["type"], "string");
    }

    #[test]
    fn a_decline_sooner_than_a_person_reads_is_the_clients_own() {
        use std::time::Duration;
        let p = prompt(true);
        for action in [ElicitationAction::Decline, ElicitationAction::Cancel] {
            let quick =
                parse_answer_after(&answer(action.clone(), None), &p, Duration::from_millis(3));
            match quick.unwrap() {
                Answer::ClientDeclined { why } => {
                    assert!(why.contains("MCP client answered"), "{why}");
                    assert!(why.contains("3 ms"), "{why}");
                }
                other => panic!("{other:?}"),
            }
            // A person's decline, after reading the form.
            let slow = parse_answer_after(&answer(action, None), &p, Duration::from_secs(4));
            assert_eq!(slow.unwrap(), Answer::Reject { message: None });
        }
        // A quick accept is an accept (a client with an auto-approve policy
        // answers for the person it was configured by).
        let accept = answer(ElicitationAction::Accept, Some(json!({"decision": "once"})));
        assert_eq!(
            parse_answer_after(&accept, &p, Duration::from_millis(1)).unwrap(),
            Answer::Once
        );
    }

    #[test]
    fn only_offered_choices_are_shown_and_accepted() {
        let p = prompt(false);
        assert_eq!(choices(&p), ["once", "reject"]);
        for c in ["always", "session"] {
            let a = answer(ElicitationAction::Accept, Some(json!({"decision": c})));
            let err = parse_answer(&a, &p).unwrap_err();
            assert!(err.to_string().contains("was not offered"), "{err}");
        }
    }

    #[test]
    fn answers_map_to_approvals() {
        let p = prompt(true);
        let a = |c: Value| answer(ElicitationAction::Accept, Some(c));
        assert_eq!(
            parse_answer(&a(json!({"decision": "once"})), &p).unwrap(),
            Answer::Once
        );
        assert_eq!(
            parse_answer(&a(json!({"decision": "session"})), &p).unwrap(),
            Answer::Session
        );
        assert_eq!(
            parse_answer(&a(json!({"decision": "always"})), &p).unwrap(),
            Answer::Always
        );
        assert_eq!(
            parse_answer(
                &a(json!({"decision": "reject", "message": " use a branch "})),
                &p
            )
            .unwrap(),
            Answer::Reject {
                message: Some("use a branch".into())
            }
        );
        assert_eq!(
            parse_answer(&answer(ElicitationAction::Decline, None), &p).unwrap(),
            Answer::Reject { message: None }
        );
        assert_eq!(
            parse_answer(&answer(ElicitationAction::Cancel, None), &p).unwrap(),
            Answer::Reject { message: None }
        );
        assert!(parse_answer(&a(json!({"decision": "yes"})), &p).is_err());
        assert!(parse_answer(&a(json!({})), &p).is_err());
        assert!(parse_answer(&answer(ElicitationAction::Accept, None), &p).is_err());
    }

    #[tokio::test]
    async fn unknown_session_is_unavailable_so_the_next_channel_is_tried() {
        let channel = ElicitationChannel::new();
        let err = channel.ask(&prompt(true)).await.unwrap_err();
        assert!(matches!(err, ChannelError::Unavailable(_)), "{err}");
        assert!(!channel.can_ask("s1"));
    }

    /// A path with a right-to-left override and a command with terminal
    /// escapes reached the client's form as they were; a client that shows
    /// the text as it is showed them reversed or erased.
    #[test]
    fn hidden_characters_in_a_request_are_shown_escaped_in_the_client_form() {
        let mut p = prompt(true);
        p.items[0].resource = "cat notes\u{202e}txt.env".into();
        p.items[1].resource = "rm -rf build\u{1b}[2K".into();
        let (message, _) = approval_form(&p);
        assert!(
            !message.contains('\u{202e}') && !message.contains('\u{1b}'),
            "{message:?}"
        );
        assert!(message.contains("cat notes\\u{202E}txt.env"), "{message}");
        assert!(message.contains("rm -rf build\\u{001B}[2K"), "{message}");
    }
}
