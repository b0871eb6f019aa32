//! The page's protection, applied to every request before any handler:
//!
//! 1. `Host` must be loopback (`localhost`, `127.0.0.0/8`, `::1`) or one of the
//!    configured hosts — a DNS-rebinding page cannot reach us under its own name.
//! 2. A request carrying `Origin` must come from this very origin; a
//!    state-changing request (anything but GET/HEAD) must carry it.
//! 3. The token: `?token=…` on a GET is exchanged for an HttpOnly,
//!    SameSite=Strict cookie and the browser is sent on to the same URL without
//!    the token; every other request needs the cookie.
//!
//! Every response gets headers that forbid framing, sniffing, caching and
//! referrers; no CORS header is ever sent.

use std::net::IpAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::WebState;
use crate::html::message_page;

/// The content security policy of every page: our own script and style only.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Runs the three checks, then the handler, then adds the protective headers.
pub async fn protect(State(state): State<Arc<WebState>>, req: Request, next: Next) -> Response {
    let mut response = match check(&state, &req) {
        Ok(None) => next.run(req).await,
        Ok(Some(sign_in)) => sign_in,
        Err(refused) => *refused,
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, CSP),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// `Ok(None)`: go on to the handler. `Ok(Some(r))`: answer with `r` (sign-in).
/// `Err(r)`: refused.
fn check(state: &WebState, req: &Request) -> Result<Option<Response>, Box<Response>> {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .ok_or_else(|| {
            refuse(
                StatusCode::BAD_REQUEST,
                "the request has no valid Host header",
            )
        })?;
    if !host_allowed(host, &state.allowed_hosts) {
        tracing::warn!(host, "web request refused: host not allowed");
        return Err(refuse(
            StatusCode::FORBIDDEN,
            &format!(
                "host {host:?} is not allowed: the approval page answers only on loopback \
                 names or configured hosts"
            ),
        ));
    }
    let state_changing = !matches!(*req.method(), Method::GET | Method::HEAD);
    check_origin(headers, host, state_changing)?;

    if state.token.is_empty() {
        return Err(refuse(
            StatusCode::UNAUTHORIZED,
            "the approval page has no token configured, so nobody can sign in",
        ));
    }
    let cookie_name = cookie_name(host);
    if let Some(offered) = query_token(req.uri().query()).filter(|_| !state_changing) {
        if !token_matches(&offered, &state.token) {
            return Err(refuse(
                StatusCode::UNAUTHORIZED,
                "the token in the URL is wrong: open the URL toolgate printed at start",
            ));
        }
        return Ok(Some(sign_in(&cookie_name, &state.token, req)));
    }
    match cookie_value(headers, &cookie_name) {
        Some(value) if token_matches(value, &state.token) => Ok(None),
        Some(_) => Err(refuse(
            StatusCode::UNAUTHORIZED,
            "the session cookie is stale (toolgate restarted?): open the URL toolgate printed \
             at start, with its ?token=…",
        )),
        None => Err(refuse(
            StatusCode::UNAUTHORIZED,
            "this page needs the token: open the URL toolgate printed at start (it ends \
             with ?token=…)",
        )),
    }
}

/// Whether `host` (a `Host` header value, with or without port) is loopback or
/// configured. Configured entries match the name alone or `name:port`.
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let name = host_name(host);
    if name.eq_ignore_ascii_case("localhost") {
        return true;
    }
    if name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()) {
        return true;
    }
    allowed
        .iter()
        .any(|a| a.eq_ignore_ascii_case(name) || a.eq_ignore_ascii_case(host))
}

/// The name part of a `Host` value: `[::1]:80` → `::1`, `a.b:8080` → `a.b`.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// The port of a `Host` value (80 when absent), used to name the cookie so two
/// toolgate pages on one machine keep separate sessions.
fn host_port(host: &str) -> &str {
    let after_name = match host.strip_prefix('[') {
        Some(rest) => rest.split_once(']').map_or("", |(_, after)| after),
        None => host.rsplit_once(':').map_or("", |(_, port)| port),
    };
    let port = after_name.trim_start_matches(':');
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        "80"
    } else {
        port
    }
}

