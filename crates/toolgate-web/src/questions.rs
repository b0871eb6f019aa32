//! The `question` tool's questions on the page: a call's questions wait here
//! until someone answers (one text per question) or declines on the page, or
//! until the asker drops its future (cancelled, answered elsewhere), which
//! takes them off the page.
//!
//! The page shares [`WebApprovals`]'s ids and change signal, so questions
//! travel on the same event stream as the asks.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use toolgate_core::{CallIdentity, Failure, Question, QuestionChannel, QuestionError};
use toolgate_policy::approvals::ChannelError;

use crate::pending::{Inner, Waiting, WebApprovals, Withdraw};

/// Longest answer (and decline message) accepted from the page, in characters.
pub const MAX_ANSWER_CHARS: usize = 4000;

/// One `question` call waiting for answers on the page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingQuestion {
    /// Its id on the page (`/approvals/questions/{id}/answer`).
    pub id: u64,
    /// The session of the call.
    pub session_id: String,
    /// The call asking.
    pub call_id: String,
    /// The questions, in order; one answer each.
    pub questions: Vec<Question>,
    /// When it arrived, ms since the Unix epoch.
    pub asked_ms: i64,
}

/// What the person did with a call's questions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QuestionReply {
    /// One answer per question, in order (trimmed, never empty).
    Answered(Vec<String>),
    /// The person declined to answer, perhaps saying why.
    Declined(Option<String>),
}

/// Why a reply from the page was not accepted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum QuestionAnswerError {
    /// No question with that id is waiting.
    #[error(
        "no pending question with id {0}: it was already answered (here or elsewhere) or \
         cancelled"
    )]
    NotPending(u64),
    /// The asker went away between the click and the reply.
    #[error("question {0} was withdrawn before the answer arrived")]
    Withdrawn(u64),
    /// The reply was malformed; the message names what is wrong.
    #[error("{0}")]
    BadInput(String),
}

/// A pending question and where its reply goes.
#[derive(Debug)]
pub(crate) struct QuestionSlot {
    pending: PendingQuestion,
    reply: oneshot::Sender<QuestionReply>,
}

/// Checks `reply` against `pending` and returns it normalised (answers and
/// message trimmed, an empty message dropped).
pub fn check_reply(
    pending: &PendingQuestion,
    reply: QuestionReply,
) -> Result<QuestionReply, QuestionAnswerError> {
    let bad = QuestionAnswerError::BadInput;
    match reply {
        QuestionReply::Answered(answers) => {
            if answers.len() != pending.questions.len() {
                return Err(bad(format!(
                    "question {} asks {} question(s) but {} answer(s) were sent",
                    pending.id,
                    pending.questions.len(),
                    answers.len()
                )));
            }
            let mut checked = Vec::with_capacity(answers.len());
            for (i, (answer, asked)) in answers.iter().zip(&pending.questions).enumerate() {
                let answer = answer.trim();
                if answer.is_empty() {
                    return Err(bad(format!(
                        "answer {} (to {:?}) is empty: pick an option or write an answer",
                        i + 1,
                        asked.question
                    )));
                }
                let chars = answer.chars().count();
                if chars > MAX_ANSWER_CHARS {
                    return Err(bad(format!(
                        "answer {} is {chars} characters; the limit is {MAX_ANSWER_CHARS}",
                        i + 1
                    )));
                }
                checked.push(answer.to_string());
            }
            Ok(QuestionReply::Answered(checked))
        }
        QuestionReply::Declined(message) => {
            let message = message
                .as_deref()
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(str::to_string);
            if let Some(m) = &message {
                let chars = m.chars().count();
                if chars > MAX_ANSWER_CHARS {
                    return Err(bad(format!(
                        "the decline message is {chars} characters; the limit is \
                         {MAX_ANSWER_CHARS}"
                    )));
                }
            }
            Ok(QuestionReply::Declined(message))
        }
    }
}

