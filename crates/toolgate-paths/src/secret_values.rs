//! Configuration files that are not secret as a whole but hold secrets as
//! some of their values: cargo's `~/.cargo/config.toml` (a registry's
//! `token`), cabal's `~/.cabal/config` (a repository's `password`). Masking
//! such a file whole breaks the tool that reads it, so where it must stay
//! readable (the sandbox shows `~/.cargo` and `~/.cabal` to builds) a copy
//! without those values is shown instead ([`redacted`]).
//!
//! ```
//! use toolgate_paths::secret_values::{redacted, secret_keys_of};
//! let keys = secret_keys_of(b".cargo", b"config.toml").unwrap();
//! let text = "[registry]\ntoken = \"cio123\"\n[alias]\nb = \"build\"\n";
//! assert_eq!(redacted(text, keys).as_deref(), Some("[registry]\n[alias]\nb = \"build\"\n"));
//! ```

/// `(directory, file, secret keys, where documented)`: the file inside that
/// directory holds secrets as the values of those keys (compared without
/// regard to ASCII case, anywhere on a line: `token = "…"`, an inline
/// `registry = { token = "…" }`, cabal's `password: …`).
pub const SECRET_VALUE_FILES: &[(&str, &str, &[&str], &str)] = &[
    (
        ".cargo",
        "config.toml",
        CARGO_KEYS,
        "https://doc.rust-lang.org/cargo/reference/config.html#registrytoken (registry.token, registries.<name>.token, and the asymmetric secret-key)",
    ),
    (
        ".cargo",
        "config",
        CARGO_KEYS,
        "cargo's configuration under its older name: https://doc.rust-lang.org/cargo/reference/config.html#hierarchical-structure",
    ),
    (
        ".cabal",
        "config",
        &["password", "token"],
        "https://cabal.readthedocs.io/en/stable/config.html (a repository's username and password for upload)",
    ),
];

const CARGO_KEYS: &[&str] = &["token", "secret-key"];

/// The secret keys of a file called `name` in a directory called `parent`
/// ([`SECRET_VALUE_FILES`]).
pub fn secret_keys_of(parent: &[u8], name: &[u8]) -> Option<&'static [&'static str]> {
    SECRET_VALUE_FILES
        .iter()
        .find(|(d, f, _, _)| parent == d.as_bytes() && name == f.as_bytes())
        .map(|(_, _, keys, _)| *keys)
}

/// `text` without its secrets: every line that sets one of `keys` (the key
/// as a word, followed by `=` or `:`) is left out, and so is every line
/// after it indented deeper (a continued value). `None` when the file
/// cannot be redacted by lines — a multi-line string (`"""`, `'''`), where
/// a value's later lines would be kept — so the caller hides it whole.
pub fn redacted(text: &str, keys: &[&str]) -> Option<String> {
    if text.contains("\"\"\"") || text.contains("'''") {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut dropping: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        if let Some(at) = dropping {
            if indent > at && !line.trim().is_empty() {
                continue;
            }
            dropping = None;
        }
        if sets_a_key(line, keys) {
            dropping = Some(indent);
            continue;
        }
        out.push_str(line);
    }
    Some(out)
}

/// Whether `line` sets one of `keys`: the key as a word (not part of a
/// longer name such as `token-file` or `cargo:token`), then spaces, then
/// `=` or `:`. Case does not matter.
fn sets_a_key(line: &str, keys: &[&str]) -> bool {
    let lower = line.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_');
    keys.iter().any(|key| {
        let key = key.to_ascii_lowercase();
        lower.match_indices(key.as_str()).any(|(at, _)| {
            let before = at.checked_sub(1).map(|i| bytes[i]);
            // A quoted key (`"token" = …`) counts; `cargo:token` does not.
            let starts = before.is_none_or(|b| !word(b) && b != b':');
            let rest = lower[at + key.len()..].trim_start_matches([' ', '\t', '"', '\'']);
            starts && (rest.starts_with('=') || rest.starts_with(':'))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_tokens_go_and_everything_else_stays() {
        let keys = secret_keys_of(b".cargo", b"config.toml").unwrap();
        let text = "\
[registry]
token = \"cio-CANARY\"
global-credential-providers = [\"cargo:token\"]
[registries.corp]
index = \"sparse+https://corp.example/index/\"
TOKEN=\"CANARY2\"
secret-key = \"k3.secret.CANARY3\"
[registries]
other = { index = \"https://x\", token = \"CANARY4\" }
\"token\" = \"CANARY5\"
[alias]
b = \"build\"
[net]
offline = true
";
        let out = redacted(text, keys).unwrap();
        assert!(!out.contains("CANARY"), "{out}");
        for kept in [
            "[registry]",
            "global-credential-providers = [\"cargo:token\"]",
            "index = \"sparse+https://corp.example/index/\"",
            "b = \"build\"",
            "offline = true",
        ] {
            assert!(out.contains(kept), "{kept} is gone: {out}");
        }
    }

    #[test]
    fn a_cabal_password_and_its_continuation_go() {
        let keys = secret_keys_of(b".cabal", b"config").unwrap();
        let text = "repository hackage.haskell.org\n  url: http://hackage.haskell.org/\n  password: CANARY\n    CANARY-continued\n  username: me\njobs: 4\n";
        let out = redacted(text, keys).unwrap();
        assert_eq!(
            out,
            "repository hackage.haskell.org\n  url: http://hackage.haskell.org/\n  username: me\njobs: 4\n"
        );
    }

    #[test]
    fn a_multi_line_string_is_not_redacted_by_lines() {
        assert!(redacted("token = \"\"\"\nCANARY\n\"\"\"\n", CARGO_KEYS).is_none());
        assert!(redacted("x = '''\na\n'''\n", CARGO_KEYS).is_none());
    }

    #[test]
    fn other_files_have_no_secret_values() {
        assert!(secret_keys_of(b".cargo", b"env").is_none());
        assert!(secret_keys_of(b"ws", b"config.toml").is_none());
    }
}
