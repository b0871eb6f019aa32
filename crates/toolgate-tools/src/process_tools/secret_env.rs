//! The environment bash commands get: ours, minus variables that look like
//! secrets, plus pagers that never wait for a terminal.

use std::ffi::OsString;

pub use toolgate_core::secret_env::{DEFAULT_SECRET_ENV_PATTERNS, is_secret_name};

/// Variables never passed to commands even when they are not secrets: they
/// change what a command does in ways the analyser would have to guess
/// (`CDPATH` moves `cd dir` to another directory).
const REMOVED: &[&str] = &["CDPATH"];

/// Variables always set for commands, so that `git log` and friends print
/// instead of waiting for a pager.
const FORCED: &[(&str, &str)] = &[("PAGER", "cat"), ("GIT_PAGER", "cat")];

/// The environment for a command: this process's variables without the
/// secret-looking ones and `CDPATH`, plus `PAGER=cat` and `GIT_PAGER=cat`. Also returns the
/// names that were removed (for logs; never their values).
pub fn command_env(patterns: &[String]) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    for (name, value) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if is_secret_name(&text, patterns) {
            removed.push(text.into_owned());
        } else if !FORCED.iter().any(|(f, _)| *f == text) && !REMOVED.contains(&&*text) {
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

    #[test]
    fn the_patterns_are_cores() {
        let p: Vec<String> = DEFAULT_SECRET_ENV_PATTERNS
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(is_secret_name("GITHUB_TOKEN", &p));
        assert!(!is_secret_name("PATH", &p));
    }
}