impl Inner {
    pub(crate) fn lock_questions(&self) -> MutexGuard<'_, BTreeMap<u64, QuestionSlot>> {
        // Each critical section is a single map operation, so a poisoned map is
        // still consistent.
        self.questions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl WebApprovals {
    /// The `question` calls waiting on the page, oldest first.
    pub fn pending_questions(&self) -> Vec<PendingQuestion> {
        self.inner
            .lock_questions()
            .values()
            .map(|slot| slot.pending.clone())
            .collect()
    }

    /// Replies to question `id` from the page: checks the reply (one non-empty
    /// answer per question, sizes), then resolves the asker's future.
    pub fn reply_questions(
        &self,
        id: u64,
        reply: QuestionReply,
    ) -> Result<(), QuestionAnswerError> {
        let (slot, reply) = {
            let mut questions = self.inner.lock_questions();
            let pending = &questions
                .get(&id)
                .ok_or(QuestionAnswerError::NotPending(id))?
                .pending;
            let reply = check_reply(pending, reply)?;
            let slot = questions
                .remove(&id)
                .ok_or(QuestionAnswerError::NotPending(id))?;
            (slot, reply)
        };
        self.inner.bump();
        let declined = matches!(reply, QuestionReply::Declined(_));
        slot.reply
            .send(reply)
            .map_err(|_| QuestionAnswerError::Withdrawn(id))?;
        tracing::info!(id, call_id = %slot.pending.call_id, declined, "question replied on the web page");
        Ok(())
    }

    /// Shows `questions` (of call `call_id` in `session_id`) on the page and
    /// waits for the reply. Dropping the future takes them off the page.
    ///
    /// ```
    /// use toolgate_core::Question;
    /// use toolgate_web::{QuestionReply, WebApprovals};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let page = WebApprovals::new();
    /// let asked = vec![Question {
    ///     question: "Which database?".into(),
    ///     options: Some(vec!["sqlite".into(), "postgres".into()]),
    /// }];
    /// let asking = page.clone();
    /// let waiting = tokio::spawn(async move { asking.ask_questions("s1", "c1", &asked).await });
    /// while page.pending_questions().is_empty() {
    ///     tokio::task::yield_now().await;
    /// }
    /// // What the page's "Send answer" button does after picking "postgres":
    /// let id = page.pending_questions()[0].id;
    /// page.reply_questions(id, QuestionReply::Answered(vec!["postgres".into()]))?;
    /// assert_eq!(waiting.await??, QuestionReply::Answered(vec!["postgres".into()]));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn ask_questions(
        &self,
        session_id: &str,
        call_id: &str,
        questions: &[Question],
    ) -> Result<QuestionReply, ChannelError> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, replied) = oneshot::channel();
        let pending = PendingQuestion {
            id,
            session_id: session_id.to_string(),
            call_id: call_id.to_string(),
            questions: questions.to_vec(),
            asked_ms: toolgate_core::now_ms(),
        };
        self.inner
            .lock_questions()
            .insert(id, QuestionSlot { pending, reply });
        let _withdraw = Withdraw {
            inner: Arc::clone(&self.inner),
            id,
            what: Waiting::Question,
        };
        self.inner.bump();
        tracing::info!(id, call_id, "question waiting on the web page");
        replied.await.map_err(|e| {
            ChannelError::Failed(
                Failure::new(format!("web question {id} was dropped unanswered")).because(e),
            )
        })
    }
}

/// The page as a question channel: declining there ends the question; a
/// question dropped unanswered is a [`QuestionError::Failed`]. Cancelling takes
/// the questions off the page.
#[async_trait]
impl QuestionChannel for WebApprovals {
    async fn ask(
        &self,
        caller: &CallIdentity,
        questions: &[Question],
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, QuestionError> {
        let asked = cancel
            .run_until_cancelled(self.ask_questions(&caller.session_id, &caller.call_id, questions))
            .await
            .ok_or(QuestionError::Cancelled)?;
        match asked {
            Ok(QuestionReply::Answered(answers)) => Ok(answers),
            Ok(QuestionReply::Declined(why)) => Err(QuestionError::Declined(why)),
            Err(e) => Err(QuestionError::Failed(Failure::of(e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked() -> Vec<Question> {
        vec![
            Question {
                question: "Which database?".into(),
                options: Some(vec!["sqlite".into(), "postgres".into()]),
            },
            Question {
                question: "Table name?".into(),
                options: None,
            },
        ]
    }

    async fn until_pending(web: &WebApprovals) -> u64 {
        loop {
            if let Some(q) = web.pending_questions().first() {
                return q.id;
            }
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn a_reply_reaches_the_asker_trimmed_and_leaves_the_page() {
        let web = WebApprovals::new();
        let asking = tokio::spawn({
            let web = web.clone();
            async move { web.ask_questions("s", "c", &asked()).await }
        });
        let id = until_pending(&web).await;
        let answers = vec![" postgres ".to_string(), "accounts\n".to_string()];
        web.reply_questions(id, QuestionReply::Answered(answers))
            .unwrap();
        assert_eq!(
            asking.await.unwrap().unwrap(),
            QuestionReply::Answered(vec!["postgres".into(), "accounts".into()])
        );
        assert!(web.pending_questions().is_empty());
        assert_eq!(
            web.reply_questions(id, QuestionReply::Declined(None)),
            Err(QuestionAnswerError::NotPending(id))
        );
    }

    #[tokio::test]
    async fn bad_replies_answer_nothing() {
        let web = WebApprovals::new();
        let asking = tokio::spawn({
            let web = web.clone();
            async move { web.ask_questions("s", "c", &asked()).await }
        });
        let id = until_pending(&web).await;
        let long = "x".repeat(MAX_ANSWER_CHARS + 1);
        for (reply, wanted) in [
            (
                QuestionReply::Answered(vec!["a".into()]),
                "asks 2 question(s) but 1 answer(s)",
            ),
            (
                QuestionReply::Answered(vec!["a".into(), " ".into()]),
                "answer 2 (to \"Table name?\") is empty",
            ),
            (
                QuestionReply::Answered(vec![long.clone(), "b".into()]),
                "answer 1 is 4001 characters",
            ),
            (
                QuestionReply::Declined(Some(long)),
                "decline message is 4001 characters",
            ),
        ] {
            let e = web.reply_questions(id, reply).unwrap_err().to_string();
            assert!(e.contains(wanted), "{e}");
        }
        assert_eq!(web.pending_questions().len(), 1);
        web.reply_questions(id, QuestionReply::Declined(Some("  ".into())))
            .unwrap();
        assert_eq!(
            asking.await.unwrap().unwrap(),
            QuestionReply::Declined(None)
        );
    }

    #[tokio::test]
    async fn dropping_the_asker_takes_the_question_off_the_page() {
        let web = WebApprovals::new();
        let changes = web.subscribe();
        let questions = asked();
        let winner = tokio::select! {
            _ = web.ask_questions("s", "c", &questions) => "web",
            _ = until_pending(&web) => "elsewhere",
        };
        assert_eq!(winner, "elsewhere");
        assert!(web.pending_questions().is_empty());
        assert!(changes.has_changed().unwrap());
    }
}
