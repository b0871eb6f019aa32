//! The approvals port: where `always` approvals are saved (implemented by
//! `toolgate-store`), and the approval-channel port through which a person answers.
//! [`crate::people`] asks several channels in the order of the policy in force.

use serde::{Deserialize, Serialize};
use toolgate_core::Failure;

/// An approval saved for a project ("always").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedApproval {
    /// Its id (for `toolgate approvals revoke ID`).
    pub id: i64,
    /// The project it applies to: `git:host/path` of its `origin` remote, or
    /// its canonical path ([`crate::project_key`]).
    pub project: String,
    /// The action (`bash`, `edit`, …).
    pub action: String,
    /// The saved pattern (`git push *`, `/ws/src/*`).
    pub pattern: String,
    /// When it was saved, ms since the Unix epoch.
    pub created_ms: i64,
    /// Who approved it (the person's identity), when the store records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
    /// On which machine it was approved, when the store records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

/// Errors from an approval store.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalStoreError {
    /// The store failed.
    #[error("approval store failed: {0}")]
    Storage(#[source] Failure),
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
    /// The exact pattern an `always` (or `session`) answer saves for this
    /// request, shown with it; `None` when an approval for it is never
    /// saved (it is asked every time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub save_pattern: Option<String>,
}

impl AskItem {
    /// The words every channel shows under the item: the exact pattern
    /// "always" saves, or that nothing is saved for it. One sentence for the
    /// terminal, the approval page and the elicitation form.
    ///
    /// ```
    /// use toolgate_policy::approvals::AskItem;
    /// let item = AskItem {
    ///     action: "bash".into(),
    ///     resource: "make test".into(),
    ///     risk: toolgate_core::Risk::Execute,
    ///     reason: "runs a program".into(),
    ///     save_pattern: Some("make test".into()),
    /// };
    /// assert_eq!(item.saves(), "\"always\" saves bash `make test`");
    /// ```
    pub fn saves(&self) -> String {
        match &self.save_pattern {
            Some(p) => format!("\"always\" saves {} `{p}`", self.action),
            None => "\"always\" saves nothing for this request: it is asked every time".into(),
        }
    }
}

/// What a person is asked.
///
/// Every channel renders [`AskPrompt::shown`], never the prompt itself.
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
    /// What the call will do, as its tool describes it (the command, the
    /// diff); `None` when the tool gives no preview.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<toolgate_core::Preview>,
}

impl AskPrompt {
    /// The prompt as a person is shown it: in the tool, each request's action,
    /// resource, reason and save pattern, and the preview, every character
    /// that is not shown ([`toolgate_core::visible::is_hidden`]) is escaped.
    /// A command such as `rm -rf ~ ESC[2K ESC[1G ls` reached the terminal as it
    /// was, and the terminal erased the part that mattered.
    ///
    /// The gate builds every prompt shown, so each channel and the ask queue
    /// get it so; the renderers (terminal, page, form) apply it once more
    /// because a prompt may also come from the queue, which another process
    /// wrote. Escaped text has nothing left to escape, so the second pass
    /// changes nothing.
    pub fn shown(&self) -> AskPrompt {
        use toolgate_core::visible::escape_hidden;
        let line = |t: &str| escape_hidden(t, &[]).into_owned();
        AskPrompt {
            session_id: self.session_id.clone(),
            call_id: self.call_id.clone(),
            tool: line(&self.tool),
            items: self
                .items
                .iter()
                .map(|i| AskItem {
                    action: line(&i.action),
                    resource: line(&i.resource),
                    risk: i.risk,
                    reason: line(&i.reason),
                    save_pattern: i.save_pattern.as_deref().map(line),
                })
                .collect(),
            offer_session: self.offer_session,
            offer_always: self.offer_always,
            timeout_ms: self.timeout_ms,
            preview: self.preview.as_ref().map(toolgate_core::Preview::shown),
        }
    }
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
    /// Refused by the approval client itself, without showing the person
    /// (an MCP client that declines every form when nobody is at its
    /// prompt). Recorded with actor `client`; the other pending asks of the
    /// session are refused too.
    ClientDeclined {
        /// How the client's answer was told from a person's.
        why: String,
    },
}

