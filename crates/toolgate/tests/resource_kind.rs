//! A tool that is not built in, whose request names a path, is judged as
//! `read` is: the gate follows the request's resource kind, not the tool's
//! name. Both tools run through the real pipeline and the real policy gate,
//! and every decision recorded for them is compared.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate_core::test_util::{MemorySink, call};
use toolgate_core::{
    Engine, EventKind, Location, PermissionRequest, Registry, Risk, Tool, ToolContext, ToolError,
    ToolSet,
};
use toolgate_policy::approvals::Answer;
use toolgate_policy::gate::PolicyGate;
use toolgate_policy::policy::Policy;
use toolgate_policy::test_util::RecordingChannel;
use toolgate_store::{SpillStore, SqliteApprovals};

/// An embedder's tool: opens a document by path, asking for its own action.
struct OpenDoc;

#[derive(Deserialize, JsonSchema)]
struct OpenDocIn {
    path: String,
}

#[derive(Serialize, JsonSchema)]
struct OpenDocOut {
    bytes: u64,
}

impl Tool for OpenDoc {
    type Input = OpenDocIn;
    type Output = OpenDocOut;
    fn description(&self) -> String {
        "Opens a document.".into()
    }
    fn intent(&self, i: &OpenDocIn, loc: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        let resolved = loc.resolve(&i.path)?;
        Ok(vec![PermissionRequest::path(
            "open_doc",
            resolved.path.display().to_string(),
            Risk::Read,
        )])
    }
    async fn execute(&self, i: OpenDocIn, ctx: ToolContext) -> Result<OpenDocOut, ToolError> {
        let path = ctx.location.resolve(&i.path)?.path;
        let meta = std::fs::metadata(&path).map_err(|e| ToolError::io("stat", e))?;
        Ok(OpenDocOut { bytes: meta.len() })
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    home: PathBuf,
    out: PathBuf,
    engine: Engine,
    events: Arc<MemorySink>,
    asked: Arc<RecordingChannel>,
    location: Arc<Location>,
    _registrations: Vec<toolgate_core::Registration>,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (ws, home, out) = (base.join("ws"), base.join("home"), base.join("outside"));
    write(&ws.join("src/a.txt"), "hello\n");
    write(&ws.join(".env"), "TOKEN=secret\n");
    write(&home.join(".ssh/id_rsa"), "-----BEGIN KEY-----\n");
    write(&out.join("notes.txt"), "elsewhere\n");
    let location = Arc::new(Location::new(&ws).unwrap());
    let policy = Policy::from_texts(&ws, &home, &[], None).unwrap();
    let approvals = Arc::new(SqliteApprovals::open(base.join("state.db")).unwrap());
    // Refuses every ask, recording what it was asked.
    let asked = Arc::new(RecordingChannel::answering(Answer::Reject {
        message: Some("no".into()),
    }));
    let gate = Arc::new(PolicyGate::new(policy, approvals, asked.clone()));
    let registry = Registry::new();
    let mut registrations =
        toolgate_tools::register_builtins(&registry, &toolgate_tools::BuiltinConfig::default())
            .unwrap();
    registrations.push(registry.register("open_doc", OpenDoc).unwrap());
    let events = Arc::new(MemorySink::default());
    let engine = Engine::new(
        ToolSet::new(Registry::new(), registry),
        gate,
        events.clone(),
        Arc::new(SpillStore::new(base.join("data"))),
    );
    Setup {
        _dir: dir,
        ws,
        home,
        out,
        engine,
        events,
        asked,
        location,
        _registrations: registrations,
    }
}

/// Everything the gate said about one call, with the tool's own action
/// written as `read`: each recorded decision, what a person was asked, and
/// how the call ended.
#[derive(Debug, PartialEq)]
struct Judgement {
    resolved: Vec<Value>,
    asked: Vec<Vec<(String, String, Risk, String)>>,
    outcome: String,
}

async fn judge(s: &Setup, tool: &str, path: &str, call_id: &str) -> Judgement {
    let asked_before = s.asked.count();
    let catalogue = s.engine.materialize();
    let call = call(tool, json!({ "path": path }), call_id);
    let result = s
        .engine
        .settle(
            &catalogue,
            call,
            Arc::clone(&s.location),
            CancellationToken::new(),
        )
        .await;
    // The tool's own action, wherever it is named, reads as `read`.
    let as_read = |text: &str| text.replace(tool, "read");
    let resolved = s
        .events
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.call_id == call_id && e.kind == EventKind::PermissionResolved)
        .map(|e| {
            let p = &e.payload;
            json!({
                "action": as_read(p.action.as_deref().unwrap_or_default()),
                "resource": p.resource,
                "risk": p.risk_at_decision,
                "suggested": p.suggested_decision,
                "decision": p.decision,
                "source": p.sourced_from,
                "reason": p.reason.as_deref().map(as_read),
                "rule": p.rule,
            })
        })
        .collect();
    let asked = s.asked.prompts()[asked_before..]
        .iter()
        .map(|prompt| {
            prompt
                .items
                .iter()
                .map(|i| {
                    (
                        as_read(&i.action),
                        i.resource.clone(),
                        i.risk,
                        as_read(&i.reason),
                    )
                })
                .collect()
        })
        .collect();
    let outcome = match result {
        Ok(_) => "ran".to_string(),
        Err(e) => as_read(&e.to_string()),
    };
    Judgement {
        resolved,
        asked,
        outcome,
    }
}

