//! Questions for a person: the one [`Question`] type that the `question` tool
//! takes, the approval page shows and an MCP client answers as a form, and the
//! [`QuestionChannel`] port through which a tool has them asked. The tool never
//! talks to a person itself: the embedding program supplies the channel.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::{CallIdentity, Failure};

/// One question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// The question text.
    pub question: String,
    /// Choices to offer; the user may still answer in their own words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<String>>,
}

/// Why a channel could not get answers.
#[derive(Debug, thiserror::Error)]
pub enum QuestionError {
    /// The user declined to answer.
    #[error("the user declined to answer{}", .0.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Declined(Option<String>),
    /// The channel failed (closed terminal, lost connection, …).
    #[error("could not ask the user: {0}")]
    Failed(#[source] Failure),
    /// The call was cancelled while waiting.
    #[error("cancelled while waiting for an answer")]
    Cancelled,
}

/// How questions reach a person. Implementations return one answer per
/// question, in order, and give up promptly when `cancel` fires.
#[async_trait]
pub trait QuestionChannel: Send + Sync {
    /// Asks `questions` on behalf of `caller`.
    async fn ask(
        &self,
        caller: &CallIdentity,
        questions: &[Question],
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, QuestionError>;
}
