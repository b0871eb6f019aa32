//! `FirstAnswer`: every channel asked at once, first answer wins, the others
//! withdrawn; failure only when every channel fails.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use toolgate_policy::approvals::{Answer, ApprovalChannel, AskPrompt, ChannelError, FirstAnswer};

/// Answers after a delay, or fails; records whether its question was withdrawn.
struct Channel {
    delay: Duration,
    outcome: fn() -> Result<Answer, ChannelError>,
    withdrawn: Arc<AtomicBool>,
}

struct SetOnDrop(Arc<AtomicBool>, bool);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        if !self.1 {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

#[async_trait]
impl ApprovalChannel for Channel {
    async fn ask(&self, _prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        let mut guard = SetOnDrop(self.withdrawn.clone(), false);
        tokio::time::sleep(self.delay).await;
        guard.1 = true;
        (self.outcome)()
    }
}

fn channel(
    ms: u64,
    outcome: fn() -> Result<Answer, ChannelError>,
) -> (Arc<dyn ApprovalChannel>, Arc<AtomicBool>) {
    let withdrawn = Arc::new(AtomicBool::new(false));
    let c = Channel {
        delay: Duration::from_millis(ms),
        outcome,
        withdrawn: withdrawn.clone(),
    };
    (Arc::new(c), withdrawn)
}

fn prompt() -> AskPrompt {
    AskPrompt {
        session_id: "s".into(),
        call_id: "c".into(),
        tool: "bash".into(),
        items: Vec::new(),
        offer_session: true,
        offer_always: true,
        timeout_ms: 1000,
    }
}

#[tokio::test]
async fn the_first_answer_wins_and_the_slower_question_is_withdrawn() {
    let (slow, slow_withdrawn) = channel(5_000, || Ok(Answer::Always));
    let (fast, _) = channel(10, || Ok(Answer::Once));
    let any = FirstAnswer(vec![slow, fast]);
    assert_eq!(any.ask(&prompt()).await.unwrap(), Answer::Once);
    assert!(slow_withdrawn.load(Ordering::SeqCst));
}

#[tokio::test]
async fn an_unavailable_channel_lets_the_next_one_answer() {
    let (none, _) = channel(0, || Err(ChannelError::Unavailable("no terminal".into())));
    let (page, _) = channel(20, || {
        Ok(Answer::Reject {
            message: Some("no".into()),
        })
    });
    let any = FirstAnswer(vec![none, page]);
    assert_eq!(
        any.ask(&prompt()).await.unwrap(),
        Answer::Reject {
            message: Some("no".into())
        }
    );
}

#[tokio::test]
async fn it_fails_only_when_every_channel_fails() {
    let (a, _) = channel(0, || Err(ChannelError::Unavailable("no terminal".into())));
    let (b, _) = channel(0, || {
        Err(ChannelError::Unavailable("no elicitation".into()))
    });
    let err = FirstAnswer(vec![a, b]).ask(&prompt()).await.unwrap_err();
    assert!(
        matches!(&err, ChannelError::Unavailable(m) if m.contains("no terminal") && m.contains("no elicitation")),
        "{err}"
    );
    let (a, _) = channel(0, || Err(ChannelError::Unavailable("no terminal".into())));
    let (b, _) = channel(0, || Err(ChannelError::Failed("page crashed".into())));
    let err = FirstAnswer(vec![a, b]).ask(&prompt()).await.unwrap_err();
    assert!(matches!(err, ChannelError::Failed(_)));
    let err = FirstAnswer(Vec::new()).ask(&prompt()).await.unwrap_err();
    assert!(err.to_string().contains("no approval channel"));
}
