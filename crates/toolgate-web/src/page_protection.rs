//! The page's protection, applied to every request before any handler, by the
//! shared [`toolgate_http_guard::HttpGuard`]:
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

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use toolgate_http_guard::{
    Admission, AllowedPeers, Credential, HttpGuard, OriginRule, Refusal, SignIn, Token,
};

use crate::WebState;
use crate::html::{message_page, refresh_page};

/// The content security policy of every page: our own script and style only.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The session cookie's name before the port.
const COOKIE_PREFIX: &str = "toolgate_web_";

/// The guard of the page served from `state`.
pub fn page_guard(state: &WebState) -> HttpGuard {
    HttpGuard {
        peers: AllowedPeers {
            hosts: state.allowed_hosts.clone(),
            origins: Vec::new(),
        },
        origin: OriginRule::SameAsHost,
        credential: Credential::Session {
            token: Token::new(state.token.clone()),
            cookie_prefix: COOKIE_PREFIX.to_string(),
        },
    }
}

/// Runs the checks, then the handler, then adds the protective headers.
pub async fn protect(State(guard): State<Arc<HttpGuard>>, req: Request, next: Next) -> Response {
    let mut response = match guard.check(&req) {
        Ok(Admission::Admit) => next.run(req).await,
        Ok(Admission::SignIn(sign_in)) => signed_in(&sign_in),
        Err(refusal) => refuse(&refusal),
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

/// Whether `host` (a `Host` header value, with or without port) is loopback or
/// configured. Configured entries match the name alone or `name:port`.
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    AllowedPeers {
        hosts: allowed.to_vec(),
        origins: Vec::new(),
    }
    .host_allowed(host)
}

/// Sets the cookie and sends the browser on to the same URL without `token`.
///
/// A page that refreshes itself, rather than a 303, because a SameSite=Strict
/// cookie is not sent on a redirect that a cross-site click started; a refresh
/// from our own page is same-site, so the cookie arrives.
fn signed_in(sign_in: &SignIn) -> Response {
    let body = refresh_page("Signed in", "Opening the approval page…", &sign_in.target);
    let mut response = (StatusCode::OK, axum::response::Html(body)).into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&sign_in.set_cookie) {
        headers.insert(header::SET_COOKIE, value);
    }
    if let Ok(value) = HeaderValue::from_str(&sign_in.target) {
        // For clients that follow it rather than the refresh (and for tests).
        headers.insert(header::CONTENT_LOCATION, value);
    }
    response
}

/// A refusal page.
fn refuse(refusal: &Refusal) -> Response {
    let status = refusal.status();
    if status == StatusCode::FORBIDDEN {
        tracing::warn!(%refusal, "web request refused");
    }
    let title = status.canonical_reason().unwrap_or("Refused");
    let message = refusal.to_string();
    let mut response = Response::new(Body::from(message_page(title, &message)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}
