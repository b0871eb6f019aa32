//! `InOrder`: channels tried in the configured order. The first asks alone; the
//! next is asked too when an asking channel ends without an answer or after
//! `escalate_after`; every started channel races and the first answer wins.
//! `FirstAnswer`, its zero-delay case (every channel asked at once), is tested
//! here too, on the same channels.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use toolgate_policy::approvals::{
    Answer, ApprovalChannel, AskPrompt, ChannelError, FirstAnswer, InOrder,
};
use toolgate_policy::test_util::ask_prompt;

/// What happened to one channel's question.
#[derive(Debug, Default)]
struct Seen {
    asked_at: Option<Instant>,
    withdrawn: bool,
}

/// Answers (or fails) after a delay; records when it was asked and whether its
/// question was withdrawn before it answered.
struct Channel {
    delay: Duration,
    outcome: fn() -> Result<Answer, ChannelError>,
    seen: Arc<Mutex<Seen>>,
}

struct Withdrawn(Arc<Mutex<Seen>>, bool);

impl Drop for Withdrawn {
    fn drop(&mut self) {
        if !self.1 {
            self.0.lock().unwrap().withdrawn = true;
        }
    }
}

#[async_trait]
impl ApprovalChannel for Channel {
    async fn ask(&self, _prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        self.seen.lock().unwrap().asked_at = Some(Instant::now());
        let mut guard = Withdrawn(self.seen.clone(), false);
        tokio::time::sleep(self.delay).await;
        guard.1 = true;
        (self.outcome)()
    }
}

fn channel(
    ms: u64,
    outcome: fn() -> Result<Answer, ChannelError>,
) -> (Arc<dyn ApprovalChannel>, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let c = Channel {
        delay: Duration::from_millis(ms),
        outcome,
        seen: seen.clone(),
    };
    (Arc::new(c), seen)
}

fn unavailable() -> Result<Answer, ChannelError> {
    Err(ChannelError::Unavailable("no terminal".into()))
}

/// An ask the channels here never read.
fn prompt() -> AskPrompt {
    ask_prompt("c", "bash")
}

const LONG: Duration = Duration::from_secs(30);

#[tokio::test]
async fn the_first_channel_asks_alone_and_the_next_is_never_asked_when_it_answers() {
    let (client, _) = channel(20, || Ok(Answer::Once));
    let (page, page_seen) = channel(0, || Ok(Answer::Always));
    let tried = InOrder::new(vec![client, page], LONG);
    assert_eq!(tried.ask(&prompt()).await.unwrap(), Answer::Once);
    assert!(page_seen.lock().unwrap().asked_at.is_none());
}

#[tokio::test]
async fn an_unavailable_channel_passes_to_the_next_at_once() {
    let (client, _) = channel(0, unavailable);
    let (page, page_seen) = channel(10, || Ok(Answer::Session));
    let started = Instant::now();
    let tried = InOrder::new(vec![client, page], LONG);
    assert_eq!(tried.ask(&prompt()).await.unwrap(), Answer::Session);
    let asked = page_seen.lock().unwrap().asked_at.unwrap();
    assert!(
        asked - started < Duration::from_secs(5),
        "{:?}",
        asked - started
    );
}

#[tokio::test]
async fn after_escalate_after_the_next_channel_is_asked_too_and_both_race() {
    let (client, client_seen) = channel(60_000, || Ok(Answer::Always));
    let (page, page_seen) = channel(10, || Ok(Answer::Once));
    let (terminal, terminal_seen) = channel(0, || Ok(Answer::Session));
    let started = Instant::now();
    let tried = InOrder::new(vec![client, page, terminal], Duration::from_millis(200));
    assert_eq!(tried.ask(&prompt()).await.unwrap(), Answer::Once);
    let asked = page_seen.lock().unwrap().asked_at.unwrap();
    assert!(asked - started >= Duration::from_millis(200));
    // The client kept its question open until the page answered; then it was
    // withdrawn. The terminal's turn never came.
    assert!(client_seen.lock().unwrap().withdrawn);
    assert!(terminal_seen.lock().unwrap().asked_at.is_none());
}

