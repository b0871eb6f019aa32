//! A tool the page has never heard of describes its call, and the page shows
//! that description: the tool runs through the real pipeline and policy gate,
//! whose ask reaches the page with the tool's preview.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{COOKIE, SET_COOKIE};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate_core::{
    CallIdentity, CallRequest, Engine, Location, PermissionRequest, Preview, PreviewBody, Registry,
    Risk, Tool, ToolContext, ToolError, ToolSet,
};
use toolgate_policy::approvals::Answer;
use toolgate_policy::gate::PolicyGate;
use toolgate_policy::policy::Policy;
use toolgate_store::{Durability, EventLog, SpillStore, SqliteApprovals};
use toolgate_web::{WebApprovals, WebState, new_token, serve_standalone};

/// An embedder's tool that stamps a document: nothing in toolgate knows it.
struct Stamp;

#[derive(Deserialize, JsonSchema)]
struct StampIn {
    document: String,
    copies: u32,
    text: String,
}

#[derive(Serialize, JsonSchema)]
struct StampOut {
    stamped: u32,
}

impl Tool for Stamp {
    type Input = StampIn;
    type Output = StampOut;
    fn description(&self) -> String {
        "Stamps copies of a document.".into()
    }
    fn intent(&self, i: &StampIn, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new(
            "stamp",
            &i.document,
            Risk::Write,
        )])
    }
    fn preview(&self, i: &StampIn, _: &Location) -> Option<Preview> {
        Some(
            Preview::new("Stamp a document")
                .with_field("document", &i.document)
                .with_field("copies", i.copies.to_string())
                .with_body(PreviewBody::Text(i.text.clone())),
        )
    }
    async fn execute(&self, i: StampIn, _: ToolContext) -> Result<StampOut, ToolError> {
        Ok(StampOut { stamped: i.copies })
    }
}

#[tokio::test]
async fn the_page_shows_the_preview_of_a_tool_it_does_not_know() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let ws = base.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let location = Arc::new(Location::new(&ws).unwrap());
    let approvals = WebApprovals::new();
    let policy = Policy::from_texts(&ws, &base.join("home"), &[], None).unwrap();
    let gate = Arc::new(PolicyGate::new(
        policy,
        Arc::new(SqliteApprovals::open(base.join("state.db")).unwrap()),
        Arc::new(approvals.clone()),
    ));
    let log = Arc::new(EventLog::open(base.join("events.db"), Durability::Normal).unwrap());
    let registry = Registry::new();
    let _registration = registry.register("stamp", Stamp).unwrap();
    let engine = Engine::new(
        ToolSet::new(Registry::new(), registry),
        gate,
        log.clone(),
        Arc::new(SpillStore::new(base.join("data"))),
    );

    let token = new_token().unwrap();
    let state = WebState {
        approvals: approvals.clone(),
        events: log.clone(),
        store: Arc::new(SqliteApprovals::open(base.join("state.db")).unwrap()),
        token: token.clone(),
        allowed_hosts: Vec::new(),
    };
    let (addr, server) = serve_standalone("127.0.0.1:0".parse().unwrap(), state)
        .await
        .unwrap();

    let call = CallRequest {
        name: "stamp".into(),
        input: json!({"document": "contract.pdf", "copies": 3, "text": "APPROVED <b>now</b>"}),
        identity: CallIdentity {
            session_id: "s1".into(),
            call_id: "c1".into(),
            ..CallIdentity::default()
        },
    };
    let catalogue = engine.materialize();
    let running = {
        let engine = engine.clone();
        let location = Arc::clone(&location);
        tokio::spawn(async move {
            engine
                .settle(&catalogue, call, location, CancellationToken::new())
                .await
        })
    };
    let waited = tokio::time::timeout(Duration::from_secs(10), async {
        while approvals.pending().is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "the call was never asked about");

    // Needed when the workspace build enables reqwest's rustls without a provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let signed_in = client
        .get(format!("http://{addr}/?token={token}"))
        .send()
        .await
        .unwrap();
    let cookie = signed_in.headers()[SET_COOKIE].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_string();
    let html = client
        .get(format!("http://{addr}/"))
        .header(COOKIE, &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("<h3>Stamp a document</h3>"), "{html}");
    assert!(
        html.contains("document <code>contract.pdf</code>"),
        "{html}"
    );
    assert!(html.contains("copies <code>3</code>"), "{html}");
    assert!(
        html.contains("<pre>APPROVED &lt;b&gt;now&lt;/b&gt;</pre>"),
        "{html}"
    );
    // The preview is part of the pending ask, for the page's script and others.
    let pending: serde_json::Value = client
        .get(format!("http://{addr}/approvals/pending"))
        .header(COOKIE, &cookie)
        .header("accept", "application/json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        pending[0]["prompt"]["preview"]["title"], "Stamp a document",
        "{pending}"
    );

    let id = approvals.pending()[0].id;
    approvals.answer(id, Answer::Once, false).unwrap();
    let result = running.await.unwrap().unwrap();
    assert_eq!(result.structured.unwrap()["stamped"], 3);
    server.abort();
}
