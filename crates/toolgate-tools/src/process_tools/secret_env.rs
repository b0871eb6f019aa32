//! The environment bash commands get: ours, minus variables that look like
//! secrets, plus pagers that never wait for a terminal.

use std::ffi::OsString;

/// Name patterns of variables removed from bash's environment by default.
pub const DEFAULT_SECRET_ENV_PATTERNS: &[&str] =
    &["*_TOKEN", "*_KEY", "*_SECRET", "*_PASSWORD", "AWS_*"];

/// Variables always set for commands, so that `git log` and friends print
/// instead of waiting for a pager.
const FORCED: &[(&str, &str)] = &[("PAGER", "cat"), ("GIT_PAGER", "cat")];

/// Whether `name` matches one of `patterns` (`*` matches any run of
/// characters; comparison ignores ASCII case).
///
/// ```
/// use toolgate_tools::process_tools::is_secret_name;
/// let patterns = vec!["*_TOKEN".to_string(), "AWS_*".to_string()];
/// assert!(is_secret_name("GITHUB_TOKEN", &patterns));
/// assert!(is_secret_name("aws_region", &patterns));
/// assert!(!is_secret_name("TOKENIZER", &patterns));
/// ```
pub fn is_secret_name(name: &str, patterns: &[String]) -> bool {
    let name = name.to_ascii_uppercase();
    patterns
        .iter()
        .any(|p| wildcard_match(p.to_ascii_uppercase().as_bytes(), name.as_bytes()))
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

/// The environment for a command: this process's variables without the
/// secret-looking ones, plus `PAGER=cat` and `GIT_PAGER=cat`. Also returns the
/// names that were removed (for logs; never their values).
pub fn command_env(patterns: &[String]) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    for (name, value) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if is_secret_name(&text, patterns) {
            removed.push(text.into_owned());
        } else if !FORCED.iter().any(|(f, _)| *f == text) {
            kept.push((name, value));
        }
    }
    kept.extend(
        FORCED
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    (kept, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pats(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn default_patterns_match_the_usual_secrets() {
        let p = pats(DEFAULT_SECRET_ENV_PATTERNS);
        for name in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "CLIENT_SECRET",
            "DB_PASSWORD",
            "AWS_ACCESS_KEY_ID",
            "AWS_PROFILE",
            "anthropic_api_key",
        ] {
            assert!(is_secret_name(name, &p), "{name} should be secret");
        }
        for name in ["PATH", "HOME", "TOKEN", "KEYBOARD", "MY_TOKEN_FILE", "LANG"] {
            assert!(!is_secret_name(name, &p), "{name} should be kept");
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