#[tokio::test]
async fn a_failing_channel_passes_on_while_an_earlier_one_still_asks() {
    let (client, client_seen) = channel(60_000, || Ok(Answer::Always));
    let (page, _) = channel(0, || Err(ChannelError::Failed("page crashed".into())));
    let (terminal, _) = channel(10, || Ok(Answer::Once));
    let tried = InOrder::new(vec![client, page, terminal], Duration::from_millis(100));
    assert_eq!(tried.ask(&prompt()).await.unwrap(), Answer::Once);
    assert!(client_seen.lock().unwrap().withdrawn);
}

#[tokio::test]
async fn zero_escalation_asks_every_channel_at_once() {
    let (a, a_seen) = channel(5_000, || Ok(Answer::Always));
    let (b, b_seen) = channel(5_000, || Ok(Answer::Always));
    let (c, _) = channel(20, || Ok(Answer::Once));
    let tried = InOrder::new(vec![a, b, c], Duration::ZERO);
    assert_eq!(tried.ask(&prompt()).await.unwrap(), Answer::Once);
    assert!(a_seen.lock().unwrap().withdrawn && b_seen.lock().unwrap().withdrawn);
}

#[tokio::test]
async fn failure_names_every_channel_in_order() {
    let (a, _) = channel(0, unavailable);
    let (b, _) = channel(0, || {
        Err(ChannelError::Unavailable("no elicitation".into()))
    });
    let err = InOrder::new(vec![a, b], LONG)
        .ask(&prompt())
        .await
        .unwrap_err();
    match err {
        ChannelError::Unavailable(m) => assert_eq!(m, "no terminal; no elicitation"),
        other => panic!("{other}"),
    }
    let (a, _) = channel(0, unavailable);
    let (b, _) = channel(0, || Err(ChannelError::Failed("page crashed".into())));
    let err = InOrder::new(vec![a, b], LONG)
        .ask(&prompt())
        .await
        .unwrap_err();
    assert!(matches!(err, ChannelError::Failed(_)), "{err}");
    let err = InOrder::new(Vec::new(), LONG)
        .ask(&prompt())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no approval channel"), "{err}");
}

#[tokio::test]
async fn first_answer_wins_and_the_slower_question_is_withdrawn() {
    let (slow, slow_seen) = channel(5_000, || Ok(Answer::Always));
    let (fast, _) = channel(10, || Ok(Answer::Once));
    let any = FirstAnswer(vec![slow, fast]);
    assert_eq!(any.ask(&prompt()).await.unwrap(), Answer::Once);
    assert!(slow_seen.lock().unwrap().withdrawn);
}

#[tokio::test]
async fn first_answer_lets_the_next_channel_answer_when_one_is_unavailable() {
    let (none, _) = channel(0, unavailable);
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
async fn first_answer_fails_only_when_every_channel_fails() {
    let (a, _) = channel(0, unavailable);
    let (b, _) = channel(0, || {
        Err(ChannelError::Unavailable("no elicitation".into()))
    });
    let err = FirstAnswer(vec![a, b]).ask(&prompt()).await.unwrap_err();
    assert!(
        matches!(&err, ChannelError::Unavailable(m) if m.contains("no terminal") && m.contains("no elicitation")),
        "{err}"
    );
    let (a, _) = channel(0, unavailable);
    let (b, _) = channel(0, || Err(ChannelError::Failed("page crashed".into())));
    let err = FirstAnswer(vec![a, b]).ask(&prompt()).await.unwrap_err();
    assert!(matches!(err, ChannelError::Failed(_)));
    let err = FirstAnswer(Vec::new()).ask(&prompt()).await.unwrap_err();
    assert!(err.to_string().contains("no approval channel"));
}
