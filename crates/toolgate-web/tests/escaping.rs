//! Hostile text in every place a page shows outside text — a tool call's
//! arguments, a question, a saved rule, the audit log, the sign-in target and
//! an error — comes out escaped on every view.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{COOKIE, SET_COOKIE};
use serde_json::{Value, json};
use toolgate_core::{Event, EventKind, EventPayload, EventSink, Risk};
use toolgate_policy::approvals::{ApprovalChannel, ApprovalStore, AskItem, AskPrompt};
use toolgate_store::{Durability, EventLog, SqliteApprovals};
use toolgate_web::{PageQuestion, WebApprovals, WebState, new_token, serve_standalone};

const WAIT: Duration = Duration::from_secs(10);

/// A script element, a quote that would end an attribute, and the end of a
/// text area, in one string.
const HOSTILE: &str = "<script>alert(1)</script>\" onmouseover=\"alert(2)</textarea><b>x";

/// Panics if `html` shows any part of [`HOSTILE`] unescaped, or never shows it.
fn assert_escaped(view: &str, html: &str) {
    for raw in ["<script>alert", "\" onmouseover", "</textarea>", "<b>x"] {
        assert!(!html.contains(raw), "{view}: {raw:?} unescaped in\n{html}");
    }
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{view}: the hostile text is not shown escaped in\n{html}"
    );
}

/// `HOSTILE` as it is shown after JSON pretty-printing (the generic input view).
fn assert_escaped_json(view: &str, html: &str) {
    for raw in ["<script>alert", "</textarea>", "<b>x"] {
        assert!(!html.contains(raw), "{view}: {raw:?} unescaped in\n{html}");
    }
    assert!(html.contains("&lt;script&gt;"), "{view}: {html}");
    assert!(
        html.contains("\\&quot; onmouseover=\\&quot;"),
        "{view}: {html}"
    );
}

struct Page {
    _dir: tempfile::TempDir,
    approvals: WebApprovals,
    store: Arc<SqliteApprovals>,
    audit_db: std::path::PathBuf,
    token: String,
    base: String,
    client: reqwest::Client,
    cookie: String,
}

async fn start() -> Page {
    let dir = tempfile::tempdir().unwrap();
    let approvals = WebApprovals::new();
    let store = Arc::new(SqliteApprovals::open(dir.path().join("state.db")).unwrap());
    let audit_db = dir.path().join("events.db");
    let token = new_token().unwrap();
    let state = WebState {
        approvals: approvals.clone(),
        audit_db: audit_db.clone(),
        store: store.clone(),
        token: token.clone(),
        allowed_hosts: Vec::new(),
    };
    let (addr, _server) = serve_standalone("127.0.0.1:0".parse().unwrap(), state)
        .await
        .unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let base = format!("http://{addr}");
    let r = client
        .get(format!("{base}/?token={token}"))
        .send()
        .await
        .unwrap();
    let cookie = r.headers()[SET_COOKIE].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_string();
    Page {
        _dir: dir,
        approvals,
        store,
        audit_db,
        token,
        base,
        client,
        cookie,
    }
}

impl Page {
    async fn get(&self, path: &str) -> (StatusCode, String) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .header(COOKIE, &self.cookie)
            .send()
            .await
            .unwrap();
        (r.status(), r.text().await.unwrap())
    }
}

fn requested(call: &str, tool: &str, args: Value) -> Event {
    Event::now(
        EventKind::PermissionRequested,
        HOSTILE,
        call,
        EventPayload {
            tool: Some(tool.into()),
            args: Some(args),
            action: Some(HOSTILE.into()),
            resource: Some(HOSTILE.into()),
            reason: Some(HOSTILE.into()),
            preview: Some(HOSTILE.into()),
            ..EventPayload::default()
        },
    )
}

async fn write_log(path: &std::path::Path) {
    let log = EventLog::open(path, Durability::Normal).unwrap();
    let events = [
        requested(
            "bash-call",
            "bash",
            json!({"command": HOSTILE, "workdir": HOSTILE, "description": HOSTILE}),
        ),
        requested(
            "edit-call",
            "edit",
            json!({"path": HOSTILE, "old_string": HOSTILE, "new_string": "x\n"}),
        ),
        requested("other-call", "webfetch", json!({"url": HOSTILE})),
    ];
    for e in events {
        log.submit(e).await.unwrap();
    }
    log.close().unwrap();
}

fn prompt(call: &str, tool: &str) -> AskPrompt {
    AskPrompt {
        session_id: HOSTILE.into(),
        call_id: call.into(),
        tool: tool.into(),
        items: vec![AskItem {
            action: HOSTILE.into(),
            resource: HOSTILE.into(),
            risk: Risk::Write,
            reason: HOSTILE.into(),
        }],
        offer_session: true,
        offer_always: true,
        timeout_ms: 60_000,
    }
}

