//! Approvals on protocol 2026-07-28, which forbids server-to-client requests:
//! the multi round-trip request (input-required result) of SEP-2322.
//!
//! A call from a client that declared elicitation runs in its own task. When
//! the gate asks, the [`ElicitationChannel`](crate::ElicitationChannel) hands the
//! form to the waiting `tools/call`, which returns an `InputRequiredResult`
//! carrying the form and an opaque `requestState` (a random handle to the
//! paused call, kept here). The client fills the form and retries `tools/call`
//! with the same `requestState` and its `inputResponses`; the answer goes to
//! the paused gate and the retry waits for the call's result (or the next form).
//! A paused call nobody resumes is cancelled after [`PAUSED_TTL`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResponse, ElicitRequest, ElicitRequestParams, ElicitResult, InputRequest,
    InputRequiredResult, InputResponses, ProgressNotificationParam, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolgate_core::Progress;

/// How long a paused call waits for the client to come back.
pub const PAUSED_TTL: Duration = Duration::from_secs(600);

/// The key of the approval form in `inputRequests`/`inputResponses`.
pub const APPROVAL_KEY: &str = "toolgate_approval";

/// The key of the `question` tool's form in `inputRequests`/`inputResponses`.
pub const QUESTION_KEY: &str = "toolgate_question";

/// A form the gate (or a tool) wants answered, and where the answer goes.
#[derive(Debug)]
pub(crate) struct InputAsk {
    /// The form's key in `inputRequests` (and the answer's in `inputResponses`).
    pub(crate) key: &'static str,
    pub(crate) params: ElicitRequestParams,
    pub(crate) reply: oneshot::Sender<ElicitResult>,
}

/// A call running in its own task, possibly paused on a form.
#[derive(Debug)]
pub(crate) struct Running {
    pub(crate) tool: String,
    pub(crate) outcome: JoinHandle<Result<CallToolResponse, McpError>>,
    pub(crate) inputs: mpsc::UnboundedReceiver<InputAsk>,
    pub(crate) progress: mpsc::UnboundedReceiver<Progress>,
    pub(crate) cancel: CancellationToken,
}

#[derive(Debug)]
struct Paused {
    running: Running,
    key: &'static str,
    reply: oneshot::Sender<ElicitResult>,
    since: Instant,
}

/// Paused calls by `requestState`. Shared by every connection of a server,
/// since a stateless HTTP retry arrives on a new connection.
#[derive(Clone, Debug, Default)]
pub(crate) struct PausedCalls {
    inner: Arc<Mutex<HashMap<String, Paused>>>,
}

/// What the current request sees while it waits for a call.
pub(crate) struct Waiter<'a> {
    pub(crate) peer: &'a Peer<RoleServer>,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) request_cancel: &'a CancellationToken,
}

impl PausedCalls {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Paused>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `running` until the client answers `ask`; returns the result that
    /// asks the client for it.
    fn pause(&self, running: Running, ask: InputAsk) -> Result<CallToolResponse, McpError> {
        let state = random_state()?;
        let mut paused = self.lock();
        // Forget calls whose client never came back: dropping them cancels.
        paused.retain(|_, p| {
            let keep = p.since.elapsed() < PAUSED_TTL;
            if !keep {
                p.running.cancel.cancel();
            }
            keep
        });
        paused.insert(
            state.clone(),
            Paused {
                running,
                key: ask.key,
                reply: ask.reply,
                since: Instant::now(),
            },
        );
        let request = InputRequest::Elicitation(ElicitRequest::new(ask.params));
        let requests = BTreeMap::from([(ask.key.to_string(), request)]);
        Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
            Some(requests),
            Some(state),
        )))
    }

    /// Resumes the call paused under `state` with the client's answers.
    pub(crate) async fn resume(
        &self,
        state: &str,
        tool: &str,
        responses: Option<InputResponses>,
        waiter: Waiter<'_>,
    ) -> Result<CallToolResponse, McpError> {
        let paused = self.lock().remove(state).ok_or_else(|| {
            McpError::invalid_params(
                "unknown or expired requestState: call the tool again".to_string(),
                None,
            )
        })?;
        if paused.running.tool != tool {
            let expected = paused.running.tool.clone();
            self.lock().insert(state.to_string(), paused);
            return Err(McpError::invalid_params(
                format!("this requestState belongs to a call of {expected}, not {tool}"),
                None,
            ));
        }
        let key = paused.key;
        let answer = responses
            .as_ref()
            .and_then(|r| r.get(key))
            .ok_or_else(|| format!("inputResponses has no `{key}`"))
            .and_then(|v| {
                serde_json::from_value::<ElicitResult>(v.clone())
                    .map_err(|e| format!("`{key}` is not an elicitation result: {e}"))
            });
        let answer = match answer {
            Ok(a) => a,
            Err(message) => {
                // Keep the call paused so a corrected retry can still answer.
                self.lock().insert(state.to_string(), paused);
                return Err(McpError::invalid_params(message, None));
            }
        };
        // The gate may have given up meanwhile; the call's result says so.
        let _ = paused.reply.send(answer);
        self.wait(paused.running, waiter).await
    }

    /// Waits for the call's result, forwarding progress; pauses it again if the
    /// gate asks another question. Cancelling the request cancels the call.
    pub(crate) async fn wait(
        &self,
        mut running: Running,
        waiter: Waiter<'_>,
    ) -> Result<CallToolResponse, McpError> {
        loop {
            tokio::select! {
                outcome = &mut running.outcome => {
                    return outcome.unwrap_or_else(|e| Err(McpError::internal_error(
                        format!("the call's task failed: {e}"),
                        None,
                    )));
                }
                Some(ask) = running.inputs.recv() => return self.pause(running, ask),
                Some(report) = running.progress.recv() => {
                    if let Some(token) = &waiter.progress_token {
                        let mut param = ProgressNotificationParam::new(token.clone(), report.progress)
                            .with_message(report.message);
                        if let Some(total) = report.total {
                            param = param.with_total(total);
                        }
                        let _ = waiter.peer.notify_progress(param).await;
                    }
                }
                () = waiter.request_cancel.cancelled() => {
                    running.cancel.cancel();
                    return running.outcome.await.unwrap_or_else(|e| Err(McpError::internal_error(
                        format!("the call's task failed: {e}"),
                        None,
                    )));
                }
            }
        }
    }
}

/// A fresh opaque `requestState`: 128 random bits, hex.
fn random_state() -> Result<String, McpError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| McpError::internal_error(format!("no randomness: {e}"), None))?;
    Ok(hex::encode(bytes))
}
