//! The approval page as one of the channels of `toolgate_policy::people`: the
//! gate's asks and the `question` tool's questions reach the page that the
//! policy in force names first, a page that is off passes them on at once, and
//! a config reloaded between two asks moves the second. Every part is real: two
//! pages, a policy loaded from a config file, the gate, saved approvals in
//! SQLite.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolgate_core::{
    CallIdentity, Decision, DecisionSource, Effect, Gate, GateCall, Location, PermissionRequest,
    Question, QuestionChannel, QuestionError, Risk,
};
use toolgate_policy::approvals::Answer;
use toolgate_policy::config::ApprovalChannelName::{Mcp, Terminal, Web};
use toolgate_policy::gate::PolicyGate;
use toolgate_policy::people::{Asking, Channels, PersonChannel};
use toolgate_policy::policy::{Policy, PolicySources};
use toolgate_policy::shared_policy::SharedPolicy;
use toolgate_store::SqliteApprovals;
use toolgate_web::{QuestionReply, WebApprovals};

/// A workspace, a home whose user config the test writes, and two pages: one
/// stands as the `mcp` channel, the other as `web`. The terminal is off.
struct Setup {
    dir: tempfile::TempDir,
    sources: PolicySources,
    first: WebApprovals,
    second: WebApprovals,
}

impl Setup {
    fn new(config: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        for d in ["ws", "home/.config/toolgate"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let mut sources = PolicySources::bare(dir.path().join("ws"), dir.path().join("home"));
        sources.user = Some(dir.path().join("home/.config/toolgate/config.toml"));
        let setup = Setup {
            dir,
            sources,
            first: WebApprovals::new(),
            second: WebApprovals::new(),
        };
        setup.write_config(config);
        setup
    }

    fn write_config(&self, config: &str) {
        std::fs::write(self.sources.user.as_ref().unwrap(), config).unwrap();
    }

    /// The pages as `mcp` (the first) and `web` (the second), the terminal off.
    fn channels(&self) -> Channels {
        Channels::new()
            .with(Mcp, Arc::new(self.first.clone()))
            .with(Web, Arc::new(self.second.clone()))
            .with_off(Terminal, "no terminal in this test")
    }

    fn policy(&self) -> SharedPolicy {
        SharedPolicy::new(Policy::load(&self.sources).unwrap())
    }

    /// The gate over the config, asking through `channels`, and the same
    /// channels as the `question` tool would be given them.
    fn gate(&self, channels: Channels) -> (Arc<PolicyGate>, Arc<dyn PersonChannel>) {
        let shared = self.policy();
        let people = Asking::InPolicyOrder(channels).under(&shared);
        let store = SqliteApprovals::open(self.dir.path().join("state.db")).unwrap();
        let gate = PolicyGate::sharing(shared, Arc::new(store), people.clone());
        (Arc::new(gate), people)
    }

    /// Has `gate` decide an edit in the workspace, which the default policy asks.
    fn decide(&self, gate: &Arc<PolicyGate>) -> JoinHandle<Vec<Decision>> {
        let (gate, location) = (gate.clone(), Location::new(self.root()).unwrap());
        tokio::spawn(async move {
            let input = json!({});
            let call = GateCall {
                tool: "edit",
                input: &input,
                location: &location,
                session_id: "s",
                call_id: "c",
                preview: None,
            };
            let path = location.root().join("a.rs").display().to_string();
            let request = PermissionRequest::path("edit", path, Risk::Write);
            let judged = gate.evaluate(&call, vec![request]).unwrap();
            gate.resolve(&call, &judged, &CancellationToken::new())
                .await
                .unwrap()
        })
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("ws")
    }
}

/// The id of the first ask on `page`, once one arrives.
async fn ask_on(page: &WebApprovals) -> u64 {
    until(|| page.pending().first().map(|a| a.id)).await
}

/// The id of the first question on `page`, once one arrives.
async fn question_on(page: &WebApprovals) -> u64 {
    until(|| page.pending_questions().first().map(|q| q.id)).await
}

async fn until(found: impl Fn() -> Option<u64>) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(id) = found() {
            return id;
        }
        assert!(Instant::now() < deadline, "nothing arrived on the page");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Two questions, one with choices.
fn questions() -> Vec<Question> {
    let ask = |text: &str, options: Option<&[&str]>| Question {
        question: text.into(),
        options: options.map(|o| o.iter().map(|&c| c.to_string()).collect()),
    };
    vec![
        ask("Which database?", Some(&["sqlite", "postgres"])),
        ask("Table name?", None),
    ]
}

/// Asks `questions()` through `people`, as the `question` tool does.
fn ask_questions(
    people: &Arc<dyn PersonChannel>,
    cancel: &CancellationToken,
) -> JoinHandle<Result<Vec<String>, QuestionError>> {
    let (people, cancel) = (people.clone(), cancel.clone());
    tokio::spawn(async move {
        let caller = CallIdentity {
            session_id: "s".into(),
            call_id: "c".into(),
            ..CallIdentity::default()
        };
        QuestionChannel::ask(&*people, &caller, &questions(), &cancel).await
    })
}

#[tokio::test]
async fn the_gate_asks_on_the_page_named_first_and_a_reload_moves_the_next_ask() {
    let setup = Setup::new("[approvals]\nchannels = [\"web\", \"mcp\"]\nescalate_after = 30\n");
    let (gate, _) = setup.gate(setup.channels());
    let deciding = setup.decide(&gate);
    let id = ask_on(&setup.second).await;
    assert!(setup.first.pending().is_empty(), "mcp asked before web");
    setup.second.answer(id, Answer::Once, false).unwrap();
    let finals = deciding.await.unwrap();
    assert_eq!(finals[0].effect, Effect::Allow);
    assert_eq!(finals[0].source, DecisionSource::User);

    setup.write_config("[approvals]\nchannels = [\"mcp\", \"web\"]\nescalate_after = 30\n");
    gate.reload(&setup.sources).unwrap();
    let deciding = setup.decide(&gate);
    let id = ask_on(&setup.first).await;
    assert!(setup.second.pending().is_empty(), "web asked before mcp");
    setup
        .first
        .answer(id, Answer::Reject { message: None }, false)
        .unwrap();
    let finals = deciding.await.unwrap();
    assert_eq!(finals[0].effect, Effect::Deny);
    assert_eq!(finals[0].source, DecisionSource::User);
}

#[tokio::test]
async fn a_page_that_is_off_passes_the_ask_and_the_question_on_at_once() {
    let setup = Setup::new("[approvals]\nchannels = [\"web\", \"mcp\"]\nescalate_after = 30\n");
    let (gate, people) = setup.gate(
        setup
            .channels()
            .with_off(Web, "the approval page is off (--no-web)"),
    );
    let started = Instant::now();
    let deciding = setup.decide(&gate);
    let id = ask_on(&setup.first).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited {:?} for escalate_after",
        started.elapsed()
    );
    setup.first.answer(id, Answer::Session, false).unwrap();
    let finals = deciding.await.unwrap();
    assert_eq!(finals[0].effect, Effect::Allow);

