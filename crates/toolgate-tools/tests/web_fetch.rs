//! webfetch against real HTTP servers on 127.0.0.1, and the network guard.
//! No test sends traffic anywhere but loopback: private targets such as
//! 10.0.0.1 are refused before any connection is attempted.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;
use crate::web_support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::Env;
use tokio_util::sync::CancellationToken;
use toolgate_core::{PrepareError, Risk, Tool, ToolError, handler};
use toolgate_tools::web_tools::{
    FetchFormat, MAX_RESPONSE_BYTES, WebFetchInput, WebFetchOutput, WebFetchTool,
};
use web_support::{Reply, Server};

const PAGE: &str = "<!doctype html><html><head><title>T</title><script>alert('x')</script></head>\
    <body><h1>Hello</h1><p>Some <em>text</em> and <a href=\"/x\">a link</a>.</p></body></html>";

fn fetch_input(url: &str, format: Option<FetchFormat>) -> WebFetchInput {
    WebFetchInput {
        url: url.into(),
        format,
        timeout_ms: None,
    }
}

/// An env whose webfetch may reach private addresses (for the test servers).
fn open_env() -> Env {
    let mut env = Env::new();
    env.web.allow_private_network = true;
    env
}

async fn fetch(env: &Env, input: WebFetchInput) -> Result<WebFetchOutput, ToolError> {
    WebFetchTool::new(&env.web).execute(input, env.ctx()).await
}

fn site() -> Server {
    Server::start(|req| match req.target.as_str() {
        "/page" => Reply::ok("text/html; charset=utf-8", PAGE),
        "/plain" => Reply::ok("text/plain", "just text\n"),
        "/json" => Reply::ok("application/json", r#"{"a":1}"#),
        "/latin1" => Reply::ok("text/plain; charset=iso-8859-1", b"caf\xe9".to_vec()),
        "/png" => Reply::ok("image/png", b"\x89PNG\r\n\x1a\n\0\0".to_vec()),
        "/missing" => Reply::status(404, "nope"),
        "/r1" => Reply::redirect(301, "/r2"),
        "/r2" => Reply::redirect(302, "/page"),
        "/to-private" => Reply::redirect(302, "http://10.0.0.1/secret"),
        "/to-metadata" => Reply::redirect(307, "http://169.254.169.254/latest/meta-data/"),
        "/to-ftp" => Reply::redirect(302, "ftp://example.com/x"),
        "/stall" => Reply::Stall(Duration::from_secs(5)),
        "/huge-declared" => Reply::ok("text/plain", vec![b'a'; MAX_RESPONSE_BYTES + 1]),
        "/huge-streamed" => Reply::Endless {
            content_type: "text/plain".into(),
            chunk: vec![b'b'; 64 * 1024],
            times: 100,
        },
        "/exact-limit" => Reply::Endless {
            content_type: "text/plain".into(),
            chunk: vec![b'c'; 64 * 1024],
            times: MAX_RESPONSE_BYTES / (64 * 1024),
        },
        t if t.starts_with("/loop/") => {
            let n: u32 = t[6..].parse().unwrap_or(0);
            Reply::redirect(302, &format!("/loop/{}", n + 1))
        }
        _ => Reply::status(404, "unknown"),
    })
}

#[tokio::test]
async fn html_as_markdown_text_and_html() {
    let env = open_env();
    let server = site();
    let md = fetch(&env, fetch_input(&server.url("/page"), None))
        .await
        .unwrap();
    assert_eq!(md.status, 200);
    assert_eq!(md.format, FetchFormat::Markdown);
    assert!(md.content.contains("# Hello"), "{}", md.content);
    assert!(
        md.content.contains("*text*") && md.content.contains("[a link](/x)"),
        "{}",
        md.content
    );
    assert!(!md.content.contains("alert"), "{}", md.content);
    assert_eq!(md.bytes as usize, PAGE.len());
    assert_eq!(md.content_type.as_deref(), Some("text/html; charset=utf-8"));

    let text = fetch(
        &env,
        fetch_input(&server.url("/page"), Some(FetchFormat::Text)),
    )
    .await
    .unwrap();
    // The head (title, scripts) is not visible text.
    assert_eq!(text.content, "Hello\nSome text and a link.");

    let html = fetch(
        &env,
        fetch_input(&server.url("/page"), Some(FetchFormat::Html)),
    )
    .await
    .unwrap();
    assert_eq!(html.content, PAGE);

    let seen = server.seen();
    assert!(
        seen[0]
            .header("accept")
            .unwrap()
            .starts_with("text/markdown")
    );
    assert!(
        seen[0]
            .header("user-agent")
            .unwrap()
            .starts_with("toolgate/")
    );
}

#[tokio::test]
async fn non_html_text_is_returned_as_is() {
    let env = open_env();
    let server = site();
    let plain = fetch(&env, fetch_input(&server.url("/plain"), None))
        .await
        .unwrap();
    assert_eq!(plain.content, "just text\n");
    let json = fetch(
        &env,
        fetch_input(&server.url("/json"), Some(FetchFormat::Text)),
    )
    .await
    .unwrap();
    assert_eq!(json.content, r#"{"a":1}"#);
    let latin = fetch(&env, fetch_input(&server.url("/latin1"), None))
        .await
        .unwrap();
    assert_eq!(latin.content, "café");
}

#[tokio::test]
async fn errors_for_status_binary_and_schemes() {
    let env = open_env();
    let server = site();
    let err = fetch(&env, fetch_input(&server.url("/missing"), None))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("HTTP 404"), "{err}");
    let err = fetch(&env, fetch_input(&server.url("/png"), None))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("image/png") && err.contains("not text"),
        "{err}"
    );
    for url in [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "gopher://x",
        "javascript:alert(1)",
    ] {
        let err = fetch(&env, fetch_input(url, None))
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("unsupported URL scheme"), "{url}: {err}");
    }
    let err = fetch(&env, fetch_input(&server.url("/to-ftp"), None))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("unsupported URL scheme `ftp`"), "{err}");
    let err = fetch(&env, fetch_input("not a url", None))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid url"), "{err}");
}

