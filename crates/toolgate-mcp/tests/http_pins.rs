//! Pinning over streamable HTTP hashes each definition as the server sent it:
//! a member rmcp's model does not know (an `x-` member) is pinned too, so
//! adding or changing one withholds the tool, whether the server answers
//! `tools/list` with a JSON body or with server-sent events.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use toolgate_core::Registry;
use toolgate_mcp::gateway::config::parse_toml_upstreams;
use toolgate_mcp::gateway::{Gateway, PinStore};

use crate::pins::approve_read;

/// A minimal streamable HTTP MCP server whose one tool carries `x-note`.
struct Mock {
    /// The `x-note` member's value; `None` leaves the member out.
    note: Mutex<Option<String>>,
    /// Answer with server-sent events instead of a JSON body.
    sse: bool,
}

async fn answer(State(mock): State<Arc<Mock>>, body: Bytes) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap();
    let Some(id) = message.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "mock", "version": "1"}
        }),
        Some("tools/list") => {
            let mut tool = json!({
                "name": "echo",
                "description": "Echoes its text.",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}
            });
            if let Some(note) = mock.note.lock().unwrap().clone() {
                tool["x-note"] = Value::String(note);
            }
            json!({"tools": [tool]})
        }
        _ => {
            let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no such method"}});
            return (
                [(header::CONTENT_TYPE, "application/json")],
                error.to_string(),
            )
                .into_response();
        }
    };
    let text = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    if mock.sse {
        (
            [(header::CONTENT_TYPE, "text/event-stream")],
            format!("event: message\ndata: {text}\n\n"),
        )
            .into_response()
    } else {
        ([(header::CONTENT_TYPE, "application/json")], text).into_response()
    }
}

/// Serves `mock` on a free loopback port; returns its endpoint URL.
async fn serve(mock: Arc<Mock>) -> String {
    let app = Router::new()
        .route(
            "/mcp",
            post(answer)
                .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
                .delete(|| async { StatusCode::OK }),
        )
        .with_state(mock);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://127.0.0.1:{port}/mcp")
}

/// What a fresh gateway session withholds of the mock's tools.
async fn withheld(url: &str, pins: &PinStore, cwd: &std::path::Path) -> Vec<String> {
    let configs =
        parse_toml_upstreams(&format!("[upstreams.h]\nurl = \"{url}\"\n"), "test").unwrap();
    let gateway = Gateway::start(configs, Registry::new(), pins.clone(), cwd, None)
        .await
        .unwrap();
    gateway
        .withheld()
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_x_member_added_over_streamable_http_is_detected() {
    for sse in [false, true] {
        let mock = Arc::new(Mock {
            note: Mutex::new(None),
            sse,
        });
        let url = serve(Arc::clone(&mock)).await;
        let dir = tempfile::tempdir().unwrap();
        let pins = PinStore::new(dir.path().join("pins.json"));
        assert!(
            withheld(&url, &pins, dir.path()).await.is_empty(),
            "first sight pins"
        );
        assert!(
            withheld(&url, &pins, dir.path()).await.is_empty(),
            "unchanged (sse {sse})"
        );
        *mock.note.lock().unwrap() = Some("added".into());
        assert_eq!(
            withheld(&url, &pins, dir.path()).await,
            ["h__echo"],
            "added (sse {sse})"
        );
        assert!(approve_read(&pins, "h"));
        assert!(
            withheld(&url, &pins, dir.path()).await.is_empty(),
            "approved (sse {sse})"
        );
        *mock.note.lock().unwrap() = Some("changed".into());
        assert_eq!(
            withheld(&url, &pins, dir.path()).await,
            ["h__echo"],
            "changed (sse {sse})"
        );
    }
}
