//! The context a tool receives: identity, the location, cancellation, progress.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::gate::PermissionRequest;
use crate::location::Location;

/// Who is calling: identity only.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallIdentity {
    /// The session (an MCP connection, a CLI invocation).
    pub session_id: String,
    /// The agent within the session, if the client says.
    pub agent_id: Option<String>,
    /// The model message that made the call, if known.
    pub message_id: Option<String>,
    /// The call's id (the model's tool-call id, or one made up).
    pub call_id: String,
}

/// A progress report while a tool runs (for example output so far from bash).
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// A short human-readable message (the newest output line, say).
    pub message: String,
    /// Work done so far, in the tool's unit (bytes of output for bash).
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
}

/// What a tool gets besides its input.
#[derive(Clone)]
pub struct ToolContext {
    /// Who is calling.
    pub identity: CallIdentity,
    /// The workspace the call acts in.
    pub location: Arc<Location>,
    /// Cancelled when the call is cancelled or its future dropped; tools stop promptly.
    pub cancel: CancellationToken,
    /// A request of this call at risk `network` was allowed by a rule, an
    /// approval or a person (not by mode `auto` on the strength of the
    /// sandbox's proxy): a sandboxed command may keep the machine's network.
    pub network_allowed: bool,
    /// The hosts the call's allowed network requests named (a rule, an
    /// approval or a person allowed them): what a confined command may
    /// reach through the sandbox's proxy. Empty when any part of the call
    /// was allowed only because it runs confined.
    pub network_hosts: Vec<String>,
    /// Judges what a confined command changed before it lands; `None` when
    /// the tool runs outside the pipeline (nothing staged then lands).
    pub write_judge: Option<std::sync::Arc<dyn crate::staged::WriteJudge>>,
    progress: Option<mpsc::UnboundedSender<Progress>>,
    judged: Option<Arc<[PermissionRequest]>>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("identity", &self.identity)
            .field("location", &self.location)
            .field("network_allowed", &self.network_allowed)
            .field("network_hosts", &self.network_hosts)
            .field("write_judge", &self.write_judge.is_some())
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    /// A context without a progress listener.
    pub fn new(identity: CallIdentity, location: Arc<Location>, cancel: CancellationToken) -> Self {
        ToolContext {
            identity,
            location,
            cancel,
            network_allowed: false,
            network_hosts: Vec::new(),
            write_judge: None,
            progress: None,
            judged: None,
        }
    }

    /// Attaches the requests the tool's intent gave for this very call, as the
    /// gate judged them (set by the handler when a prepared call runs).
    pub fn with_judged(mut self, requests: Arc<[PermissionRequest]>) -> Self {
        self.judged = Some(requests);
        self
    }

    /// The requests judged for this call, when it runs after a judgement (the
    /// pipeline); `None` when the tool is run directly. A tool compares what it
    /// is about to act on with these: what was judged is what it acts on.
    pub fn judged(&self) -> Option<&[PermissionRequest]> {
        self.judged.as_deref()
    }

    /// Attaches a progress listener.
    pub fn with_progress(mut self, tx: mpsc::UnboundedSender<Progress>) -> Self {
        self.progress = Some(tx);
        self
    }

    /// Reports progress; a no-op when nobody listens.
    pub fn report(&self, progress: Progress) {
        if let Some(tx) = &self.progress {
            let _ = tx.send(progress);
        }
    }
}
