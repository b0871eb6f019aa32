//! Which environment variable names look like secrets: one list, used by the
//! bash tool (which removes them from a command's environment) and by the
//! shell analyser (which treats expanding one as touching a credential).

/// Name patterns of variables that hold secrets (`*` matches any run of
/// characters; comparison ignores ASCII case): tokens, keys, secrets and
/// passwords by their usual suffixes (`PGPASSWORD`, `MYSQL_PWD`,
/// `SECRET_KEY_BASE`), cloud credentials, and connection strings, which
/// carry a password more often than not (`DATABASE_URL`, `SENTRY_DSN`,
/// `REDIS_URL`).
pub const DEFAULT_SECRET_ENV_PATTERNS: &[&str] = &[
    "*_TOKEN",
    "*_KEY",
    "*_SECRET",
    "*SECRET_*",
    "*PASSWORD",
    "*PASSWD",
    "*_PWD",
    "*_PASS",
    "*_PAT",
    "*_CREDENTIALS",
    "*_AUTH",
    "*_COOKIE",
    "*_DSN",
    "*_CONNECTION_STRING",
    "*DATABASE_URL",
    "*_DB_URL",
    "REDIS*_URL",
    "MONGO*_URL",
    "AMQP*_URL",
    "RABBITMQ*_URL",
    "*_PRIVATE_KEY*",
    "AWS_*",
];

/// Whether `value` carries a password the way connection strings do: a URL
/// whose authority holds `user:password@` (`postgres://app:pw@db/app`).
///
/// ```
/// use toolgate_core::secret_env::value_holds_password;
/// assert!(value_holds_password("postgres://app:s3cret@db:5432/app"));
/// assert!(value_holds_password("redis://:s3cret@cache:6379/0"));
/// assert!(!value_holds_password("https://example.com/a:b@c"));
/// assert!(!value_holds_password("https://user@example.com/"));
/// assert!(!value_holds_password("/usr/bin:/bin"));
/// ```
pub fn value_holds_password(value: &str) -> bool {
    let Some((_, rest)) = value.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let Some((userinfo, _host)) = authority.rsplit_once('@') else {
        return false;
    };
    userinfo
        .split_once(':')
        .is_some_and(|(_, password)| !password.is_empty())
}

/// Whether `name` matches one of `patterns`.
///
/// ```
/// use toolgate_core::secret_env::is_secret_name;
/// let patterns = vec!["*_TOKEN".to_string(), "AWS_*".to_string()];
/// assert!(is_secret_name("GITHUB_TOKEN", &patterns));
/// assert!(is_secret_name("aws_region", &patterns));
/// assert!(!is_secret_name("TOKENIZER", &patterns));
/// ```
pub fn is_secret_name<S: AsRef<str>>(name: &str, patterns: &[S]) -> bool {
    let name = name.to_ascii_uppercase();
    patterns
        .iter()
        .any(|p| wildcard_match(p.as_ref().to_ascii_uppercase().as_bytes(), name.as_bytes()))
}

/// Whether `name` matches [`DEFAULT_SECRET_ENV_PATTERNS`].
pub fn is_default_secret_name(name: &str) -> bool {
    is_secret_name(name, DEFAULT_SECRET_ENV_PATTERNS)
}

/// Iterative glob match with `*` only; linear in practice for these patterns.
fn wildcard_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_patterns_match_the_usual_secrets() {
        for name in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "CLIENT_SECRET",
            "DB_PASSWORD",
            "AWS_ACCESS_KEY_ID",
            "AWS_PROFILE",
            "anthropic_api_key",
            "DATABASE_URL",
            "PGPASSWORD",
            "MYSQL_PWD",
            "MYSQL_ROOT_PASSWORD",
            "SECRET_KEY_BASE",
            "DJANGO_SECRET_KEY",
            "SENTRY_DSN",
            "REDIS_URL",
            "MONGODB_URL",
            "TEST_DATABASE_URL",
            "NPM_AUTH",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "SMTP_PASS",
            "GH_PAT",
        ] {
            assert!(is_default_secret_name(name), "{name} should be secret");
        }
        for name in [
            "PATH",
            "HOME",
            "TOKEN",
            "KEYBOARD",
            "MY_TOKEN_FILE",
            "LANG",
            "PWD",
            "OLDPWD",
            "API_URL",
            "HOMEBREW_PREFIX",
            "AUTHOR",
            "PASSWORD_STORE_DIR",
        ] {
            assert!(!is_default_secret_name(name), "{name} should be kept");
        }
    }

    #[test]
    fn wildcards_anywhere() {
        assert!(wildcard_match(b"A*B*C", b"AXXBYYC"));
        assert!(wildcard_match(b"*", b""));
        assert!(!wildcard_match(b"A*B", b"AXXBC"));
        assert!(wildcard_match(b"**X", b"ABX"));
        assert!(!wildcard_match(b"", b"A"));
    }
}
