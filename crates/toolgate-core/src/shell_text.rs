//! Words made into shell text: one quoting rule for every place that turns
//! an argument vector into the command line the shell analyser judges (an
//! agent's argv `command`, an upstream's `{"command": [...]}`) or that
//! writes a command another shell runs (the hooks' sandbox rewrite).
//!
//! ```
//! use toolgate_core::shell_text::{argv_line, quote};
//! assert_eq!(quote("ls"), "ls");
//! assert_eq!(quote("it's"), r"'it'\''s'");
//! assert_eq!(argv_line(&["sh", "-c", "cat ~/.ssh/id_rsa"]), "sh -c 'cat ~/.ssh/id_rsa'");
//! ```

/// `word` quoted for a POSIX shell: as it is when it holds only characters
/// no shell treats specially, else in single quotes.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./_-".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// An argument vector as the one command line `execve` would run: each
/// word [`quote`]d, joined by spaces.
pub fn argv_line<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_a_shell_would_read_them_otherwise() {
        assert_eq!(quote("ls"), "ls");
        assert_eq!(quote("/usr/bin/x-y_z.1"), "/usr/bin/x-y_z.1");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$(id)"), "'$(id)'");
        assert_eq!(quote(";"), "';'");
        assert_eq!(
            argv_line(&["find", ".", "-exec", "sh", "-c", "cat x", ";"]),
            "find . -exec sh -c 'cat x' ';'"
        );
        assert_eq!(argv_line::<&str>(&[]), "");
    }
}