/// Credentials (in the home and in the workspace), a file outside the
/// location and a plain file inside: the embedder's tool gets exactly the
/// decisions `read` gets.
#[tokio::test]
async fn a_tool_with_a_path_resource_is_judged_as_read_is() {
    let s = setup();
    let cases = [
        s.home.join(".ssh/id_rsa").display().to_string(),
        ".env".to_string(),
        s.ws.join(".env").display().to_string(),
        s.out.join("notes.txt").display().to_string(),
        "src/a.txt".to_string(),
    ];
    for (n, path) in cases.iter().enumerate() {
        let read = judge(&s, "read", path, &format!("read-{n}")).await;
        let own = judge(&s, "open_doc", path, &format!("own-{n}")).await;
        assert_eq!(own, read, "{path}");
        assert!(!read.resolved.is_empty(), "{path}: nothing was decided");
    }
    // The cases mean what they say: credentials are denied without asking,
    // the file outside is asked (with `external_directory`), the plain file runs.
    for (n, path) in cases.iter().enumerate() {
        let j = judge(&s, "open_doc", path, &format!("again-{n}")).await;
        match n {
            0..=2 => {
                assert!(j.asked.is_empty(), "{path}: {j:?}");
                assert!(
                    j.resolved.iter().all(|r| r["decision"] == "deny"),
                    "{path}: {j:?}"
                );
                assert!(
                    j.resolved.iter().any(|r| r["risk"] == "credential"),
                    "{path}: {j:?}"
                );
            }
            3 => {
                assert_eq!(j.asked.len(), 1, "{path}: {j:?}");
                assert!(
                    j.asked[0]
                        .iter()
                        .any(|(action, ..)| action == "external_directory"),
                    "{path}: {j:?}"
                );
            }
            _ => assert_eq!(j.outcome, "ran", "{path}: {j:?}"),
        }
    }
}

/// The gate builds the prompt every channel gets (and the approval page's
/// live list, and the ask queue a watcher reads): a path the model chose,
/// holding a terminal escape and a right-to-left override, reached them as
/// it was. It is built with its hidden characters escaped.
#[tokio::test]
async fn the_prompt_every_channel_gets_has_the_models_escapes_made_visible() {
    let s = setup();
    let odd = s.out.join("notes\u{1b}[2K\u{202e}txt.md");
    write(&odd, "x\n");
    judge(&s, "open_doc", odd.to_str().unwrap(), "c-odd").await;
    let prompts = s.asked.prompts();
    let prompt = prompts.last().expect("asked");
    for item in &prompt.items {
        for text in [&item.resource, &item.reason] {
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{202e}'),
                "{text:?}"
            );
        }
    }
    assert!(
        prompt
            .items
            .iter()
            .any(|i| i.resource.contains("notes\\u{001B}[2K\\u{202E}txt.md")
                || i.reason.contains("\\u{202E}")),
        "{prompt:?}"
    );
}
