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

pub use toolgate_core::secret_env::{DEFAULT_SECRET_ENV_PATTERNS, is_secret_name};

/// Variables never passed to commands even when they are not secrets: they
/// change what a command does in ways the analyser would have to guess
/// (`CDPATH` moves `cd dir` to another directory).
const REMOVED: &[&str] = &["CDPATH"];

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

/// The environment for a command: this process's variables without the
/// secret-looking ones and `CDPATH`, plus `PAGER=cat`, `GIT_PAGER=cat`,
/// `GIT_TERMINAL_PROMPT=0` and [`GIT_FORCED_CONFIG`] at git's command scope. Also returns the
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
    add_git_config(&mut kept, GIT_FORCED_CONFIG);
    (kept, removed)
}

/// Whether toolgate itself sets `name` for every command (a pager, git's
/// forced configuration), so it stays inside the sandbox too.
pub fn is_forced(name: &str) -> bool {
    FORCED.iter().any(|(f, _)| *f == name)
        || name == "GIT_CONFIG_COUNT"
        || name.starts_with("GIT_CONFIG_KEY_")
        || name.starts_with("GIT_CONFIG_VALUE_")
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

/// The environment of a confined command: the sandbox's allowlist (plus
/// `extra`, `[sandbox] env`) and what toolgate sets for every command, with
/// secret-looking names withheld as for any command.
pub fn confined_env(patterns: &[String], extra: &[String]) -> Vec<(OsString, OsString)> {
    let (mut env, _) = command_env(patterns);
    env.retain(|(name, _)| {
        let name = name.to_string_lossy();
        toolgate_core::sandbox_env::sandbox_env_allows(&name, extra) || is_forced(&name)
    });
    env
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_patterns_are_cores() {
        let p: Vec<String> = DEFAULT_SECRET_ENV_PATTERNS
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(is_secret_name("GITHUB_TOKEN", &p));
        assert!(!is_secret_name("PATH", &p));
    }
}
