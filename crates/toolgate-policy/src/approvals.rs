//! The approvals port: where `always` approvals are saved (implemented by
//! `toolgate-store`), and the approval-channel port through which a person answers.

use serde::{Deserialize, Serialize};

/// An approval saved for a project ("always").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedApproval {
    /// Its id (for `toolgate approvals revoke ID`).
    pub id: i64,
    /// The project root it applies to (canonical path).
    pub project: String,
    /// The action (`bash`, `edit`, …).
    pub action: String,
    /// The saved pattern (`git push *`, `/ws/src/*`).
    pub pattern: String,
    /// When it was saved, ms since the Unix epoch.
    pub created_ms: i64,
}

/// Errors from an approval store.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalStoreError {
    /// The store failed.
    #[error("approval store failed: {0}")]
    Storage(String),
    /// No approval with that id.
    #[error("no saved approval with id {0}")]
    NotFound(i64),
}

/// Where saved approvals live. Saving is deduplicated by (project, action, pattern).
pub trait ApprovalStore: Send + Sync {
    /// Saves an approval, or returns the existing identical one.
    fn save(
        &self,
        project: &str,
        action: &str,
        pattern: &str,
    ) -> Result<SavedApproval, ApprovalStoreError>;
    /// The approvals of one project, oldest first.
    fn list_project(&self, project: &str) -> Result<Vec<SavedApproval>, ApprovalStoreError>;
    /// Every saved approval, oldest first.
    fn list_all(&self) -> Result<Vec<SavedApproval>, ApprovalStoreError>;
    /// Removes one approval.
    fn revoke(&self, id: i64) -> Result<SavedApproval, ApprovalStoreError>;
}

/// One request shown to a person in an ask.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskItem {
    /// The action (`bash`, `edit`, `external_directory`…).
    pub action: String,
    /// What is touched.
    pub resource: String,
    /// The risk class.
    pub risk: toolgate_core::Risk,
    /// Why it is asked, in words a person reads.
    pub reason: String,
}

/// What a person is asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskPrompt {
    /// The session the call belongs to.
    pub session_id: String,
    /// The call's id.
    pub call_id: String,
    /// The tool called.
    pub tool: String,
    /// The requests that need an answer.
    pub items: Vec<AskItem>,
    /// Whether `session` may be offered (nothing forced, destructive or opaque).
    pub offer_session: bool,
    /// Whether `always` may be offered (as `offer_session`, and every request has a
    /// save pattern).
    pub offer_always: bool,
    /// How long the ask waits before it is denied.
    pub timeout_ms: u64,
}

/// A person's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "answer")]
pub enum Answer {
    /// Allow this call only.
    Once,
    /// Allow these requests for the rest of the session.
    Session,
    /// Allow these requests for this project from now on (saved).
    Always,
    /// Refuse. With a message, the model sees it as feedback; without one, the
    /// other pending asks of the session are refused too.
    Reject {
        /// Feedback for the model.
        message: Option<String>,
    },
}

/// Errors from an approval channel.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// Nobody can be asked (no terminal, the client does not support elicitation).
    #[error("no one can be asked: {0}")]
    Unavailable(String),
    /// The channel failed.
    #[error("approval channel failed: {0}")]
    Failed(String),
}

/// How the gate reaches a person (terminal, MCP elicitation, web page). Dropping
/// the future of `ask` withdraws the question.
#[async_trait::async_trait]
pub trait ApprovalChannel: Send + Sync {
    /// Asks and waits for an answer.
    async fn ask(&self, prompt: &AskPrompt) -> Result<Answer, ChannelError>;
}

/// Asks every channel at once; the first answer wins and the other questions are
/// withdrawn (their futures dropped). Fails only when every channel fails, as
/// `Unavailable` when none of them could ask anyone.
///
/// ```
/// # use std::sync::Arc;
/// use toolgate_policy::approvals::{ApprovalChannel, FirstAnswer};
/// let channels: Vec<Arc<dyn ApprovalChannel>> = Vec::new();
/// let _any = FirstAnswer(channels);
/// ```
pub struct FirstAnswer(pub Vec<std::sync::Arc<dyn ApprovalChannel>>);

impl std::fmt::Debug for FirstAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FirstAnswer")
            .field("channels", &self.0.len())
            .finish()
    }
}

#[async_trait::async_trait]
impl ApprovalChannel for FirstAnswer {
    async fn ask(&self, prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        use futures::StreamExt;
        let mut asks: futures::stream::FuturesUnordered<_> =
            self.0.iter().map(|c| c.ask(prompt)).collect();
        let mut errors = Vec::new();
        let mut all_unavailable = true;
        while let Some(outcome) = asks.next().await {
            match outcome {
                // Returning drops the other questions: they are withdrawn.
                Ok(answer) => return Ok(answer),
                Err(ChannelError::Unavailable(why)) => errors.push(why),
                Err(e) => {
                    all_unavailable = false;
                    errors.push(e.to_string());
                }
            }
        }
        let why = if errors.is_empty() {
            "no approval channel is configured".to_string()
        } else {
            errors.join("; ")
        };
        Err(if all_unavailable {
            ChannelError::Unavailable(why)
        } else {
            ChannelError::Failed(why)
        })
    }
}
