//! The web approval channel: asks wait here until someone answers on the page,
//! or until the asker drops its future (withdrawn, timed out, answered elsewhere).
//! The `question` tool's questions share the same pending set and change
//! signal (see [`crate::questions`]).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use tokio::sync::{oneshot, watch};
use toolgate_core::{Failure, Risk};
use toolgate_policy::approvals::{Answer, ApprovalChannel, AskPrompt, ChannelError};

/// Longest reject message accepted from the page.
pub const MAX_MESSAGE_CHARS: usize = 4000;

/// One ask waiting for an answer on the page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingAsk {
    /// Its id on the page (`/approvals/pending/{id}/answer`).
    pub id: u64,
    /// What is asked.
    pub prompt: AskPrompt,
    /// When it arrived, ms since the Unix epoch.
    pub asked_ms: i64,
}

impl PendingAsk {
    /// Whether any request of the ask is destructive (no "always", second
    /// confirmation needed).
    pub fn is_destructive(&self) -> bool {
        self.prompt
            .items
            .iter()
            .any(|item| item.risk == Risk::Destructive)
    }

    /// The highest risk among the requests (`read` for an empty ask).
    pub fn risk(&self) -> Risk {
        self.prompt
            .items
            .iter()
            .map(|item| item.risk)
            .max()
            .unwrap_or(Risk::Read)
    }

    /// Whether the page may offer "session".
    pub fn offers_session(&self) -> bool {
        self.prompt.offer_session && !self.is_destructive()
    }

    /// Whether the page may offer "always".
    pub fn offers_always(&self) -> bool {
        self.prompt.offer_always && !self.is_destructive()
    }
}

/// Why an answer from the page was not accepted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AnswerError {
    /// No ask with that id is waiting.
    #[error("no pending request with id {0}: it was already answered, withdrawn or timed out")]
    NotPending(u64),
    /// The asker went away between the click and the answer.
    #[error("request {0} was withdrawn before the answer arrived")]
    Withdrawn(u64),
    /// The answer is not one the page offers for this ask.
    #[error("request {id}: \"{answer}\" is not offered ({why})")]
    NotOffered {
        /// The ask.
        id: u64,
        /// The answer that was sent.
        answer: &'static str,
        /// Why it is not offered.
        why: &'static str,
    },
    /// A destructive request was approved without the second confirmation.
    #[error("request {0} is destructive: approving it needs the second confirmation (confirm=yes)")]
    NeedsConfirmation(u64),
    /// The form was malformed.
    #[error("{0}")]
    BadInput(String),
}

/// The approval channel behind the web page. Cheap to clone; every clone shares
/// the same pending asks.
///
/// ```
/// use toolgate_web::WebApprovals;
/// let approvals = WebApprovals::new();
/// assert!(approvals.pending().is_empty());
/// ```
#[derive(Clone, Debug)]
pub struct WebApprovals {
    pub(crate) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    /// Ids for asks and questions alike, so a card id names one thing.
    pub(crate) next_id: AtomicU64,
    asks: Mutex<BTreeMap<u64, Slot>>,
    /// The `question` tool's questions waiting on the page.
    pub(crate) questions: Mutex<BTreeMap<u64, crate::questions::QuestionSlot>>,
    /// Bumped on every change of the pending set; the page's event stream
    /// re-sends the list on each bump.
    version: watch::Sender<u64>,
}

#[derive(Debug)]
struct Slot {
    ask: PendingAsk,
    reply: oneshot::Sender<Answer>,
}

impl Default for WebApprovals {
    fn default() -> Self {
        WebApprovals::new()
    }
}

impl WebApprovals {
    /// A channel with nothing pending.
    pub fn new() -> Self {
        let (version, _) = watch::channel(0);
        WebApprovals {
            inner: Arc::new(Inner {
                next_id: AtomicU64::new(1),
                asks: Mutex::new(BTreeMap::new()),
                questions: Mutex::new(BTreeMap::new()),
                version,
            }),
        }
    }

    /// The asks waiting for an answer, oldest first.
    pub fn pending(&self) -> Vec<PendingAsk> {
        self.inner
            .lock()
            .values()
            .map(|slot| slot.ask.clone())
            .collect()
    }

    /// One pending ask.
    pub fn get(&self, id: u64) -> Option<PendingAsk> {
        self.inner.lock().get(&id).map(|slot| slot.ask.clone())
    }

    /// Answers ask `id`: checks the answer is offered (and confirmed for a
    /// destructive request), then resolves the asker's future.
    pub fn answer(&self, id: u64, answer: Answer, confirmed: bool) -> Result<(), AnswerError> {
        let slot = {
            let mut asks = self.inner.lock();
            let ask = &asks.get(&id).ok_or(AnswerError::NotPending(id))?.ask;
            check_answer(ask, &answer, confirmed)?;
            asks.remove(&id).ok_or(AnswerError::NotPending(id))?
        };
        self.inner.bump();
        slot.reply
            .send(answer)
            .map_err(|_| AnswerError::Withdrawn(id))?;
        tracing::info!(id, call_id = %slot.ask.prompt.call_id, "ask answered on the web page");
        Ok(())
    }

    /// A receiver that changes whenever the pending set changes.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }
}

