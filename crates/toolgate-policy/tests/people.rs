//! `People`: the channels that reach a person, asked for approvals and for
//! questions in the order of the policy in force at each ask. A channel that is
//! listed but off counts as unable to ask and the next one is tried at once; a
//! policy swapped between two asks sets the order of the second.
//!
//! The policies are real (config texts through `Policy::from_texts`), and so
//! are the channels that are off; the channels that answer record what they
//! were asked and answer as the test scripts them.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::error::Error;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate_core::{
    CallIdentity, DecisionSource, Effect, Failure, Gate, GateCall, Location, PermissionRequest,
    Question, QuestionChannel, QuestionError, Risk,
};
use toolgate_policy::approvals::{
    Answer, ApprovalChannel, ApprovalStore, ApprovalStoreError, AskPrompt, ChannelError,
    SavedApproval,
};
use toolgate_policy::config::ApprovalChannelName::{self, Mcp, Terminal, Web};
use toolgate_policy::gate::PolicyGate;
use toolgate_policy::people::{Asking, Channels, People};
use toolgate_policy::policy::Policy;
use toolgate_policy::rules::Layer;
use toolgate_policy::shared_policy::SharedPolicy;

/// What a channel does when asked.
#[derive(Clone, Copy)]
enum Does {
    /// Answers `once`, and each question with "NAME: QUESTION".
    Answer,
    /// Cannot ask anyone.
    Fail,
    /// The person declines the questions (and rejects an approval).
    Decline,
}

/// The names of the channels asked, in the order they were asked.
type Log = Arc<Mutex<Vec<ApprovalChannelName>>>;

struct Recording {
    name: ApprovalChannelName,
    does: Does,
    log: Log,
}

/// Channel `name`, doing `does` and writing its name in `log` when asked.
fn recording(name: ApprovalChannelName, does: Does, log: &Log) -> Arc<Recording> {
    Arc::new(Recording {
        name,
        does,
        log: log.clone(),
    })
}

#[async_trait]
impl ApprovalChannel for Recording {
    async fn ask(&self, _prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        self.log.lock().unwrap().push(self.name);
        match self.does {
            Does::Answer => Ok(Answer::Once),
            Does::Fail => Err(ChannelError::Unavailable(
                format!("{} cannot ask", self.name).into(),
            )),
            Does::Decline => Ok(Answer::Reject { message: None }),
        }
    }
}

#[async_trait]
impl QuestionChannel for Recording {
    async fn ask(
        &self,
        _caller: &CallIdentity,
        questions: &[Question],
        _cancel: &CancellationToken,
    ) -> Result<Vec<String>, QuestionError> {
        self.log.lock().unwrap().push(self.name);
        match self.does {
            Does::Answer => Ok(questions
                .iter()
                .map(|q| format!("{}: {}", self.name, q.question))
                .collect()),
            Does::Fail => {
                let io = std::io::Error::other(format!("{} is gone", self.name));
                Err(QuestionError::Failed(Failure::caused(
                    format!("{} cannot ask", self.name),
                    io,
                )))
            }
            Does::Decline => Err(QuestionError::Declined(Some("not now".into()))),
        }
    }
}

fn policy(texts: &[(&str, Layer, &str)]) -> Policy {
    Policy::from_texts(Path::new("/ws"), Path::new("/home/u"), texts, None).unwrap()
}

fn user(config: &str) -> Policy {
    policy(&[("user.toml", Layer::User, config)])
}

/// The three channels, each doing what `does` says for its name.
fn channels(log: &Log, does: impl Fn(ApprovalChannelName) -> Does) -> Channels {
    [Mcp, Web, Terminal]
        .into_iter()
        .fold(Channels::new(), |channels, name| {
            channels.with(name, recording(name, does(name), log))
        })
}

fn prompt() -> AskPrompt {
    AskPrompt {
        session_id: "s".into(),
        call_id: "c".into(),
        tool: "bash".into(),
        items: Vec::new(),
        offer_session: true,
        offer_always: true,
        timeout_ms: 60_000,
        preview: None,
    }
}

fn caller() -> CallIdentity {
    CallIdentity {
        session_id: "s".into(),
        call_id: "c".into(),
        ..CallIdentity::default()
    }
}

fn questions() -> Vec<Question> {
    vec![Question {
        question: "Which database?".into(),
        options: Some(vec!["sqlite".into(), "postgres".into()]),
    }]
}

async fn approve(people: &People) -> Result<Answer, ChannelError> {
    ApprovalChannel::ask(people, &prompt()).await
}

async fn answer(people: &People) -> Result<Vec<String>, QuestionError> {
    QuestionChannel::ask(people, &caller(), &questions(), &CancellationToken::new()).await
}

