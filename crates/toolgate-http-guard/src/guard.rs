//! The checks in their order: `Host`, then `Origin`, then the token.

use http::header::{AUTHORIZATION, HOST, ORIGIN};
use http::{HeaderMap, Method, Request};

use crate::peers::AllowedPeers;
use crate::refusal::Refusal;
use crate::secret_token::Token;
use crate::session::{SignIn, cookie_name, cookie_value, query_token};

/// Which `Origin` a request may carry.
#[derive(Clone, Debug)]
pub enum OriginRule {
    /// Any loopback or configured origin, and none at all (MCP clients that
    /// are not browsers send none).
    Peers,
    /// Only the origin of the `Host` the request came to; state-changing
    /// requests (anything but GET and HEAD) must carry it.
    SameAsHost,
}

/// How a client proves it holds the token.
#[derive(Clone, Debug)]
pub enum Credential {
    /// Nobody: every request that passes `Host` and `Origin` is let in.
    Open,
    /// `Authorization: Bearer <token>` on every request.
    Bearer(Token),
    /// A browser session: `?token=…` on a GET signs in (see [`SignIn`]), and
    /// every other request carries the cookie named `cookie_prefix` + port.
    Session {
        /// The token.
        token: Token,
        /// The cookie name before the port (`toolgate_web_`).
        cookie_prefix: String,
    },
}

/// What to do with a request the guard lets through.
#[derive(Debug, PartialEq, Eq)]
pub enum Admission {
    /// Hand it to the handler.
    Admit,
    /// Answer with the sign-in (set the cookie, send the browser on).
    SignIn(SignIn),
}

/// One server's guard: which peers, which origins, which credential.
#[derive(Clone, Debug)]
pub struct HttpGuard {
    /// Hosts and origins accepted besides loopback.
    pub peers: AllowedPeers,
    /// Which `Origin` is accepted.
    pub origin: OriginRule,
    /// How the token is presented.
    pub credential: Credential,
}

impl HttpGuard {
    /// Checks a request's `Host`, `Origin` and token, in that order.
    pub fn check<B>(&self, request: &Request<B>) -> Result<Admission, Refusal> {
        let headers = request.headers();
        let host = request_host(request).ok_or(Refusal::NoHost)?;
        if !self.peers.host_allowed(&host) {
            return Err(Refusal::HostNotAllowed { host });
        }
        let state_changing = !matches!(*request.method(), Method::GET | Method::HEAD);
        self.check_origin(headers, &host, state_changing)?;
        match &self.credential {
            Credential::Open => Ok(Admission::Admit),
            Credential::Bearer(token) => {
                let presented = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok());
                match presented {
                    None => Err(Refusal::BearerMissing),
                    Some(value) if token.bearer_matches(Some(value)) => Ok(Admission::Admit),
                    Some(_) => Err(Refusal::BearerInvalid),
                }
            }
            Credential::Session {
                token,
                cookie_prefix,
            } => {
                if token.is_empty() {
                    return Err(Refusal::NoTokenConfigured);
                }
                let name = cookie_name(cookie_prefix, &host);
                let query = request.uri().query();
                if let Some(offered) = query_token(query).filter(|_| !state_changing) {
                    if !token.matches(&offered) {
                        return Err(Refusal::UrlTokenWrong);
                    }
                    let path = request.uri().path();
                    return Ok(Admission::SignIn(SignIn::new(
                        &name,
                        token.expose(),
                        path,
                        query,
                    )));
                }
                match cookie_value(headers, &name) {
                    Some(value) if token.matches(&value) => Ok(Admission::Admit),
                    Some(_) => Err(Refusal::CookieStale),
                    None => Err(Refusal::CookieMissing),
                }
            }
        }
    }

    fn check_origin(
        &self,
        headers: &HeaderMap,
        host: &str,
        state_changing: bool,
    ) -> Result<(), Refusal> {
        let Some(origin) = headers.get(ORIGIN) else {
            return match self.origin {
                OriginRule::SameAsHost if state_changing => Err(Refusal::OriginMissing),
                _ => Ok(()),
            };
        };
        let text = origin.to_str().ok();
        let origin = || text.unwrap_or("<not text>").to_string();
        match self.origin {
            OriginRule::Peers if text.is_some_and(|o| self.peers.origin_allowed(o)) => Ok(()),
            OriginRule::Peers => Err(Refusal::OriginNotAllowed { origin: origin() }),
            OriginRule::SameAsHost if text.is_some_and(|o| same_origin(o, host)) => Ok(()),
            OriginRule::SameAsHost => Err(Refusal::CrossOrigin { origin: origin() }),
        }
    }
}

/// The `Host` header (when it is text), or else the authority of an absolute
/// request URI.
fn request_host<B>(request: &Request<B>) -> Option<String> {
    request
        .headers()
        .get(HOST)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()))
}

/// Whether `origin` is `http://` or `https://` followed by exactly `host`.
pub fn same_origin(origin: &str, host: &str) -> bool {
    ["http://", "https://"].iter().any(|scheme| {
        origin
            .strip_prefix(scheme)
            .is_some_and(|authority| authority.eq_ignore_ascii_case(host))
    })
}
