//! `PolicyGate`: approvals, cascades, rejects, timeouts, cancellation, reloads.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use toolgate_core::{
    Decision, DecisionSource, Effect, Gate, GateCall, Judged, Location, PermissionRequest, Risk,
};
use toolgate_policy::approvals::{
    Answer, ApprovalChannel, ApprovalStore, ApprovalStoreError, AskPrompt, ChannelError,
    SavedApproval,
};
use toolgate_policy::gate::PolicyGate;
use toolgate_policy::policy::{Policy, PolicySources};
use toolgate_policy::rules::Layer;
use toolgate_policy::test_util::Nobody;

/// A real in-memory implementation of the approvals port, deduplicating like the
/// SQLite one must.
#[derive(Default)]
struct MemoryStore {
    rows: Mutex<Vec<SavedApproval>>,
    saves: AtomicUsize,
}

impl ApprovalStore for MemoryStore {
    fn save(
        &self,
        project: &str,
        action: &str,
        pattern: &str,
    ) -> Result<SavedApproval, ApprovalStoreError> {
        self.saves.fetch_add(1, Ordering::SeqCst);
        let mut rows = self.rows.lock().unwrap();
        if let Some(r) = rows
            .iter()
            .find(|r| r.project == project && r.action == action && r.pattern == pattern)
        {
            return Ok(r.clone());
        }
        let row = SavedApproval {
            id: i64::try_from(rows.len()).unwrap() + 1,
            project: project.into(),
            action: action.into(),
            pattern: pattern.into(),
            created_ms: 0,
            approved_by: None,
            machine: None,
        };
        rows.push(row.clone());
        Ok(row)
    }
    fn list_project(&self, project: &str) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        Ok(self
            .rows
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.project == project)
            .cloned()
            .collect())
    }
    fn list_all(&self) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        Ok(self.rows.lock().unwrap().clone())
    }
    fn revoke(&self, id: i64) -> Result<SavedApproval, ApprovalStoreError> {
        let mut rows = self.rows.lock().unwrap();
        let pos = rows
            .iter()
            .position(|r| r.id == id)
            .ok_or(ApprovalStoreError::NotFound(id))?;
        Ok(rows.remove(pos))
    }
}

/// A channel whose answers the test gives, one per ask, and which records prompts.
struct Scripted {
    prompts: mpsc::UnboundedSender<(AskPrompt, oneshot::Sender<Answer>)>,
}

#[async_trait]
impl ApprovalChannel for Scripted {
    async fn ask(&self, prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        let (tx, rx) = oneshot::channel();
        self.prompts
            .send((prompt.clone(), tx))
            .map_err(|_| ChannelError::Unavailable("test over".into()))?;
        rx.await
            .map_err(|_| ChannelError::Failed("no answer".into()))
    }
}

/// A channel that never answers.
struct Silent(Arc<Notify>);

#[async_trait]
impl ApprovalChannel for Silent {
    async fn ask(&self, _: &AskPrompt) -> Result<Answer, ChannelError> {
        self.0.notify_one();
        std::future::pending().await
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    loc: Location,
    gate: Arc<PolicyGate>,
    store: Arc<MemoryStore>,
    prompts: mpsc::UnboundedReceiver<(AskPrompt, oneshot::Sender<Answer>)>,
}

fn setup(config: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let loc = Location::new(dir.path()).unwrap();
    let policy = Policy::from_texts(
        loc.root(),
        Path::new("/home/u"),
        &[("p.toml", Layer::Project, config)],
        None,
    )
    .unwrap();
    let store = Arc::new(MemoryStore::default());
    let (tx, prompts) = mpsc::unbounded_channel();
    let gate = Arc::new(PolicyGate::new(
        policy,
        store.clone(),
        Arc::new(Scripted { prompts: tx }),
    ));
    Setup {
        _dir: dir,
        loc,
        gate,
        store,
        prompts,
    }
}

fn call<'a>(loc: &'a Location, session: &'a str, input: &'a serde_json::Value) -> GateCall<'a> {
    GateCall {
        tool: "edit",
        input,
        location: loc,
        session_id: session,
        call_id: "c1",
        preview: None,
    }
}