fn asked(log: &Log) -> Vec<ApprovalChannelName> {
    std::mem::take(&mut *log.lock().unwrap())
}

#[tokio::test]
async fn the_policy_order_is_asked_and_the_first_answer_wins() {
    let log = Log::default();
    let shared = SharedPolicy::new(user(
        "[approvals]\nchannels = [\"terminal\", \"web\", \"mcp\"]\nescalate_after = 30\n",
    ));
    let people = channels(&log, |_| Does::Answer).asked_under(shared);
    assert_eq!(people.order(), [Terminal, Web, Mcp]);
    assert_eq!(approve(&people).await.unwrap(), Answer::Once);
    assert_eq!(asked(&log), [Terminal]);
    assert_eq!(
        answer(&people).await.unwrap(),
        ["terminal: Which database?"]
    );
    assert_eq!(asked(&log), [Terminal]);
}

#[tokio::test]
async fn a_channel_listed_but_off_passes_to_the_next_at_once() {
    let log = Log::default();
    let shared = SharedPolicy::new(user(
        "[approvals]\nchannels = [\"web\", \"mcp\"]\nescalate_after = 30\n",
    ));
    let people = channels(&log, |_| Does::Answer)
        .with_off(Web, "the approval page is off (--no-web)")
        .asked_under(shared);
    let started = Instant::now();
    assert_eq!(approve(&people).await.unwrap(), Answer::Once);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited {:?} for escalate_after",
        started.elapsed()
    );
    assert_eq!(asked(&log), [Mcp]);
    assert_eq!(answer(&people).await.unwrap(), ["mcp: Which database?"]);
    assert_eq!(asked(&log), [Mcp]);
}

#[tokio::test]
async fn a_channel_that_cannot_ask_passes_to_the_next_at_once() {
    let log = Log::default();
    let shared = SharedPolicy::new(user("[approvals]\nescalate_after = 30\n"));
    let people = channels(&log, |name| match name {
        Mcp => Does::Fail,
        _ => Does::Answer,
    })
    .asked_under(shared);
    let started = Instant::now();
    assert_eq!(approve(&people).await.unwrap(), Answer::Once);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(asked(&log), [Mcp, Web]);
    assert_eq!(answer(&people).await.unwrap(), ["web: Which database?"]);
    assert_eq!(asked(&log), [Mcp, Web]);
}

#[tokio::test]
async fn a_name_without_a_channel_counts_as_off() {
    let log = Log::default();
    let people = Channels::new()
        .with(Terminal, recording(Terminal, Does::Fail, &log))
        .asked_under(SharedPolicy::new(user("")));
    let e = approve(&people).await.unwrap_err();
    assert!(matches!(e, ChannelError::Unavailable(_)), "{e}");
    let e = e.to_string();
    assert!(e.contains("no mcp channel is set up"), "{e}");
    assert!(e.contains("no web channel is set up"), "{e}");
    assert!(e.contains("terminal cannot ask"), "{e}");
    assert_eq!(asked(&log), [Terminal]);
    let e = answer(&people).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "could not ask the user: no channel can ask the user (mcp: no mcp channel is set up; \
         web: no web channel is set up; terminal: terminal cannot ask: terminal is gone)"
    );
}

#[tokio::test]
async fn when_no_channel_can_answer_a_question_the_first_failure_is_the_cause() {
    let log = Log::default();
    let shared = SharedPolicy::new(user("[approvals]\nchannels = [\"web\", \"terminal\"]\n"));
    let people = channels(&log, |_| Does::Fail).asked_under(shared);
    let e = answer(&people).await.unwrap_err();
    assert_eq!(asked(&log), [Web, Terminal]);
    let QuestionError::Failed(why) = &e else {
        panic!("{e}")
    };
    assert_eq!(
        why.message(),
        "no channel can ask the user (web: web cannot ask: web is gone; \
         terminal: terminal cannot ask: terminal is gone)"
    );
    let first = why.source().unwrap();
    assert_eq!(first.to_string(), "web cannot ask: web is gone");
    let io = first.source().unwrap();
    assert!(io.downcast_ref::<std::io::Error>().is_some(), "{io}");
}

#[tokio::test]
async fn a_declined_question_is_not_asked_elsewhere() {
    let log = Log::default();
    let people = channels(&log, |name| match name {
        Mcp => Does::Fail,
        Web => Does::Decline,
        Terminal => Does::Answer,
    })
    .asked_under(SharedPolicy::new(user("")));
    let e = answer(&people).await.unwrap_err();
    assert!(
        matches!(&e, QuestionError::Declined(Some(m)) if m == "not now"),
        "{e}"
    );
    assert_eq!(asked(&log), [Mcp, Web]);
}