/// Errors from an approval channel.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// Nobody can be asked (no terminal, the client does not support elicitation).
    #[error("no one can be asked: {0}")]
    Unavailable(#[source] Failure),
    /// The channel failed.
    #[error("approval channel failed: {0}")]
    Failed(#[source] Failure),
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
        ask_in_order(&self.0, std::time::Duration::ZERO, prompt).await
    }
}

/// Tries channels in order; the first answer wins and the others are
/// withdrawn. The first channel asks alone; the next one is asked too as soon
/// as an asking channel ends without an answer (it cannot ask anyone, or it
/// failed), or when the last one started has asked for `escalate_after`
/// without an answer. Channels already asking stay open, so every started
/// channel races. With `escalate_after` zero every channel is asked at once,
/// as [`FirstAnswer`] does. Fails only when every channel fails, as
/// `Unavailable` when none of them could ask anyone.
///
/// ```
/// # use std::sync::Arc;
/// # use std::time::Duration;
/// use toolgate_policy::approvals::{ApprovalChannel, InOrder};
/// let channels: Vec<Arc<dyn ApprovalChannel>> = Vec::new();
/// let _tried = InOrder::new(channels, Duration::from_secs(10));
/// ```
pub struct InOrder {
    channels: Vec<std::sync::Arc<dyn ApprovalChannel>>,
    escalate_after: std::time::Duration,
}

impl InOrder {
    /// Tries `channels` in this order, asking the next one too after
    /// `escalate_after` without an answer.
    pub fn new(
        channels: Vec<std::sync::Arc<dyn ApprovalChannel>>,
        escalate_after: std::time::Duration,
    ) -> Self {
        InOrder {
            channels,
            escalate_after,
        }
    }
}

impl std::fmt::Debug for InOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InOrder")
            .field("channels", &self.channels.len())
            .field("escalate_after", &self.escalate_after)
            .finish()
    }
}

#[async_trait::async_trait]
impl ApprovalChannel for InOrder {
    async fn ask(&self, prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        ask_in_order(&self.channels, self.escalate_after, prompt).await
    }
}

/// The shared loop of [`FirstAnswer`] and [`InOrder`].
async fn ask_in_order(
    channels: &[std::sync::Arc<dyn ApprovalChannel>],
    escalate_after: std::time::Duration,
    prompt: &AskPrompt,
) -> Result<Answer, ChannelError> {
    use futures::StreamExt;
    let mut asking = futures::stream::FuturesUnordered::new();
    let mut waiting = channels.iter();
    let mut errors = Vec::new();
    // The combined error keeps as its cause the first channel that failed, or,
    // when none did, the first that had no one to ask.
    let mut first_failed: Option<ChannelError> = None;
    let mut first_unavailable: Option<ChannelError> = None;
    let mut escalate_at = tokio::time::Instant::now();
    loop {
        // Start the next channel when nothing is asking or its turn has come.
        let due = asking.is_empty()
            || escalate_after.is_zero()
            || tokio::time::Instant::now() >= escalate_at;
        if due {
            if let Some(channel) = waiting.next() {
                asking.push(channel.ask(prompt));
                escalate_at = tokio::time::Instant::now() + escalate_after;
                continue;
            }
        }
        if asking.is_empty() {
            break;
        }
        let more_waiting = waiting.len() > 0;
        tokio::select! {
            outcome = asking.next() => match outcome {
                // Returning drops the other questions: they are withdrawn.
                Some(Ok(answer)) => return Ok(answer),
                Some(Err(e)) => {
                    match e {
                        ChannelError::Unavailable(why) => {
                            errors.push(why.message().to_string());
                            first_unavailable.get_or_insert(ChannelError::Unavailable(why));
                        }
                        failed => {
                            errors.push(failed.to_string());
                            first_failed.get_or_insert(failed);
                        }
                    }
                    // This channel's turn is over: the next one starts now.
                    escalate_at = tokio::time::Instant::now();
                }
                None => {}
            },
            () = tokio::time::sleep_until(escalate_at), if more_waiting => {}
        }
    }
    let why = if errors.is_empty() {
        "no approval channel is configured".to_string()
    } else {
        errors.join("; ")
    };
    let why = Failure::new(why);
    Err(match (first_failed, first_unavailable) {
        (Some(cause), _) => ChannelError::Failed(why.because(cause)),
        (_, Some(cause)) => ChannelError::Unavailable(why.because(cause)),
        _ => ChannelError::Unavailable(why),
    })
}
