//! Why a request was refused, with the status to answer it with.

use http::StatusCode;

/// A request the guard refuses. The message says what to do about it; the
/// server chooses how to show it (JSON for MCP, a page for the browser).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Neither a `Host` header nor an authority in the request URI, or a
    /// `Host` that is not text.
    #[error("the request has no valid Host header")]
    NoHost,
    /// A `Host` that is neither loopback nor configured.
    #[error(
        "Host {host:?} is not allowed (DNS-rebinding protection): only loopback names \
         and configured hosts are served"
    )]
    HostNotAllowed {
        /// The `Host` value.
        host: String,
    },
    /// An `Origin` that is neither loopback nor configured.
    #[error("Origin {origin:?} is not allowed (DNS-rebinding protection)")]
    OriginNotAllowed {
        /// The `Origin` value (`<not text>` when it was not text).
        origin: String,
    },
    /// An `Origin` other than the page's own.
    #[error("cross-origin request refused: origin {origin:?} is not this page")]
    CrossOrigin {
        /// The `Origin` value (`<not text>` when it was not text).
        origin: String,
    },
    /// A state-changing request without `Origin`.
    #[error("cross-origin check failed: a state-changing request must carry an Origin header")]
    OriginMissing,
    /// No `Authorization` header.
    #[error(
        "missing bearer token: send `Authorization: Bearer <token>` (printed by `toolgate serve`)"
    )]
    BearerMissing,
    /// An `Authorization` header without the right bearer token.
    #[error(
        "invalid bearer token: send `Authorization: Bearer <token>` (printed by `toolgate serve`)"
    )]
    BearerInvalid,
    /// The server has an empty token, so nobody can sign in.
    #[error("the approval page has no token configured, so nobody can sign in")]
    NoTokenConfigured,
    /// `?token=…` with the wrong token.
    #[error("the token in the URL is wrong: open the URL toolgate printed at start")]
    UrlTokenWrong,
    /// A session cookie with an old token.
    #[error(
        "the session cookie is stale (toolgate restarted?): open the URL toolgate printed \
         at start, with its ?token=…"
    )]
    CookieStale,
    /// Neither a session cookie nor `?token=…`.
    #[error(
        "this page needs the token: open the URL toolgate printed at start (it ends \
         with ?token=…)"
    )]
    CookieMissing,
}

impl Refusal {
    /// The HTTP status to answer with: 400 without a host, 403 for a foreign
    /// host or origin, 401 for a missing or wrong token.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::NoHost => StatusCode::BAD_REQUEST,
            Self::HostNotAllowed { .. }
            | Self::OriginNotAllowed { .. }
            | Self::CrossOrigin { .. }
            | Self::OriginMissing => StatusCode::FORBIDDEN,
            Self::BearerMissing
            | Self::BearerInvalid
            | Self::NoTokenConfigured
            | Self::UrlTokenWrong
            | Self::CookieStale
            | Self::CookieMissing => StatusCode::UNAUTHORIZED,
        }
    }
}