#[tokio::test]
async fn the_command_line_beats_the_config_and_the_managed_layer_beats_both() {
    let log = Log::default();
    let config = user("[approvals]\nchannels = [\"terminal\"]\n");
    let people = channels(&log, |_| Does::Answer)
        .ordered_by(Some(vec![Web, Mcp]))
        .asked_under(SharedPolicy::new(config));
    assert_eq!(people.order(), [Web, Mcp]);
    approve(&people).await.unwrap();
    assert_eq!(asked(&log), [Web]);
    let managed = policy(&[
        (
            "user.toml",
            Layer::User,
            "[approvals]\nchannels = [\"terminal\"]\n",
        ),
        (
            "managed.toml",
            Layer::Managed,
            "[approvals]\nchannels = [\"mcp\"]\n",
        ),
    ]);
    let people = channels(&log, |_| Does::Answer)
        .ordered_by(Some(vec![Web]))
        .asked_under(SharedPolicy::new(managed));
    assert_eq!(people.order(), [Mcp]);
    answer(&people).await.unwrap();
    assert_eq!(asked(&log), [Mcp]);
}

#[tokio::test]
async fn a_policy_swapped_between_two_asks_sets_the_order_of_the_second() {
    let log = Log::default();
    let shared = SharedPolicy::new(user("[approvals]\nchannels = [\"web\", \"mcp\"]\n"));
    let people = channels(&log, |_| Does::Answer).asked_under(shared.clone());
    approve(&people).await.unwrap();
    assert_eq!(asked(&log), [Web]);
    shared.replace(user("[approvals]\nchannels = [\"terminal\", \"web\"]\n"));
    approve(&people).await.unwrap();
    assert_eq!(asked(&log), [Terminal]);
    answer(&people).await.unwrap();
    assert_eq!(asked(&log), [Terminal]);
}

/// Saved approvals are not what these tests are about: none are saved.
struct NothingSaved;

impl ApprovalStore for NothingSaved {
    fn save(&self, _: &str, _: &str, _: &str) -> Result<SavedApproval, ApprovalStoreError> {
        Err(ApprovalStoreError::NotFound(0))
    }
    fn list_project(&self, _: &str) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        Ok(Vec::new())
    }
    fn list_all(&self) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        Ok(Vec::new())
    }
    fn revoke(&self, id: i64) -> Result<SavedApproval, ApprovalStoreError> {
        Err(ApprovalStoreError::NotFound(id))
    }
}

#[tokio::test]
async fn the_gate_asks_through_people_and_its_new_policy_sets_the_next_order() {
    let dir = tempfile::tempdir().unwrap();
    let location = Location::new(dir.path()).unwrap();
    let config = |order: &str| {
        Policy::from_texts(
            location.root(),
            Path::new("/home/u"),
            &[(
                "user.toml",
                Layer::User,
                &format!("[approvals]\nchannels = {order}\n"),
            )],
            None,
        )
        .unwrap()
    };
    let log = Log::default();
    let shared = SharedPolicy::new(config("[\"mcp\", \"terminal\"]"));
    let people = Asking::InPolicyOrder(channels(&log, |_| Does::Answer)).under(&shared);
    let gate = PolicyGate::sharing(shared, Arc::new(NothingSaved), people);
    let input = json!({});
    let call = GateCall {
        tool: "edit",
        input: &input,
        location: &location,
        session_id: "s",
        call_id: "c",
        preview: None,
    };
    let edit = || {
        let path = location.root().join("a.rs").display().to_string();
        vec![PermissionRequest::path("edit", path, Risk::Write)]
    };
    let decide = async |gate: &PolicyGate| {
        let judged = gate.evaluate(&call, edit()).unwrap();
        assert_eq!(judged[0].decision.effect, Effect::Ask);
        let finals = gate
            .resolve(&call, &judged, &CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(finals[0].effect, Effect::Allow);
        assert_eq!(finals[0].source, DecisionSource::User);
    };
    decide(&gate).await;
    assert_eq!(asked(&log), [Mcp]);
    gate.replace_policy(config("[\"web\", \"mcp\"]"));
    decide(&gate).await;
    assert_eq!(asked(&log), [Web]);
    assert_eq!(
        gate.shared_policy().current().approval_channels(None),
        [Web, Mcp]
    );
}

#[tokio::test]
async fn one_channel_is_asked_whatever_the_order() {
    let log = Log::default();
    let shared = SharedPolicy::new(user("[approvals]\nchannels = [\"web\"]\n"));
    let one = Asking::One(recording(Terminal, Does::Answer, &log)).under(&shared);
    assert_eq!(
        ApprovalChannel::ask(&*one, &prompt()).await.unwrap(),
        Answer::Once
    );
    let answers = QuestionChannel::ask(&*one, &caller(), &questions(), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(answers, ["terminal: Which database?"]);
    assert_eq!(asked(&log), [Terminal, Terminal]);
}
