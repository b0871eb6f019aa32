//! Approval channels whose answer a test fixes.

use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use crate::approvals::{Answer, ApprovalChannel, AskPrompt, ChannelError};

/// Nobody to ask: every ask is unavailable ("no terminal"), so the next
/// channel is tried, or the ask is denied.
pub struct Nobody;

#[async_trait]
impl ApprovalChannel for Nobody {
    async fn ask(&self, _prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        Err(ChannelError::Unavailable("no terminal".into()))
    }
}

/// Gives the same answer to every ask, recording each prompt.
pub struct RecordingChannel {
    answer: Answer,
    asked: Mutex<Vec<AskPrompt>>,
}

impl RecordingChannel {
    /// A channel that answers `answer` every time.
    pub fn answering(answer: Answer) -> Self {
        RecordingChannel {
            answer,
            asked: Mutex::default(),
        }
    }

    /// Every prompt asked so far, oldest first.
    pub fn prompts(&self) -> Vec<AskPrompt> {
        self.asked().clone()
    }

    /// How many asks there were.
    pub fn count(&self) -> usize {
        self.asked().len()
    }

    /// The prompts, going on through a poisoned lock: a test that panicked
    /// holding it has failed already, and what it recorded is still true.
    fn asked(&self) -> MutexGuard<'_, Vec<AskPrompt>> {
        self.asked.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl ApprovalChannel for RecordingChannel {
    async fn ask(&self, prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        self.asked().push(prompt.clone());
        Ok(self.answer.clone())
    }
}
