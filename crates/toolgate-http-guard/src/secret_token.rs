//! The shared secret a client presents, compared in constant time so that the
//! time of a refusal tells nothing about how much of a guess was right.

use subtle::ConstantTimeEq;

/// A secret token. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// Wraps a token (an empty one matches nothing: nobody can sign in).
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    /// The secret itself (for the cookie that carries it).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the token is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `offered` is this token (constant time; never for an empty token).
    pub fn matches(&self, offered: &str) -> bool {
        !self.0.is_empty() && bool::from(offered.as_bytes().ct_eq(self.0.as_bytes()))
    }

    /// Whether an `Authorization` header value is `Bearer <this token>`; the
    /// scheme is case-insensitive.
    pub fn bearer_matches(&self, header: Option<&str>) -> bool {
        let Some((scheme, presented)) = header.and_then(|value| value.split_once(' ')) else {
            return false;
        };
        scheme.eq_ignore_ascii_case("bearer") && self.matches(presented.trim())
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}
