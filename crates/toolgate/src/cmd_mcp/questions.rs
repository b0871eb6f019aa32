//! The `question` tool under `mcp` and `serve`: its questions go to the first
//! configured approval channel that can ask them.
//!
//! The channels are tried one after the other in the approval order
//! (`[approvals] channels` / `--approval-channels`), each until it answers or
//! gives up; `escalate_after` does not apply (questions never race):
//! - the MCP client, through a form elicitation when it declared the
//!   capability (an input-required result on 2026-07-28 connections);
//! - the approval page, whose question view shows them until a person answers
//!   or declines there (passed over when the page is off, `--no-web`);
//! - the terminal.
//!
//! A channel that cannot ask, or fails, passes to the next; a user who declines
//! ends the question. When none can ask, the tool fails with "no channel can
//! ask the user" and each reason. A cancelled call takes the questions off
//! whichever channel is asking.

use std::sync::{Arc, OnceLock, Weak};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;
use toolgate_core::{CallIdentity, Failure};
use toolgate_mcp::{ElicitationChannel, FormQuestion, QuestionFormError};
use toolgate_policy::config::ApprovalChannelName;
use toolgate_policy::gate::PolicyGate;
use toolgate_tools::session_tools::{Question, QuestionChannel, QuestionError};
use toolgate_web::{PageQuestion, QuestionReply, WebApprovals};

/// Asks the `question` tool's questions through the configured channels.
pub struct ConfiguredQuestions {
    elicitation: ElicitationChannel,
    /// The approval page; `None` when it is off.
    web: Option<WebApprovals>,
    terminal: Arc<dyn QuestionChannel>,
    cli: Option<Vec<ApprovalChannelName>>,
    gate: OnceLock<Weak<PolicyGate>>,
}

impl ConfiguredQuestions {
    /// Asks through `elicitation`, the page `web` (when it runs) and
    /// `terminal`, in the order of `cli` or the gate's policy.
    pub fn new(
        elicitation: ElicitationChannel,
        web: Option<WebApprovals>,
        terminal: Arc<dyn QuestionChannel>,
        cli: Option<Vec<ApprovalChannelName>>,
    ) -> Self {
        ConfiguredQuestions {
            elicitation,
            web,
            terminal,
            cli,
            gate: OnceLock::new(),
        }
    }

    /// Reads the order from `gate`'s policy from now on.
    pub fn follow(&self, gate: &Arc<PolicyGate>) {
        let _ = self.gate.set(Arc::downgrade(gate));
    }

    fn order(&self) -> Vec<ApprovalChannelName> {
        match self.gate.get().and_then(Weak::upgrade) {
            Some(gate) => gate.policy().approval_channels(self.cli.as_deref()),
            None => self
                .cli
                .clone()
                .unwrap_or_else(|| ApprovalChannelName::DEFAULT_ORDER.to_vec()),
        }
    }
}

/// What one channel made of the questions.
enum Tried {
    Answered(Vec<String>),
    /// Ends the question (declined, cancelled).
    Stop(QuestionError),
    /// This channel could not ask; why.
    Next(Failure),
}

impl ConfiguredQuestions {
    async fn try_channel(
        &self,
        name: ApprovalChannelName,
        caller: &CallIdentity,
        questions: &[Question],
        cancel: &CancellationToken,
    ) -> Tried {
        match name {
            ApprovalChannelName::Mcp => {
                let form: Vec<FormQuestion> = questions
                    .iter()
                    .map(|q| FormQuestion {
                        question: q.question.clone(),
                        options: q.options.clone(),
                    })
                    .collect();
                let asked = tokio::select! {
                    r = self.elicitation.ask_questions(&caller.session_id, &caller.call_id, &form) => r,
                    () = cancel.cancelled() => return Tried::Stop(QuestionError::Cancelled),
                };
                match asked {
                    Ok(answers) => Tried::Answered(answers),
                    Err(QuestionFormError::Declined) => Tried::Stop(QuestionError::Declined(None)),
                    Err(e) => Tried::Next(Failure::of(e)),
                }
            }
            ApprovalChannelName::Web => {
                let Some(web) = &self.web else {
                    return Tried::Next("the approval page is off (--no-web)".into());
                };
                let page: Vec<PageQuestion> = questions
                    .iter()
                    .map(|q| PageQuestion {
                        question: q.question.clone(),
                        options: q.options.clone(),
                    })
                    .collect();
                // Dropping the wait on cancel takes the questions off the page.
                let asked = tokio::select! {
                    r = web.ask_questions(&caller.session_id, &caller.call_id, &page) => r,
                    () = cancel.cancelled() => return Tried::Stop(QuestionError::Cancelled),
                };
                match asked {
                    Ok(QuestionReply::Answered(answers)) => Tried::Answered(answers),
                    Ok(QuestionReply::Declined(why)) => Tried::Stop(QuestionError::Declined(why)),
                    Err(e) => Tried::Next(Failure::of(e)),
                }
            }
            ApprovalChannelName::Terminal => {
                match self.terminal.ask(caller, questions, cancel).await {
                    Ok(answers) => Tried::Answered(answers),
                    Err(QuestionError::Failed(why)) => Tried::Next(why),
                    Err(stop) => Tried::Stop(stop),
                }
            }
        }
    }
}

#[async_trait]
impl QuestionChannel for ConfiguredQuestions {
    async fn ask(
        &self,
        caller: &CallIdentity,
        questions: &[Question],
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, QuestionError> {
        let mut reasons = Vec::new();
        // The first channel's failure is kept as the cause.
        let mut first: Option<Failure> = None;
        for name in self.order() {
            match self.try_channel(name, caller, questions, cancel).await {
                Tried::Answered(answers) => return Ok(answers),
                Tried::Stop(e) => return Err(e),
                Tried::Next(why) => {
                    reasons.push(format!("{name}: {why}"));
                    first.get_or_insert(why);
                }
            }
        }
        let why = Failure::new(format!(
            "no channel can ask the user ({})",
            reasons.join("; ")
        ));
        Err(QuestionError::Failed(match first {
            Some(cause) => why.because(cause),
            None => why,
        }))
    }
}