    let asking = ask_questions(&people, &CancellationToken::new());
    let id = question_on(&setup.first).await;
    assert!(setup.second.pending_questions().is_empty());
    let answers = vec!["postgres".to_string(), "accounts".to_string()];
    setup
        .first
        .reply_questions(id, QuestionReply::Answered(answers.clone()))
        .unwrap();
    assert_eq!(asking.await.unwrap().unwrap(), answers);
}

#[tokio::test]
async fn a_question_is_answered_on_the_page_named_first_through_the_same_port() {
    let setup = Setup::new("[approvals]\nchannels = [\"web\", \"mcp\"]\n");
    let shared = setup.policy();
    let people: Arc<dyn PersonChannel> = Arc::new(setup.channels().asked_under(shared.clone()));
    let asking = ask_questions(&people, &CancellationToken::new());
    let id = question_on(&setup.second).await;
    assert!(setup.first.pending_questions().is_empty());
    assert_eq!(setup.second.pending_questions()[0].questions, questions());
    setup
        .second
        .reply_questions(
            id,
            QuestionReply::Answered(vec![" sqlite ".into(), "users".into()]),
        )
        .unwrap();
    assert_eq!(asking.await.unwrap().unwrap(), ["sqlite", "users"]);

    // The next question follows a policy swapped in meanwhile.
    setup.write_config("[approvals]\nchannels = [\"mcp\"]\n");
    shared.replace(Policy::load(&setup.sources).unwrap());
    let asking = ask_questions(&people, &CancellationToken::new());
    let id = question_on(&setup.first).await;
    assert!(setup.second.pending_questions().is_empty());
    setup
        .first
        .reply_questions(id, QuestionReply::Answered(vec!["a".into(), "b".into()]))
        .unwrap();
    assert_eq!(asking.await.unwrap().unwrap(), ["a", "b"]);
}

#[tokio::test]
async fn a_question_declined_on_the_page_is_asked_nowhere_else() {
    let setup = Setup::new("[approvals]\nchannels = [\"web\", \"mcp\"]\n");
    let people: Arc<dyn PersonChannel> = Arc::new(setup.channels().asked_under(setup.policy()));
    let asking = ask_questions(&people, &CancellationToken::new());
    let id = question_on(&setup.second).await;
    setup
        .second
        .reply_questions(id, QuestionReply::Declined(Some("ask me tomorrow".into())))
        .unwrap();
    let e = asking.await.unwrap().unwrap_err();
    assert!(
        matches!(&e, QuestionError::Declined(Some(m)) if m == "ask me tomorrow"),
        "{e}"
    );
    assert!(setup.first.pending_questions().is_empty());
}

#[tokio::test]
async fn a_cancelled_question_leaves_the_page() {
    let setup = Setup::new("[approvals]\nchannels = [\"web\", \"mcp\"]\n");
    let people: Arc<dyn PersonChannel> = Arc::new(setup.channels().asked_under(setup.policy()));
    let cancel = CancellationToken::new();
    let asking = ask_questions(&people, &cancel);
    question_on(&setup.second).await;
    cancel.cancel();
    let e = asking.await.unwrap().unwrap_err();
    assert!(matches!(e, QuestionError::Cancelled), "{e}");
    assert!(setup.second.pending_questions().is_empty());
    assert!(setup.first.pending_questions().is_empty());
}