fn edit_req(loc: &Location, rel: &str) -> PermissionRequest {
    let p = loc.root().join(rel);
    PermissionRequest::path("edit", p.display().to_string(), Risk::Write)
        .with_save_pattern(Some(format!("{}/*", p.parent().unwrap().display())))
}

fn net_req(host: &str) -> PermissionRequest {
    PermissionRequest::url("webfetch", format!("https://{host}/x"), Risk::Network)
        .with_save_pattern(Some(format!("https://{host}/*")))
}

async fn evaluate_and_resolve(
    gate: &PolicyGate,
    c: &GateCall<'_>,
    reqs: Vec<PermissionRequest>,
) -> Vec<Decision> {
    let judged = gate.evaluate(c, reqs).unwrap();
    gate.resolve(c, &judged, &CancellationToken::new())
        .await
        .unwrap()
}

#[tokio::test]
async fn once_allows_only_this_call() {
    let mut s = setup("");
    let input = json!({});
    let c = call(&s.loc, "s1", &input);
    let gate = s.gate.clone();
    let reqs = vec![edit_req(&s.loc, "src/a.rs")];
    let task = tokio::spawn({
        let loc = s.loc.clone();
        async move {
            let input = json!({});
            let c = call(&loc, "s1", &input);
            evaluate_and_resolve(&gate, &c, reqs).await
        }
    });
    let (prompt, answer) = s.prompts.recv().await.unwrap();
    assert_eq!(prompt.items.len(), 1);
    assert_eq!(prompt.items[0].action, "edit");
    assert!(prompt.offer_always && prompt.offer_session);
    answer.send(Answer::Once).unwrap();
    let finals = task.await.unwrap();
    assert_eq!(finals[0].effect, Effect::Allow);
    assert_eq!(finals[0].source, DecisionSource::User);
    // Not remembered: the next identical call asks again.
    let judged = s
        .gate
        .evaluate(&c, vec![edit_req(&s.loc, "src/a.rs")])
        .unwrap();
    assert_eq!(judged[0].decision.effect, Effect::Ask);
    assert_eq!(s.store.saves.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn session_approval_covers_the_session_only() {
    let mut s = setup("");
    let gate = s.gate.clone();
    let loc = s.loc.clone();
    let task = tokio::spawn(async move {
        let input = json!({});
        evaluate_and_resolve(
            &gate,
            &call(&loc, "s1", &input),
            vec![edit_req(&loc, "src/a.rs")],
        )
        .await
    });
    let (_, answer) = s.prompts.recv().await.unwrap();
    answer.send(Answer::Session).unwrap();
    assert_eq!(task.await.unwrap()[0].effect, Effect::Allow);
    let input = json!({});
    let judged = s
        .gate
        .evaluate(
            &call(&s.loc, "s1", &input),
            vec![edit_req(&s.loc, "src/b.rs")],
        )
        .unwrap();
    assert_eq!(judged[0].decision.effect, Effect::Allow);
    assert_eq!(judged[0].decision.source, DecisionSource::Session);
    let judged = s
        .gate
        .evaluate(
            &call(&s.loc, "s2", &input),
            vec![edit_req(&s.loc, "src/b.rs")],
        )
        .unwrap();
    assert_eq!(
        judged[0].decision.effect,
        Effect::Ask,
        "another session is not covered"
    );
    // A sibling pattern does not reach into subdirectories.
    let judged = s
        .gate
        .evaluate(
            &call(&s.loc, "s1", &input),
            vec![edit_req(&s.loc, "src/x/b.rs")],
        )
        .unwrap();
    assert_eq!(judged[0].decision.effect, Effect::Ask);
}

#[tokio::test]
async fn always_is_saved_deduplicated_and_used_by_later_sessions() {
    let mut s = setup("");
    for _ in 0..2 {
        let gate = s.gate.clone();
        let loc = s.loc.clone();
        let task = tokio::spawn(async move {
            let input = json!({});
            evaluate_and_resolve(&gate, &call(&loc, "s1", &input), vec![net_req("docs.rs")]).await
        });
        // The second round is answered by the saved approval without a prompt.
        tokio::select! {
            Some((_, answer)) = s.prompts.recv() => answer.send(Answer::Always).unwrap(),
            finals = task => { assert_eq!(finals.unwrap()[0].source, DecisionSource::Saved); continue; }
        }
    }
    assert_eq!(s.store.rows.lock().unwrap().len(), 1);
    let row = s.store.rows.lock().unwrap()[0].clone();
    assert_eq!(
        (row.action.as_str(), row.pattern.as_str()),
        ("webfetch", "https://docs.rs/*")
    );
    assert_eq!(row.project, s.loc.root().display().to_string());
    let input = json!({});
    let judged = s
        .gate
        .evaluate(&call(&s.loc, "other", &input), vec![net_req("docs.rs")])
        .unwrap();
    assert_eq!(judged[0].decision.source, DecisionSource::Saved);
}

#[tokio::test]
async fn saved_approval_loses_to_deny_and_force_ask() {
    let s = setup(
        "[permission.webfetch]\n\"https://evil.example/*\" = \"deny\"\n\"https://docs.rs/*\" = \"ask!\"\n",
    );
    let project = s.loc.root().display().to_string();
    s.store
        .save(&project, "webfetch", "https://evil.example/*")
        .unwrap();
    s.store
        .save(&project, "webfetch", "https://docs.rs/*")
        .unwrap();
    let input = json!({});
    let c = call(&s.loc, "s1", &input);
    let judged = s.gate.evaluate(&c, vec![net_req("evil.example")]).unwrap();
    assert_eq!(judged[0].decision.effect, Effect::Deny);
    let judged = s.gate.evaluate(&c, vec![net_req("docs.rs")]).unwrap();
    assert_eq!(judged[0].decision.effect, Effect::Ask);
    assert_eq!(judged[0].decision.source, DecisionSource::Rule);
}

#[tokio::test]
async fn force_ask_offers_no_always_and_saves_nothing() {
    let mut s = setup("[permission.webfetch]\n\"https://docs.rs/*\" = \"ask!\"\n");
    let gate = s.gate.clone();
    let loc = s.loc.clone();
    let task = tokio::spawn(async move {
        let input = json!({});
        evaluate_and_resolve(&gate, &call(&loc, "s1", &input), vec![net_req("docs.rs")]).await
    });
    let (prompt, answer) = s.prompts.recv().await.unwrap();
    assert!(!prompt.offer_always && !prompt.offer_session);
    answer.send(Answer::Always).unwrap();
    let finals = task.await.unwrap();
    assert_eq!(finals[0].effect, Effect::Allow, "answered once");
    assert_eq!(s.store.saves.load(Ordering::SeqCst), 0);
    let input = json!({});
    let judged = s
        .gate
        .evaluate(&call(&s.loc, "s1", &input), vec![net_req("docs.rs")])
        .unwrap();
    assert_eq!(judged[0].decision.effect, Effect::Ask);
}

#[tokio::test]
async fn destructive_is_asked_again_right_after_an_identical_approval() {
    let mut s = setup("");
    let rm = || {
        PermissionRequest::path("edit", "/ws/x", Risk::Destructive)
            .with_save_pattern(Some("/ws/*".into()))
    };
    for round in 0..2 {
        let gate = s.gate.clone();
        let loc = s.loc.clone();
        let req = rm();
        let task = tokio::spawn(async move {
            let input = json!({});
            evaluate_and_resolve(&gate, &call(&loc, "s1", &input), vec![req]).await
        });
        let (prompt, answer) = s.prompts.recv().await.unwrap();
        assert!(!prompt.offer_always, "round {round}");
        answer.send(Answer::Always).unwrap();
        assert_eq!(task.await.unwrap()[0].effect, Effect::Allow);
    }
    assert_eq!(s.store.saves.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn always_cascades_to_pending_asks_it_now_allows() {
    let mut s = setup("");
    let spawn = |host: &'static str, session: &'static str| {
        let gate = s.gate.clone();
        let loc = s.loc.clone();
        tokio::spawn(async move {
            let input = json!({});
            evaluate_and_resolve(&gate, &call(&loc, session, &input), vec![net_req(host)]).await
        })
    };
    let first = spawn("docs.rs", "s1");
    let (_, a1) = s.prompts.recv().await.unwrap();
    let second = spawn("docs.rs", "s1");
    let (_, _a2) = s.prompts.recv().await.unwrap();
    let other_host = spawn("crates.io", "s1");
    let (_, a3) = s.prompts.recv().await.unwrap();
    a1.send(Answer::Always).unwrap();
    assert_eq!(first.await.unwrap()[0].source, DecisionSource::User);
    let d = tokio::time::timeout(Duration::from_secs(5), second)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(d[0].effect, Effect::Allow);
    assert_eq!(d[0].source, DecisionSource::Saved);
    // The ask for another host is still waiting for its own answer.
    assert!(!other_host.is_finished(), "{:?}", other_host.await);
    a3.send(Answer::Reject {
        message: Some("not that one".into()),
    })
    .unwrap();
    let d = other_host.await.unwrap();
    assert_eq!(d[0].effect, Effect::Deny);
    assert_eq!(d[0].feedback.as_deref(), Some("not that one"));
}

#[tokio::test]
async fn reject_with_message_is_feedback_and_leaves_others_pending() {
    let mut s = setup("");
    let spawn = |rel: &'static str| {
        let gate = s.gate.clone();
        let loc = s.loc.clone();
        tokio::spawn(async move {
            let input = json!({});
            evaluate_and_resolve(&gate, &call(&loc, "s1", &input), vec![edit_req(&loc, rel)]).await
        })
    };
    let first = spawn("src/a.rs");
    let (_, a1) = s.prompts.recv().await.unwrap();
    let second = spawn("src/b.rs");
    let (_, a2) = s.prompts.recv().await.unwrap();
    a1.send(Answer::Reject {
        message: Some("use the helper instead".into()),
    })
    .unwrap();
    let d = first.await.unwrap();
    assert_eq!(
        (d[0].effect, d[0].source),
        (Effect::Deny, DecisionSource::User)
    );
    assert_eq!(d[0].feedback.as_deref(), Some("use the helper instead"));
    assert!(!second.is_finished());
    a2.send(Answer::Once).unwrap();
    assert_eq!(second.await.unwrap()[0].effect, Effect::Allow);
}

#[tokio::test]
async fn reject_without_message_rejects_the_sessions_other_asks() {
    let mut s = setup("");
    let spawn = |rel: &'static str, session: &'static str| {
        let gate = s.gate.clone();
        let loc = s.loc.clone();
        tokio::spawn(async move {
            let input = json!({});
            evaluate_and_resolve(
                &gate,
                &call(&loc, session, &input),
                vec![edit_req(&loc, rel)],
            )
            .await
        })
    };
    let first = spawn("src/a.rs", "s1");
    let (_, a1) = s.prompts.recv().await.unwrap();
    let second = spawn("src/b.rs", "s1");
    let (_, _a2) = s.prompts.recv().await.unwrap();
    let elsewhere = spawn("src/c.rs", "s2");
    let (_, a3) = s.prompts.recv().await.unwrap();
    a1.send(Answer::Reject { message: None }).unwrap();
    let d = first.await.unwrap();
    assert_eq!(d[0].effect, Effect::Deny);
    assert!(d[0].feedback.is_none());
    let d = tokio::time::timeout(Duration::from_secs(5), second)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (d[0].effect, d[0].source),
        (Effect::Deny, DecisionSource::User)
    );
    assert!(
        d[0].reason.contains("rejected along with"),
        "{}",
        d[0].reason
    );
    assert!(!elsewhere.is_finished(), "another session is untouched");
    a3.send(Answer::Once).unwrap();
    assert_eq!(elsewhere.await.unwrap()[0].effect, Effect::Allow);
}

fn silent_gate(config: &str) -> (tempfile::TempDir, Location, PolicyGate, Arc<Notify>) {
    let dir = tempfile::tempdir().unwrap();
    let loc = Location::new(dir.path()).unwrap();
    let policy = Policy::from_texts(
        loc.root(),
        Path::new("/home/u"),
        &[("p.toml", Layer::Project, config)],
        None,
    )
    .unwrap();
    let asked = Arc::new(Notify::new());
    let gate = PolicyGate::new(
        policy,
        Arc::new(MemoryStore::default()),
        Arc::new(Silent(asked.clone())),
    );
    (dir, loc, gate, asked)
}

#[tokio::test]
async fn timeout_denies_with_source_timeout() {
    let (_d, loc, gate, _) = silent_gate("timeout = 0.05\n");
    let input = json!({});
    let c = call(&loc, "s1", &input);
    let started = std::time::Instant::now();
    let finals = evaluate_and_resolve(&gate, &c, vec![net_req("docs.rs")]).await;
    assert_eq!(
        (finals[0].effect, finals[0].source),
        (Effect::Deny, DecisionSource::Timeout)
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // The gate's own override beats the config.
    let (_d, loc, gate, _) = silent_gate("");
    let gate = gate.with_timeout(Duration::from_millis(20));
    let c = call(&loc, "s1", &input);
    let finals = evaluate_and_resolve(&gate, &c, vec![net_req("docs.rs")]).await;
    assert_eq!(finals[0].source, DecisionSource::Timeout);
}

#[tokio::test]
async fn cancel_denies_promptly() {
    let (_d, loc, gate, asked) = silent_gate("");
    let gate = Arc::new(gate);
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let gate = gate.clone();
        let cancel = cancel.clone();
        async move {
            let input = json!({});
            let c = call(&loc, "s1", &input);
            let judged = gate.evaluate(&c, vec![net_req("docs.rs")]).unwrap();
            gate.resolve(&c, &judged, &cancel).await.unwrap()
        }
    });
    asked.notified().await;
    cancel.cancel();
    let finals = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(finals[0].effect, Effect::Deny);
    assert!(finals[0].reason.contains("cancelled"));
}

#[tokio::test]
async fn allow_and_deny_keep_their_decisions_and_a_deny_skips_asking() {
    let (_d, loc, gate, _) =
        silent_gate("[permission.webfetch]\n\"https://evil.example/*\" = \"deny\"\n");
    let input = json!({});
    let c = call(&loc, "s1", &input);
    let read = PermissionRequest::path(
        "read",
        loc.root().join("a").display().to_string(),
        Risk::Read,
    );
    let judged: Vec<Judged> = gate
        .evaluate(&c, vec![read, net_req("docs.rs"), net_req("evil.example")])
        .unwrap();
    let effects: Vec<Effect> = judged.iter().map(|j| j.decision.effect).collect();
    assert_eq!(effects, [Effect::Allow, Effect::Ask, Effect::Deny]);
    // Nobody is asked (the silent channel would hang): the call is refused anyway.
    let finals = gate
        .resolve(&c, &judged, &CancellationToken::new())
        .await
        .unwrap();
    let effects: Vec<Effect> = finals.iter().map(|d| d.effect).collect();
    assert_eq!(effects, [Effect::Allow, Effect::Deny, Effect::Deny]);
}

#[tokio::test]
async fn reload_keeps_the_last_valid_policy() {
    let (_d, loc, gate, _) = silent_gate("[permission]\nwebfetch = \"deny\"\n");
    let input = json!({});
    let c = call(&loc, "s1", &input);
    assert!(gate.denies_wholesale("webfetch"));
    let bad = loc.root().join("bad.toml");
    std::fs::write(&bad, "[permission]\nwebfetch = \"nope\"\n").unwrap();
    let mut sources = PolicySources::bare(loc.root(), "/home/u");
    sources.session_files = vec![bad.clone()];
    let e = gate.reload(&sources).unwrap_err();
    assert_eq!(e.line, 2);
    let judged = gate.evaluate(&c, vec![net_req("docs.rs")]).unwrap();
    assert_eq!(
        judged[0].decision.effect,
        Effect::Deny,
        "old policy still in force"
    );
    std::fs::write(&bad, "[permission]\nwebfetch = \"allow\"\n").unwrap();
    gate.reload(&sources).unwrap();
    let judged = gate.evaluate(&c, vec![net_req("docs.rs")]).unwrap();
    assert_eq!(judged[0].decision.effect, Effect::Allow);
    assert!(!gate.denies_wholesale("webfetch"));
}

#[tokio::test]
async fn channel_failure_denies() {
    let dir = tempfile::tempdir().unwrap();
    let loc = Location::new(dir.path()).unwrap();
    let policy = Policy::from_texts(loc.root(), Path::new("/home/u"), &[], None).unwrap();
    let gate = PolicyGate::new(policy, Arc::new(MemoryStore::default()), Arc::new(Nobody));
    let input = json!({});
    let finals =
        evaluate_and_resolve(&gate, &call(&loc, "s", &input), vec![net_req("docs.rs")]).await;
    assert_eq!(finals[0].effect, Effect::Deny);
    assert!(finals[0].reason.contains("no terminal"));
}

/// A command the analyser cannot (or gives up trying to) describe — nested
/// past its limit, `eval` of a run-time value, a parse error; and, once the
/// analysis has a CPU budget, one "too complex to analyse" — is asked even
/// under a rule allowing every command, offers no lasting approval, saves
/// nothing when a person says "always" anyway, and is asked again next time.
#[tokio::test]
async fn a_command_that_cannot_be_analysed_is_asked_every_time_and_saves_nothing() {
    let mut s = setup("[permission.bash]\n\"*\" = \"allow\"\n");
    let deep = format!("{}cat a{}", "$(echo ".repeat(40), ")".repeat(40));
    let cases = [
        deep.as_str(),
        "eval \"$CMD\"",
        "ls ( )",
        "$(printf %s \"$X\") -rf .",
    ];
    for command in cases {
        for round in 0..2 {
            let gate = s.gate.clone();
            let loc = s.loc.clone();
            let request = PermissionRequest::command("bash", command, Risk::Execute)
                .with_cwd(loc.root().display().to_string());
            let judged = gate
                .evaluate(&call(&loc, "s1", &json!({})), vec![request.clone()])
                .unwrap();
            assert!(
                judged.iter().any(|j| j.decision.effect == Effect::Ask),
                "{command:?} round {round}: not asked"
            );
            let task = tokio::spawn(async move {
                let input = json!({});
                evaluate_and_resolve(&gate, &call(&loc, "s1", &input), vec![request]).await
            });
            let (prompt, answer) = s.prompts.recv().await.expect("asked");
            assert!(
                !prompt.offer_always && !prompt.offer_session,
                "{command:?}: a lasting approval offered"
            );
            // A client that offers "always" regardless: still only this once.
            answer.send(Answer::Always).unwrap();
            let finals = task.await.unwrap();
            assert!(
                finals.iter().all(|d| d.effect == Effect::Allow),
                "{finals:?}"
            );
        }
    }
    assert_eq!(
        s.store.saves.load(Ordering::SeqCst),
        0,
        "an approval was saved"
    );
    assert!(s.store.rows.lock().unwrap().is_empty());
}

#[test]
fn only_requests_without_a_shell_command_are_judged_on_the_calling_task() {
    // A shell command's analysis can take up to its CPU budget, so the
    // pipeline judges it on the blocking pool; a path or a URL is quick.
    let s = setup("");
    let command = PermissionRequest::command("bash", "ls -la src", Risk::Read);
    assert!(
        s.gate
            .judges_quickly(&[edit_req(&s.loc, "src/a.rs"), net_req("example.com")])
    );
    assert!(!s.gate.judges_quickly(std::slice::from_ref(&command)));
    assert!(
        !s.gate
            .judges_quickly(&[edit_req(&s.loc, "src/a.rs"), command])
    );
}

#[tokio::test]
async fn a_form_declined_by_the_client_itself_is_recorded_as_the_clients() {
    let mut s = setup("");
    let gate = s.gate.clone();
    let loc = s.loc.clone();
    let task = tokio::spawn(async move {
        let input = json!({});
        evaluate_and_resolve(
            &gate,
            &call(&loc, "s1", &input),
            vec![edit_req(&loc, "src/a.rs")],
        )
        .await
    });
    let (prompt, answer) = s.prompts.recv().await.unwrap();
    // The prompt shows what "always" would save.
    assert!(prompt.items[0].save_pattern.is_some());
    answer
        .send(Answer::ClientDeclined {
            why: "the MCP client answered `decline` 2 ms after the form was sent".into(),
        })
        .unwrap();
    let d = task.await.unwrap();
    assert_eq!(
        (d[0].effect, d[0].source),
        (Effect::Deny, DecisionSource::Client)
    );
    assert_eq!(d[0].source.as_str(), "client");
    assert!(
        d[0].reason
            .contains("declined by the approval client itself, without asking the person"),
        "{}",
        d[0].reason
    );
    assert!(
        !d[0].reason.contains("rejected by the user"),
        "{}",
        d[0].reason
    );
    assert!(s.store.list_all().unwrap().is_empty());
}