#[tokio::test]
async fn follows_redirects_up_to_ten() {
    let env = open_env();
    let server = site();
    let out = fetch(&env, fetch_input(&server.url("/r1"), None))
        .await
        .unwrap();
    assert_eq!(out.redirects, vec![server.url("/r2"), server.url("/page")]);
    assert_eq!(out.final_url, server.url("/page"));
    assert!(out.content.contains("# Hello"));

    // Every /loop/N redirects again, so the 11th redirect is refused.
    let err = fetch(&env, fetch_input(&server.url("/loop/1"), None))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("too many redirects"), "{err}");
    // 1 original request + 10 followed redirects; the 11th was never made.
    assert_eq!(
        server
            .seen()
            .iter()
            .filter(|s| s.target.starts_with("/loop/"))
            .count(),
        11
    );
}

#[tokio::test]
async fn oversized_responses_are_refused() {
    let env = open_env();
    let server = site();
    let err = fetch(&env, fetch_input(&server.url("/huge-declared"), None))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("is {} bytes", MAX_RESPONSE_BYTES + 1)) && err.contains("limit"),
        "{err}"
    );
    let err = fetch(&env, fetch_input(&server.url("/huge-streamed"), None))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("larger than the limit"), "{err}");
    let exact = fetch(&env, fetch_input(&server.url("/exact-limit"), None))
        .await
        .unwrap();
    assert_eq!(exact.bytes as usize, MAX_RESPONSE_BYTES);
}