fn check_origin(
    headers: &HeaderMap,
    host: &str,
    state_changing: bool,
) -> Result<(), Box<Response>> {
    match headers.get(header::ORIGIN).map(|o| o.to_str()) {
        None if state_changing => Err(refuse(
            StatusCode::FORBIDDEN,
            "cross-origin check failed: a state-changing request must carry an Origin header",
        )),
        None => Ok(()),
        Some(Ok(origin)) if same_origin(origin, host) => Ok(()),
        Some(origin) => {
            let origin = origin.unwrap_or("(not text)");
            tracing::warn!(origin, host, "web request refused: cross-origin");
            Err(refuse(
                StatusCode::FORBIDDEN,
                &format!("cross-origin request refused: origin {origin:?} is not this page"),
            ))
        }
    }
}

fn same_origin(origin: &str, host: &str) -> bool {
    ["http://", "https://"].iter().any(|scheme| {
        origin
            .strip_prefix(scheme)
            .is_some_and(|authority| authority.eq_ignore_ascii_case(host))
    })
}

fn query_token(query: Option<&str>) -> Option<String> {
    form_urlencoded::parse(query?.as_bytes())
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v.into_owned())
}

fn token_matches(offered: &str, token: &str) -> bool {
    offered.as_bytes().ct_eq(token.as_bytes()).into()
}

fn cookie_name(host: &str) -> String {
    format!("toolgate_web_{}", host_port(host))
}

fn cookie_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// Sets the cookie and sends the browser on to the same URL without `token`.
///
/// A page that refreshes itself, rather than a 303, because a SameSite=Strict
/// cookie is not sent on a redirect that a cross-site click started; a refresh
/// from our own page is same-site, so the cookie arrives.
fn sign_in(cookie_name: &str, token: &str, req: &Request) -> Response {
    let kept: Vec<(String, String)> =
        form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes())
            .filter(|(k, _)| k != "token")
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
    let mut target = req.uri().path().to_string();
    if !kept.is_empty() {
        target.push('?');
        target.push_str(
            &form_urlencoded::Serializer::new(String::new())
                .extend_pairs(kept)
                .finish(),
        );
    }
    let target_html = crate::html::escape(&target);
    let body = message_page(
        "Signed in",
        "Opening the approval page…",
        &format!("<meta http-equiv=\"refresh\" content=\"0; url={target_html}\">"),
    );
    let cookie = format!("{cookie_name}={token}; Path=/; HttpOnly; SameSite=Strict");
    let mut response = (StatusCode::OK, axum::response::Html(body)).into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        headers.insert(header::SET_COOKIE, value);
    }
    if let Ok(value) = HeaderValue::from_str(&target) {
        // For clients that follow it rather than the refresh (and for tests).
        headers.insert(header::CONTENT_LOCATION, value);
    }
    response
}

/// A refusal page (boxed: it travels in `Err`).
fn refuse(status: StatusCode, message: &str) -> Box<Response> {
    let title = status.canonical_reason().unwrap_or("Refused");
    let mut response = Response::new(Body::from(message_page(title, message, "")));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    Box::new(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_and_configured_hosts() {
        let none: Vec<String> = Vec::new();
        for ok in [
            "localhost",
            "LOCALHOST:8080",
            "127.0.0.1",
            "127.1.2.3:9",
            "[::1]:80",
            "[::1]",
        ] {
            assert!(host_allowed(ok, &none), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:80",
            "localhost.evil.example",
            "10.0.0.1:80",
            "[::2]:1",
            "127.0.0.1.nip.io",
        ] {
            assert!(!host_allowed(bad, &none), "{bad}");
        }
        let configured = vec!["box.lan".to_string(), "other:9000".to_string()];
        assert!(host_allowed("box.lan:1234", &configured));
        assert!(host_allowed("other:9000", &configured));
        assert!(!host_allowed("other:9001", &configured));
    }

    #[test]
    fn cookie_names_follow_the_port() {
        assert_eq!(cookie_name("127.0.0.1:4000"), "toolgate_web_4000");
        assert_eq!(cookie_name("[::1]:5"), "toolgate_web_5");
        assert_eq!(cookie_name("localhost"), "toolgate_web_80");
    }

    #[test]
    fn origins_must_match_the_host_exactly() {
        assert!(same_origin("http://127.0.0.1:4000", "127.0.0.1:4000"));
        assert!(!same_origin("http://127.0.0.1:4001", "127.0.0.1:4000"));
        assert!(!same_origin("http://127.0.0.1:4000.evil", "127.0.0.1:4000"));
        assert!(!same_origin("null", "127.0.0.1:4000"));
    }
}
