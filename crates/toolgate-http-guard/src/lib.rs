//! The HTTP guard of toolgate's servers, run on every request before any
//! handler: the MCP endpoint (`toolgate serve`) and the approval page.
//!
//! 1. `Host` must be loopback (`localhost`, `127.0.0.0/8`, `::1`) or
//!    configured: a DNS-rebinding page cannot reach the server under its own
//!    name. Authorities are parsed with [`http::uri::Authority`].
//! 2. `Origin`, by [`OriginRule`]: any loopback or configured origin (MCP), or
//!    exactly the page's own, required on state-changing requests (the page).
//! 3. The token, by [`Credential`]: `Authorization: Bearer …` (MCP), or a
//!    browser session whose `?token=…` is exchanged for an HttpOnly,
//!    SameSite=Strict cookie (the page). Tokens are compared in constant time.
//!
//! The guard knows no web framework: it reads an [`http::Request`] and says
//! [`Admission`] or [`Refusal`]; each server shows a refusal its own way.
//!
//! ```
//! use http::Request;
//! use toolgate_http_guard::{Admission, AllowedPeers, Credential, HttpGuard, OriginRule, Refusal, Token};
//!
//! let guard = HttpGuard {
//!     peers: AllowedPeers::default(),
//!     origin: OriginRule::Peers,
//!     credential: Credential::Bearer(Token::new("s3cret-s3cret-s3cret")),
//! };
//! let ok = Request::post("/mcp")
//!     .header("host", "127.0.0.1:8080")
//!     .header("authorization", "Bearer s3cret-s3cret-s3cret")
//!     .body(())?;
//! assert_eq!(guard.check(&ok), Ok(Admission::Admit));
//!
//! // A page on evil.example that resolved its name to 127.0.0.1:
//! let rebound = Request::post("/mcp")
//!     .header("host", "evil.example:8080")
//!     .header("authorization", "Bearer s3cret-s3cret-s3cret")
//!     .body(())?;
//! let refused = guard.check(&rebound).unwrap_err();
//! assert!(matches!(refused, Refusal::HostNotAllowed { .. }));
//! assert_eq!(refused.status(), http::StatusCode::FORBIDDEN);
//! # Ok::<(), http::Error>(())
//! ```

#![deny(missing_docs)]

mod guard;
mod peers;
mod refusal;
mod secret_token;
mod session;

pub use guard::{Admission, Credential, HttpGuard, OriginRule, same_origin};
pub use peers::{AllowedPeers, host_name, port_or_80};
pub use refusal::Refusal;
pub use secret_token::Token;
pub use session::{SignIn, cookie_name, cookie_value, query_token};