/// Whether `answer` may be given to `ask`.
pub fn check_answer(ask: &PendingAsk, answer: &Answer, confirmed: bool) -> Result<(), AnswerError> {
    let destructive = ask.is_destructive();
    let not_offered = |answer: &'static str, why: &'static str| AnswerError::NotOffered {
        id: ask.id,
        answer,
        why,
    };
    match answer {
        Answer::Always if destructive => {
            return Err(not_offered(
                "always",
                "a destructive request is asked every time",
            ));
        }
        Answer::Always if !ask.prompt.offer_always => {
            return Err(not_offered("always", "this request cannot be saved"));
        }
        Answer::Session if destructive => {
            return Err(not_offered(
                "session",
                "a destructive request is asked every time",
            ));
        }
        Answer::Session if !ask.prompt.offer_session => {
            return Err(not_offered("session", "this request cannot be remembered"));
        }
        Answer::Reject { message: Some(m) } if m.chars().count() > MAX_MESSAGE_CHARS => {
            return Err(AnswerError::BadInput(format!(
                "the reject message is longer than {MAX_MESSAGE_CHARS} characters"
            )));
        }
        _ => {}
    }
    if destructive && !matches!(answer, Answer::Reject { .. }) && !confirmed {
        return Err(AnswerError::NeedsConfirmation(ask.id));
    }
    Ok(())
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, Slot>> {
        // Each critical section is a single map operation, so a poisoned map is
        // still consistent.
        self.asks.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn bump(&self) {
        self.version.send_modify(|v| *v = v.wrapping_add(1));
    }
}

/// What a [`Withdraw`] guard takes off the page.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Waiting {
    /// An approval ask.
    Ask,
    /// A `question` tool call.
    Question,
}

/// Removes the ask or question from the page when the asker's future is
/// dropped (withdrawn, timed out, answered elsewhere, cancelled).
pub(crate) struct Withdraw {
    pub(crate) inner: Arc<Inner>,
    pub(crate) id: u64,
    pub(crate) what: Waiting,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let removed = match self.what {
            Waiting::Ask => self.inner.lock().remove(&self.id).is_some(),
            Waiting::Question => self.inner.lock_questions().remove(&self.id).is_some(),
        };
        if removed {
            tracing::debug!(id = self.id, what = ?self.what, "withdrawn from the web page");
            self.inner.bump();
        }
    }
}

#[async_trait::async_trait]
impl ApprovalChannel for WebApprovals {
    async fn ask(&self, prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answered) = oneshot::channel();
        let ask = PendingAsk {
            id,
            prompt: prompt.clone(),
            asked_ms: toolgate_core::now_ms(),
        };
        self.inner.lock().insert(id, Slot { ask, reply });
        let _withdraw = Withdraw {
            inner: Arc::clone(&self.inner),
            id,
            what: Waiting::Ask,
        };
        self.inner.bump();
        tracing::info!(id, call_id = %prompt.call_id, tool = %prompt.tool, "ask waiting on the web page");
        answered.await.map_err(|e| {
            ChannelError::Failed(
                Failure::new(format!("web ask {id} was dropped unanswered")).because(e),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use toolgate_policy::approvals::AskItem;

    fn prompt(risk: Risk) -> AskPrompt {
        AskPrompt {
            session_id: "s".into(),
            call_id: "c".into(),
            tool: "bash".into(),
            items: vec![AskItem {
                action: "bash".into(),
                resource: "make".into(),
                risk,
                reason: "r".into(),
                save_pattern: None,
            }],
            offer_session: true,
            offer_always: true,
            timeout_ms: 1000,
            preview: None,
        }
    }

    async fn until_pending(web: &WebApprovals) -> u64 {
        loop {
            if let Some(a) = web.pending().first() {
                return a.id;
            }
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn another_channel_winning_withdraws_the_ask() {
        let web = WebApprovals::new();
        let changes = web.subscribe();
        let asked = prompt(Risk::Execute);
        // What a composed channel does: race the page against something faster.
        let other = async {
            until_pending(&web).await;
            "terminal answered"
        };
        let winner = tokio::select! {
            _ = web.ask(&asked) => "web",
            who = other => who,
        };
        assert_eq!(winner, "terminal answered");
        assert!(web.pending().is_empty());
        assert!(changes.has_changed().unwrap(), "the page was told");
        // A click that arrives late finds nothing.
        assert_eq!(
            web.answer(1, Answer::Once, false),
            Err(AnswerError::NotPending(1))
        );
    }

    #[tokio::test]
    async fn ids_are_unique_and_answers_go_to_their_own_ask() {
        let web = WebApprovals::new();
        let a = tokio::spawn({
            let web = web.clone();
            async move { web.ask(&prompt(Risk::Write)).await }
        });
        let first = until_pending(&web).await;
        let b = tokio::spawn({
            let web = web.clone();
            async move { web.ask(&prompt(Risk::Network)).await }
        });
        while web.pending().len() < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let second = web.pending()[1].id;
        assert_ne!(first, second);
        web.answer(second, Answer::Reject { message: None }, false)
            .unwrap();
        web.answer(first, Answer::Session, false).unwrap();
        assert_eq!(a.await.unwrap().unwrap(), Answer::Session);
        assert_eq!(b.await.unwrap().unwrap(), Answer::Reject { message: None });
    }
}