#[tokio::test]
async fn timeout_and_cancellation() {
    let env = open_env();
    let server = site();
    let mut input = fetch_input(&server.url("/stall"), None);
    input.timeout_ms = Some(300);
    let started = Instant::now();
    let err = fetch(&env, input).await.unwrap_err().to_string();
    assert!(err.contains("timed out after 300 ms"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(4)); // before the 5 s stall ends

    let cancel = CancellationToken::new();
    let tool = WebFetchTool::new(&env.web);
    let ctx = env.ctx_with(cancel.clone(), "s");
    let url = server.url("/stall");
    let call = tokio::spawn(async move { tool.execute(fetch_input(&url, None), ctx).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    cancel.cancel();
    assert!(matches!(call.await.unwrap(), Err(ToolError::Cancelled)));
}

#[tokio::test]
async fn loopback_is_refused_by_default_before_connecting() {
    let env = Env::new();
    let server = site();
    let port = server.addr.port();
    for (url, reason) in [
        (server.url("/page"), "loopback"),
        (format!("http://[::1]:{port}/page"), "loopback"),
        (format!("http://[::ffff:127.0.0.1]:{port}/page"), "loopback"),
        (format!("http://2130706433:{port}/page"), "loopback"),
        (format!("http://0.0.0.0:{port}/page"), "unspecified"),
    ] {
        let err = fetch(&env, fetch_input(&url, None))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("refusing to fetch") && err.contains(reason),
            "{url}: {err}"
        );
    }
    // A name that resolves to loopback is refused by the guarded resolver.
    let err = fetch(
        &env,
        fetch_input(&format!("http://localhost:{port}/page"), None),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("refusing to fetch localhost") && err.contains("loopback"),
        "{err}"
    );
    assert!(
        server.seen().is_empty(),
        "the server was reached: {:?}",
        server.seen()
    );
}

#[tokio::test]
async fn private_link_local_and_cgnat_are_refused_without_traffic() {
    let env = Env::new();
    for (url, reason) in [
        ("http://10.0.0.1/", "private"),
        ("http://192.168.1.1:8080/admin", "private"),
        ("http://172.16.0.1/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://100.64.0.1/", "CGNAT"),
        ("http://[fd00::1]/", "unique local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://[::ffff:10.0.0.1]/", "private"),
        ("http://224.0.0.1/", "multicast"),
    ] {
        // The guard's own message: refused on the literal address, before
        // any connection attempt (a connect failure would read differently).
        let err = fetch(&env, fetch_input(url, None))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("refusing to fetch") && err.contains(reason),
            "{url}: {err}"
        );
    }
}

#[tokio::test]
async fn redirect_from_an_allowed_host_to_private_addresses_is_refused() {
    let target = Server::start(|_| Reply::ok("text/plain", "internal secret"));
    let target_url = target.url("/secret");
    let origin = Server::start(move |req| match req.target.as_str() {
        "/ok" => Reply::ok("text/plain", "allowed"),
        "/to-private" => Reply::redirect(302, "http://10.0.0.1/secret"),
        "/to-other-port" => Reply::redirect(302, &target_url),
        "/to-metadata" => Reply::redirect(307, "http://169.254.169.254/latest/meta-data/"),
        _ => Reply::status(404, ""),
    });
    let origin_port = origin.addr.port();
    let mut env = Env::new();
    // Only this exact host:port is allowed, so the test server can be reached.
    env.web.allowed_hosts = vec![origin.host_port()];

    let ok = fetch(&env, fetch_input(&origin.url("/ok"), None))
        .await
        .unwrap();
    assert_eq!(ok.content, "allowed");

    let err = fetch(&env, fetch_input(&origin.url("/to-private"), None))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("refusing to fetch 10.0.0.1") && err.contains("private"),
        "{err}"
    );

    let err = fetch(&env, fetch_input(&origin.url("/to-metadata"), None))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("169.254.169.254") && err.contains("link-local"),
        "{err}"
    );

    // Same address, different port: not on the allow-list, so refused, and the
    // other server never sees a request.
    let err = fetch(&env, fetch_input(&origin.url("/to-other-port"), None))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("loopback"), "{err}");
    assert!(target.seen().is_empty());

    // Same port under another name: the allow-list is exact.
    let err = fetch(
        &env,
        fetch_input(&format!("http://localhost:{origin_port}/ok"), None),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.contains("refusing to fetch localhost"), "{err}");
    let origin_hits: Vec<String> = origin.seen().into_iter().map(|s| s.target).collect();
    assert_eq!(
        origin_hits,
        vec!["/ok", "/to-private", "/to-metadata", "/to-other-port"]
    );
}

#[tokio::test]
async fn schema_and_intent() {
    let env = Env::new();
    let h = handler(WebFetchTool::new(&env.web)).unwrap();
    let loc = env.location();
    let call = h
        .prepare(
            &json!({"url": "https://example.com/a?b=1", "format": "text"}),
            &loc,
        )
        .unwrap();
    let r = &call.requests[0];
    assert_eq!(
        (r.action.as_str(), r.resource.as_str(), r.risk),
        ("webfetch", "https://example.com/a?b=1", Risk::Network)
    );
    for (input, field) in [
        (json!({"url": "https://x.y", "format": "pdf"}), "format"),
        (json!({"url": "https://x.y", "headers": {}}), "headers"),
        (json!({"format": "text"}), "url"),
    ] {
        match h.prepare(&input, &loc) {
            Err(PrepareError::InvalidInput { field: f, message }) => {
                assert!(
                    f.contains(field) || message.contains(field),
                    "{f}: {message}"
                )
            }
            other => panic!("{input} accepted: {other:?}"),
        }
    }
    for (input, needle) in [
        (
            json!({"url": "https://x.y", "timeout_ms": 120_001}),
            "between 1 and 120000",
        ),
        (
            json!({"url": "file:///etc/passwd"}),
            "unsupported URL scheme",
        ),
        (json!({"url": "::"}), "invalid url"),
    ] {
        match h.prepare(&input, &loc) {
            Err(PrepareError::Intent(e)) => assert!(e.to_string().contains(needle), "{e}"),
            other => panic!("{input} accepted: {other:?}"),
        }
    }
}

#[tokio::test]
async fn https_uses_rustls() {
    // A plain-HTTP server spoken to over TLS: the handshake fails, which shows
    // the TLS client (rustls with the ring provider) is built and used.
    let server = site();
    let mut env = Env::new();
    env.web.allowed_hosts = vec![server.host_port()];
    let url = format!("https://{}/page", server.host_port());
    let err = fetch(&env, fetch_input(&url, None))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("fetching {url} failed")), "{err}");
}
