//! The environment bash commands get: ours, minus variables that look like
//! secrets, plus pagers that never wait for a terminal, plus git settings
//! that keep a repository's configuration from running programs during the
//! everyday read commands.
//!
//! The git settings are a second wall behind the policy (which reads the
//! repository's configuration before it calls a `git` command `read`): they
//! are passed as `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`,
//! git's command scope, which wins over every config file, including the
//! repository's. Pairs the user's own environment already sets are kept
//! (ours come after them, so ours win). Only settings whose loss a person
//! would not miss in an agent's shell are forced: fsmonitor (a speed-up), the
//! pager (there is no terminal), signatures shown by `git log` (display
//! only) and the `ext::` transport (which runs a command as a remote). Hooks,
//! filters, textconv drivers, diff drivers, credential helpers and signing
//! stay as the user configured them: they are the user's workflows (commit
//! hooks, LFS), and git has no command-scope switch that turns off a
//! repository's drivers without knowing their names; the policy judges them.

use std::ffi::OsString;

/// Name patterns of variables removed from bash's environment by default.
pub const DEFAULT_SECRET_ENV_PATTERNS: &[&str] =
    &["*_TOKEN", "*_KEY", "*_SECRET", "*_PASSWORD", "AWS_*"];

/// Variables always set for commands, so that `git log` and friends print
/// instead of waiting for a pager.
const FORCED: &[(&str, &str)] = &[
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    // No credential or passphrase prompt: there is no terminal to answer it.
    ("GIT_TERMINAL_PROMPT", "0"),
];

/// Git settings forced at command scope for every command (see the module
/// documentation for why these and no others).
pub const GIT_FORCED_CONFIG: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("log.showSignature", "false"),
    ("protocol.ext.allow", "never"),
];

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
/// secret-looking ones, plus `PAGER=cat`, `GIT_PAGER=cat`, `GIT_TERMINAL_PROMPT=0` and
/// [`GIT_FORCED_CONFIG`] at git's command scope. Also returns the
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
    add_git_config(&mut kept, GIT_FORCED_CONFIG);
    (kept, removed)
}

/// Appends `pairs` to the `GIT_CONFIG_COUNT` list of `env`, keeping the pairs
/// already there (ours after them, so ours win). A count git would reject
/// (not a number) is replaced with ours alone.
fn add_git_config(env: &mut Vec<(OsString, OsString)>, pairs: &[(&str, &str)]) {
    let get = |env: &Vec<(OsString, OsString)>, name: &str| {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    };
    let existing = match get(env, "GIT_CONFIG_COUNT") {
        None => 0,
        Some(c) if c.trim().is_empty() => 0,
        Some(c) => match c.trim().parse::<usize>() {
            Ok(n)
                if (0..n).all(|i| {
                    get(env, &format!("GIT_CONFIG_KEY_{i}")).is_some()
                        && get(env, &format!("GIT_CONFIG_VALUE_{i}")).is_some()
                }) =>
            {
                n
            }
            _ => {
                env.retain(|(k, _)| {
                    let k = k.to_string_lossy();
                    !(k == "GIT_CONFIG_COUNT"
                        || k.starts_with("GIT_CONFIG_KEY_")
                        || k.starts_with("GIT_CONFIG_VALUE_"))
                });
                0
            }
        },
    };
    env.retain(|(k, _)| k != "GIT_CONFIG_COUNT");
    for (i, (key, value)) in pairs.iter().enumerate() {
        let n = existing + i;
        for (name, v) in [
            (format!("GIT_CONFIG_KEY_{n}"), *key),
            (format!("GIT_CONFIG_VALUE_{n}"), *value),
        ] {
            env.retain(|(k, _)| *k != *name);
            env.push((OsString::from(name), OsString::from(v)));
        }
    }
    env.push((
        OsString::from("GIT_CONFIG_COUNT"),
        OsString::from((existing + pairs.len()).to_string()),
    ));
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

    fn env_of(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    fn val(env: &[(OsString, OsString)], name: &str) -> Option<String> {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    }

    #[test]
    fn git_config_pairs_are_added_after_the_users_own() {
        let mut env = env_of(&[
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "user.name"),
            ("GIT_CONFIG_VALUE_0", "me"),
        ]);
        add_git_config(
            &mut env,
            &[("core.fsmonitor", "false"), ("core.pager", "cat")],
        );
        assert_eq!(val(&env, "GIT_CONFIG_COUNT").as_deref(), Some("3"));
        assert_eq!(val(&env, "GIT_CONFIG_KEY_0").as_deref(), Some("user.name"));
        assert_eq!(
            val(&env, "GIT_CONFIG_KEY_1").as_deref(),
            Some("core.fsmonitor")
        );
        assert_eq!(val(&env, "GIT_CONFIG_VALUE_2").as_deref(), Some("cat"));
        assert_eq!(
            env.iter().filter(|(k, _)| k == "GIT_CONFIG_COUNT").count(),
            1
        );
    }

    #[test]
    fn a_bogus_git_config_count_is_replaced() {
        for count in ["x", "3"] {
            let mut env = env_of(&[("GIT_CONFIG_COUNT", count), ("GIT_CONFIG_KEY_0", "a.b")]);
            add_git_config(&mut env, &[("core.fsmonitor", "false")]);
            assert_eq!(
                val(&env, "GIT_CONFIG_COUNT").as_deref(),
                Some("1"),
                "{count}"
            );
            assert_eq!(
                val(&env, "GIT_CONFIG_KEY_0").as_deref(),
                Some("core.fsmonitor")
            );
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
