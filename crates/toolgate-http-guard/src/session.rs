//! The browser session: a `?token=…` in the URL is exchanged once for an
//! HttpOnly, SameSite=Strict cookie, which every later request carries.

use cookie::{Cookie, SameSite};
use http::HeaderMap;
use http::header::COOKIE;

use crate::peers::port_or_80;

/// The cookie's name for a `Host` value: the prefix and the port (80 when
/// absent), so two servers on one machine keep separate sessions.
pub fn cookie_name(prefix: &str, host: &str) -> String {
    format!("{prefix}{}", port_or_80(host))
}

/// The value of the cookie `name` among all `Cookie` headers.
pub fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|cookie| cookie.name() == name)
        .map(|cookie| cookie.value().to_string())
}

/// The `token` parameter of a query string.
pub fn query_token(query: Option<&str>) -> Option<String> {
    form_urlencoded::parse(query?.as_bytes())
        .find(|(key, _)| key == "token")
        .map(|(_, value)| value.into_owned())
}

/// What to answer a request that signed in with the token in its URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignIn {
    /// The `Set-Cookie` value: the token, `Path=/`, HttpOnly, SameSite=Strict.
    pub set_cookie: String,
    /// The same path and query without `token`, to send the browser on to.
    pub target: String,
}

impl SignIn {
    /// The sign-in for `path?query` with the cookie `name` carrying `token`.
    pub fn new(name: &str, token: &str, path: &str, query: Option<&str>) -> Self {
        let set_cookie = Cookie::build((name, token))
            .path("/")
            .http_only(true)
            .same_site(SameSite::Strict)
            .build()
            .to_string();
        let kept: Vec<(String, String)> = form_urlencoded::parse(query.unwrap_or("").as_bytes())
            .filter(|(key, _)| key != "token")
            .map(|(key, value)| (key.into_owned(), value.into_owned()))
            .collect();
        let mut target = path.to_string();
        if !kept.is_empty() {
            target.push('?');
            target.push_str(
                &form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(kept)
                    .finish(),
            );
        }
        Self { set_cookie, target }
    }
}
