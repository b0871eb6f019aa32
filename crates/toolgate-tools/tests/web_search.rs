//! websearch against a local server playing the Brave Search API.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;
use crate::web_support;

use serde_json::json;
use support::Env;
use toolgate_core::{PrepareError, Risk, Tool, handler};
use toolgate_tools::web_tools::{WebSearchInput, WebSearchTool};
use web_support::{Reply, Seen, Server};

const KEY: &str = "test-key-123";

fn brave(req: &Seen) -> Reply {
    if !req.target.starts_with("/res/v1/web/search?") {
        return Reply::status(404, "no such endpoint");
    }
    if req.header("x-subscription-token") != Some(KEY) {
        return Reply::status(401, r#"{"error":"unauthorized"}"#);
    }
    if req.target.contains("q=ratelimited") {
        return Reply::status(429, "slow down");
    }
    if req.target.contains("q=broken") {
        return Reply::ok("application/json", "{not json");
    }
    if req.target.contains("q=nothing") {
        return Reply::ok("application/json", r#"{"type":"search"}"#);
    }
    let body = json!({
        "type": "search",
        "web": {"results": [
            {"title": "The <strong>Rust</strong> Language", "url": "https://www.rust-lang.org/",
             "description": "A language empowering <strong>everyone</strong>.", "age": "2 days ago"},
            {"title": "Docs", "url": "https://doc.rust-lang.org/", "description": "Read &amp; learn"},
            {"title": "Crates", "url": "https://crates.io/", "description": "Packages"}
        ]}
    });
    Reply::ok("application/json", body.to_string())
}

fn env_for(server: &Server, key: Option<&str>) -> Env {
    let mut env = Env::new();
    env.web.websearch.endpoint = server.url("/res/v1/web/search");
    env.web.websearch.api_key = key.map(String::from);
    // A variable nobody sets, so the key can only come from the config.
    env.web.websearch.api_key_env = "TOOLGATE_TEST_UNSET_BRAVE_KEY".into();
    env
}

fn query(q: &str, n: Option<u32>) -> WebSearchInput {
    WebSearchInput {
        query: q.into(),
        num_results: n,
    }
}

#[tokio::test]
async fn returns_results_from_the_provider() {
    let server = Server::start(brave);
    let env = env_for(&server, Some(KEY));
    let tool = WebSearchTool::new(&env.web);
    let out = tool
        .execute(query("rust language & more", Some(2)), env.ctx())
        .await
        .unwrap();
    assert_eq!(out.provider, "Brave Search");
    assert_eq!(out.query, "rust language & more");
    assert_eq!(out.results.len(), 2);
    assert_eq!(out.results[0].title, "The Rust Language");
    assert_eq!(out.results[0].snippet, "A language empowering everyone.");
    assert_eq!(out.results[0].age.as_deref(), Some("2 days ago"));
    assert_eq!(out.results[1].snippet, "Read & learn");

    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0].target.contains("q=rust+language+%26+more"),
        "{}",
        seen[0].target
    );
    assert!(seen[0].target.contains("count=2"), "{}", seen[0].target);
    assert_eq!(seen[0].header("accept"), Some("application/json"));

    let text = tool.project(&out)[0].as_text().unwrap().to_string();
    assert!(
        text.starts_with("1. The Rust Language (2 days ago)\n   https://www.rust-lang.org/"),
        "{text}"
    );
}

#[tokio::test]
async fn without_a_key_says_how_to_configure() {
    let server = Server::start(brave);
    let env = env_for(&server, None);
    let err = WebSearchTool::new(&env.web)
        .execute(query("rust", None), env.ctx())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("websearch is not configured"), "{err}");
    assert!(
        err.contains("TOOLGATE_TEST_UNSET_BRAVE_KEY") && err.contains("websearch.api_key"),
        "{err}"
    );
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn provider_errors_are_reported() {
    let server = Server::start(brave);
    let bad_key = env_for(&server, Some("wrong"));
    let err = WebSearchTool::new(&bad_key.web)
        .execute(query("rust", None), bad_key.ctx())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("HTTP 401") && err.contains("API key was rejected"),
        "{err}"
    );

    let env = env_for(&server, Some(KEY));
    let tool = WebSearchTool::new(&env.web);
    let err = tool
        .execute(query("ratelimited", None), env.ctx())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("HTTP 429") && err.contains("rate limited"),
        "{err}"
    );
    let err = tool
        .execute(query("broken", None), env.ctx())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("unexpected response"), "{err}");
    let none = tool
        .execute(query("nothing", None), env.ctx())
        .await
        .unwrap();
    assert!(none.results.is_empty());
    assert_eq!(
        tool.project(&none)[0].as_text(),
        Some("No results for \"nothing\".")
    );

    let mut unreachable = env_for(&server, Some(KEY));
    // A port on loopback nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    unreachable.web.websearch.endpoint = format!("http://127.0.0.1:{port}/res/v1/web/search");
    let err = WebSearchTool::new(&unreachable.web)
        .execute(query("rust", None), unreachable.ctx())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("Brave Search request failed"), "{err}");
}

#[tokio::test]
async fn schema_and_intent() {
    let env = Env::new();
    let h = handler(WebSearchTool::new(&env.web)).unwrap();
    let loc = env.location();
    let call = h
        .prepare(&json!({"query": " rust async ", "num_results": 5}), &loc)
        .unwrap();
    let r = &call.requests[0];
    assert_eq!(
        (r.action.as_str(), r.resource.as_str(), r.risk),
        ("websearch", "rust async", Risk::Network)
    );
    match h.prepare(&json!({"query": "x", "limit": 3}), &loc) {
        Err(PrepareError::InvalidInput { message, .. }) => {
            assert!(message.contains("limit"), "{message}")
        }
        other => panic!("unknown field accepted: {other:?}"),
    }
    for (input, needle) in [
        (json!({"query": ""}), "query is empty"),
        (json!({"query": "x", "num_results": 0}), "between 1 and 20"),
        (json!({"query": "x", "num_results": 50}), "between 1 and 20"),
    ] {
        match h.prepare(&input, &loc) {
            Err(PrepareError::Intent(e)) => assert!(e.to_string().contains(needle), "{e}"),
            other => panic!("{input} accepted: {other:?}"),
        }
    }
}

#[test]
fn a_bad_endpoint_keeps_the_parse_error_as_the_cause() {
    use toolgate_tools::web_tools::{BraveSearch, SearchError};
    // reqwest is built without a crypto provider (as the tools install one).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let err = match BraveSearch::new(reqwest::Client::new(), "not a url", "k".into()) {
        Err(e) => e,
        Ok(_) => panic!("a bad endpoint was accepted"),
    };
    assert!(matches!(err, SearchError::Request { .. }), "{err}");
    let parse = reqwest::Url::parse("not a url").unwrap_err().to_string();
    assert_eq!(
        err.to_string(),
        format!("Brave Search request failed: invalid endpoint \"not a url\": {parse}")
    );
    // The request error, its failure, then the URL parser's own error.
    let cause = std::error::Error::source(&err).and_then(std::error::Error::source);
    assert_eq!(cause.map(ToString::to_string), Some(parse), "{err}");
}
