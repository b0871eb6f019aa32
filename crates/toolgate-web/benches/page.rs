//! How fast the page answers with a realistic audit log behind it: the audit view
//! (newest 200 events + `log verify` over the whole log), the same with a tool
//! filter (read in full, filtered in memory), the pending page with 10 asks, and
//! one ask answered over HTTP end to end. Real server on 127.0.0.1, real client.
//!
//! `cargo bench -p toolgate-web --bench page`

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use futures::future::join_all;
use toolgate_core::{Effect, Event, EventKind, EventPayload, EventSink, Risk};
use toolgate_policy::approvals::{ApprovalChannel, AskPrompt};
use toolgate_policy::test_util::ask_about;
use toolgate_store::{Durability, EventLog, LogQuery, SqliteApprovals};
use toolgate_web::{WebApprovals, WebState, serve_standalone};

const EVENTS: usize = 20_000;
const TOOLS: [&str; 4] = ["bash", "edit", "read", "write"];

fn event(i: usize) -> Event {
    let tool = TOOLS[i % TOOLS.len()];
    Event::now(
        EventKind::PermissionResolved,
        format!("s{}", i / 500),
        format!("c{i}"),
        EventPayload {
            tool: Some(tool.into()),
            action: Some(tool.into()),
            resource: Some(format!("/ws/src/file{i}.rs")),
            decision: Some(if i.is_multiple_of(7) {
                Effect::Deny
            } else {
                Effect::Allow
            }),
            reason: Some("rule allows it".into()),
            ..EventPayload::default()
        },
    )
}

fn prompt(i: usize) -> AskPrompt {
    let resource = format!("cargo test -p crate{i}");
    AskPrompt {
        session_id: "bench".into(),
        timeout_ms: 600_000,
        ..ask_about(
            &format!("ask{i}"),
            "bash",
            Risk::Execute,
            &resource,
            "runs a program",
        )
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let audit_db = dir.path().join("events.db");
    rt.block_on(async {
        let log = EventLog::open(&audit_db, Durability::Normal).expect("log");
        for chunk in (0..EVENTS).collect::<Vec<_>>().chunks(1000) {
            for r in join_all(chunk.iter().map(|&i| log.submit(event(i)))).await {
                r.expect("submit");
            }
        }
        log.close().expect("close");
    });
    let approvals = WebApprovals::new();
    let token = "bench-token".to_string();
    let state = WebState {
        approvals: approvals.clone(),
        events: Arc::new(LogQuery::new(audit_db)),
        store: Arc::new(SqliteApprovals::open(dir.path().join("state.db")).expect("store")),
        token: token.clone(),
        allowed_hosts: Vec::new(),
    };
    let (addr, _server) = rt
        .block_on(serve_standalone(
            "127.0.0.1:0".parse().expect("addr"),
            state,
        ))
        .expect("serve");
    let base = format!("http://{addr}");
    let cookie = format!("toolgate_web_{}={token}", addr.port());
    // Needed when the workspace build enables reqwest's rustls without a provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let get = |path: &str| {
        let request = client
            .get(format!("{base}{path}"))
            .header("cookie", &cookie);
        async move {
            let r = request.send().await.expect("send");
            assert!(r.status().is_success());
            r.bytes().await.expect("body").len()
        }
    };

    let mut group = c.benchmark_group("web");
    group.sample_size(20);
    group.bench_function("audit_newest_200_with_verify_20k", |b| {
        b.iter(|| rt.block_on(get("/approvals/audit")))
    });
    group.bench_function("audit_tool_filter_20k", |b| {
        b.iter(|| rt.block_on(get("/approvals/audit?tool=edit&decision=deny")))
    });
    let waiting: Vec<_> = (0..10)
        .map(|i| {
            let channel = approvals.clone();
            rt.spawn(async move { channel.ask(&prompt(i)).await })
        })
        .collect();
    while approvals.pending().len() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    group.bench_function("pending_page_10_asks", |b| b.iter(|| rt.block_on(get("/"))));
    group.bench_function("ask_answered_over_http", |b| {
        b.iter(|| {
            rt.block_on(async {
                let channel = approvals.clone();
                let asked = tokio::spawn(async move { channel.ask(&prompt(99)).await });
                let id = loop {
                    if let Some(a) = approvals
                        .pending()
                        .iter()
                        .find(|a| a.prompt.call_id == "ask99")
                    {
                        break a.id;
                    }
                    tokio::task::yield_now().await;
                };
                let r = client
                    .post(format!("{base}/approvals/pending/{id}/answer"))
                    .header("cookie", &cookie)
                    .header("origin", &base)
                    .header("accept", "application/json")
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body("answer=once")
                    .send()
                    .await
                    .expect("answer");
                assert!(r.status().is_success());
                asked.await.expect("join").expect("answer")
            })
        })
    });
    group.finish();
    for w in waiting {
        w.abort();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