/// The page's card for ask `call`, from the event stream's data.
async fn card_in_stream(page: &Page, call: &str) -> String {
    let mut stream = page
        .client
        .get(format!("{}/approvals/events", page.base))
        .header(COOKIE, &page.cookie)
        .send()
        .await
        .unwrap();
    let mut buffer = String::new();
    tokio::time::timeout(WAIT, async {
        loop {
            while let Some(end) = buffer.find("\n\n") {
                let event: String = buffer.drain(..end + 2).collect();
                let data: String = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .collect();
                let Ok(data) = serde_json::from_str::<Value>(&data) else {
                    continue;
                };
                let found = data["asks"].as_array().and_then(|asks| {
                    asks.iter()
                        .find(|a| a["call_id"] == call)
                        .and_then(|a| a["html"].as_str().map(str::to_string))
                });
                if let Some(html) = found {
                    return html;
                }
            }
            let chunk = stream.chunk().await.unwrap().expect("event stream ended");
            buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    })
    .await
    .expect("the ask never showed in the event stream")
}

#[tokio::test]
async fn hostile_text_is_escaped_on_every_view() {
    let page = start().await;
    write_log(&page.audit_db).await;

    // Asks whose details come from the call's arguments in the audit log.
    let mut tasks = Vec::new();
    for (call, tool) in [
        ("bash-call", "bash"),
        ("edit-call", "edit"),
        ("other-call", "webfetch"),
    ] {
        let channel = page.approvals.clone();
        let prompt = prompt(call, tool);
        tasks.push(tokio::spawn(async move { channel.ask(&prompt).await }));
    }
    // A question with hostile text, options (attribute values) and ids.
    let channel = page.approvals.clone();
    tasks.push(tokio::spawn(async move {
        let questions = [PageQuestion {
            question: HOSTILE.into(),
            options: Some(vec![HOSTILE.into(), "plain".into()]),
        }];
        let _ = channel.ask_questions(HOSTILE, HOSTILE, &questions).await;
        Ok(toolgate_policy::approvals::Answer::Once)
    }));
    tokio::time::timeout(WAIT, async {
        while page.approvals.pending().len() < 3 || page.approvals.pending_questions().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap();
    // A saved rule.
    page.store.save(HOSTILE, HOSTILE, HOSTILE).unwrap();

    let (status, html) = page.get("/").await;
    assert_eq!(status, StatusCode::OK);
    assert_escaped("pending page", &html);
    // Each argument view rendered its detail, escaped.
    assert!(
        html.contains("<pre class=\"command\">&lt;script&gt;"),
        "{html}"
    );
    assert!(
        html.contains("<span class=\"del\">-&lt;script&gt;"),
        "{html}"
    );
    assert!(
        html.contains("value=\"&lt;script&gt;alert(1)&lt;/script&gt;&quot; onmouseover=&quot;"),
        "{html}"
    );
    for call in ["bash-call", "edit-call"] {
        assert_escaped(call, &card_in_stream(&page, call).await);
    }
    assert_escaped_json("generic input", &card_in_stream(&page, "other-call").await);

    let questions: Value = serde_json::from_str(&page.get("/approvals/questions").await.1).unwrap();
    assert_eq!(
        questions[0]["questions"][0]["question"], HOSTILE,
        "JSON stays raw"
    );

    let (status, html) = page.get("/approvals/saved").await;
    assert_eq!(status, StatusCode::OK);
    assert_escaped("saved approvals", &html);

    let (status, html) = page.get("/approvals/audit").await;
    assert_eq!(status, StatusCode::OK);
    assert_escaped("audit log", &html);
    let filter: String = form_urlencoded::byte_serialize(HOSTILE.as_bytes()).collect();
    let (status, html) = page
        .get(&format!("/approvals/audit?session={filter}&tool={filter}"))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_escaped("audit filters", &html);

    // The sign-in page carries the rest of the URL into its refresh target.
    let r = page
        .client
        .get(format!("{}/?token={}&next={filter}", page.base, page.token))
        .send()
        .await
        .unwrap();
    let html = r.text().await.unwrap();
    assert!(html.contains("http-equiv=\"refresh\""), "{html}");
    for raw in ["<script>", "\" onmouseover", "</textarea>"] {
        assert!(!html.contains(raw), "sign-in: {raw:?} in {html}");
    }

    // An error page that repeats what was sent.
    let (status, html) = page
        .get(&format!("/approvals/audit?decision={filter}"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_escaped("error page", &html);

    for task in tasks {
        task.abort();
    }
}
