//! Which paths hold secrets: the credential part of the classification.
//!
//! Judged on the path's components, so it works on both the lexical path (what
//! the command names) and the resolved one (where symlinks lead).

use std::path::{Component, Path};

use toolgate_core::credential::{self, is_credential};
use toolgate_core::{Location, Risk};

/// `Some(Risk::Credential)` when `path` names a secret: `~/.ssh`, `~/.aws`,
/// `~/.config/gh`, `.git-credentials`, `.netrc`, `.npmrc`, `~/.docker/config.json`,
/// `~/.kube/config`, `.env` and `.env.*` (but not the templates
/// `.env.example`, `.env.sample`, `.env.template`, `.env.dist`, `.env.defaults`),
/// `/etc/shadow`, `/proc/*/environ`, SSH host keys… Names are compared without
/// regard to case (`.ENV`). The tables are core's
/// ([`toolgate_core::credential`]), shared with the file tools' walkers.
///
/// A glob in the last component counts when it could match such a name
/// (`.env*`, `.e*`). An absolute path that is a hard link to a credential file
/// of the home is one too (one `lstat`; see [`path_risk_in`] for the location's
/// own credential files).
///
/// ```
/// use std::path::Path;
/// use toolgate_core::Risk;
/// use toolgate_policy::classify::path_risk;
/// let home = Path::new("/home/u");
/// assert_eq!(path_risk(Path::new("/home/u/.ssh/id_ed25519"), home), Some(Risk::Credential));
/// assert_eq!(path_risk(Path::new("/ws/.env.local"), home), Some(Risk::Credential));
/// assert_eq!(path_risk(Path::new("/ws/.env.example"), home), None);
/// assert_eq!(path_risk(Path::new("/ws/src/main.rs"), home), None);
/// ```
pub fn path_risk(path: &Path, home: &Path) -> Option<Risk> {
    credential_of(path, home, &[]).map(|_| Risk::Credential)
}

/// [`path_risk`], also counting hard links to the credential files found in
/// the location's roots (`ln .env notes.txt`).
pub fn path_risk_in(path: &Path, home: &Path, location: &Location) -> Option<Risk> {
    let roots: Vec<&Path> = location.roots().collect();
    credential_of(path, home, &roots).map(|_| Risk::Credential)
}

/// Why `path` is a credential, if it is: by name (or a glob that could match
/// one), or as a hard link to a credential file of `home` or of `roots`.
pub fn credential_of(
    path: &Path,
    home: &Path,
    roots: &[&Path],
) -> Option<credential::CredentialKind> {
    credential_of_with(path, home, roots, &FileLinks)
}

/// Where [`credential_of_with`] learns whether a path is a regular file with
/// more than one link: the file system itself ([`FileLinks`]), or a cache of
/// `lstat` answers that the caller has made anyway.
pub trait LinkLookup {
    /// The identity of the entry at `path` (not following a final symlink)
    /// when it is a regular file with more than one link.
    fn linked_file(&self, path: &Path) -> Option<credential::LinkedFile>;
}

/// [`LinkLookup`] by one `lstat`, every time.
#[derive(Clone, Copy, Debug, Default)]
pub struct FileLinks;

impl LinkLookup for FileLinks {
    fn linked_file(&self, path: &Path) -> Option<credential::LinkedFile> {
        credential::LinkedFile::at(path)
    }
}

/// [`credential_of`], asking `links` about hard links.
pub fn credential_of_with(
    path: &Path,
    home: &Path,
    roots: &[&Path],
    links: &impl LinkLookup,
) -> Option<credential::CredentialKind> {
    if let Some(kind) = is_credential(path, home) {
        return Some(kind);
    }
    let last = path.components().next_back().and_then(|c| match c {
        Component::Normal(s) => s.to_str(),
        _ => None,
    });
    if let Some(name) = last {
        if has_glob(name) {
            return glob_may_match_secret(name).then_some(credential::CredentialKind::Name);
        }
    }
    if path.is_absolute() {
        let file = links.linked_file(path)?;
        if let Some(of) = credential::hard_link_to(path, file, home, roots) {
            return Some(credential::CredentialKind::HardLink(of));
        }
    }
    None
}

fn has_glob(name: &str) -> bool {
    name.contains(['*', '?', '['])
}

/// A glob like `.e*`, `.env*`, `*credentials*`, `.?nv` may expand to a secret
/// name (compared in lower case, as the names are).
fn glob_may_match_secret(pattern: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    credential::sample_secret_names()
        .iter()
        .any(|p| glob_match(&pattern, &p.to_ascii_lowercase()))
}

/// Minimal shell glob: `*`, `?` and `[...]` (with `!`/`^` negation and ranges).
/// A leading `.` must be matched literally, as the shell does.
///
/// Linear in the worst case: O(pattern × name) steps, never exponential, so
/// a pattern built to backtrack (`*a*a*a…b` against a long name) costs no
/// more than any other.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    ShellGlob::new(pattern).is_match(name)
}

/// A shell glob, parsed once, for matching many names (the entries of one
/// directory).
#[derive(Clone, Debug)]
pub(crate) struct ShellGlob {
    tokens: Vec<Token>,
    /// The pattern starts with a literal `.` (so it may match a hidden name).
    leading_dot: bool,
}

/// One unit of a glob: every token but `Star` matches exactly one character.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    Lit(char),
    One,
    Star,
    Class { negate: bool, items: Vec<ClassItem> },
}

#[derive(Clone, Debug, PartialEq)]
enum ClassItem {
    Char(char),
    Range(char, char),
}

impl Token {
    /// Whether this one-character token matches `c` (`Star` never gets here).
    fn matches(&self, c: char) -> bool {
        match self {
            Token::Lit(l) => *l == c,
            Token::One => true,
            Token::Star => false,
            Token::Class { negate, items } => {
                let hit = items.iter().any(|item| match item {
                    ClassItem::Char(m) => *m == c,
                    ClassItem::Range(lo, hi) => *lo <= c && c <= *hi,
                });
                hit != *negate
            }
        }
    }
}

impl ShellGlob {
    /// Parses `pattern`. Every text is a pattern: an unclosed `[` is a literal.
    pub(crate) fn new(pattern: &str) -> ShellGlob {
        let p: Vec<char> = pattern.chars().collect();
        let mut tokens = Vec::with_capacity(p.len());
        let mut i = 0;
        while i < p.len() {
            match p[i] {
                '*' => {
                    // A run of stars is one star.
                    if tokens.last() != Some(&Token::Star) {
                        tokens.push(Token::Star);
                    }
                    i += 1;
                }
                '?' => {
                    tokens.push(Token::One);
                    i += 1;
                }
                '[' => match class(&p[i..]) {
                    Some((len, token)) => {
                        tokens.push(token);
                        i += len;
                    }
                    None => {
                        tokens.push(Token::Lit('['));
                        i += 1;
                    }
                },
                c => {
                    tokens.push(Token::Lit(c));
                    i += 1;
                }
            }
        }
        ShellGlob {
            tokens,
            leading_dot: pattern.starts_with('.'),
        }
    }

    /// Whether `name` (one path component) matches, with the shell's rule that
    /// a leading `.` is matched only by a literal `.`.
    pub(crate) fn is_match(&self, name: &str) -> bool {
        if name.starts_with('.') && !self.leading_dot {
            return false;
        }
        self.run(name, &mut 0)
    }

    /// The matcher: greedy, and on a mismatch it retries only from the last
    /// star, one character further. Every token between two stars matches
    /// exactly one character, so the last star is the only one worth retrying:
    /// an earlier star taking more would only move the same fixed-length
    /// segment further right, which the last star's retries already cover.
    /// Each retry advances the name's restart point, so the work is at most
    /// (name length + 1) × (token count + 1) steps; `steps` counts them.
    fn run(&self, name: &str, steps: &mut usize) -> bool {
        let tokens = &self.tokens;
        let (mut t, mut n) = (0usize, 0usize);
        // (token after the last star, byte offset where that star's match ends).
        let mut retry: Option<(usize, usize)> = None;
        while n < name.len() {
            *steps += 1;
            let c = name[n..].chars().next().unwrap_or_default();
            match tokens.get(t) {
                Some(Token::Star) => {
                    retry = Some((t + 1, n));
                    t += 1;
                    continue;
                }
                Some(token) if token.matches(c) => {
                    t += 1;
                    n += c.len_utf8();
                    continue;
                }
                _ => {}
            }
            let Some((after_star, star_end)) = retry else {
                return false;
            };
            // The last star swallows one more character; start over after it.
            let swallowed = name[star_end..].chars().next().unwrap_or_default();
            let star_end = star_end + swallowed.len_utf8();
            retry = Some((after_star, star_end));
            t = after_star;
            n = star_end;
        }
        tokens[t..].iter().all(|token| *token == Token::Star)
    }
}

/// Parses `[...]` at the start of `p`: its length and the class token. `None`
/// when it never closes (then the `[` is a literal).
fn class(p: &[char]) -> Option<(usize, Token)> {
    let mut i = 1;
    let negate = matches!(p.get(1), Some('!') | Some('^'));
    if negate {
        i += 1;
    }
    let start = i;
    // A `]` right after the opening is a member, not the end.
    if p.get(i) == Some(&']') {
        i += 1;
    }
    while i < p.len() && p[i] != ']' {
        i += 1;
    }
    if i >= p.len() {
        return None;
    }
    let members = &p[start..i];
    let mut items = Vec::with_capacity(members.len());
    let mut j = 0;
    while j < members.len() {
        if j + 2 < members.len() && members[j + 1] == '-' {
            items.push(ClassItem::Range(members[j], members[j + 2]));
            j += 3;
        } else {
            items.push(ClassItem::Char(members[j]));
            j += 1;
        }
    }
    Some((i + 1, Token::Class { negate, items }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match(".e*", ".env"));
        assert!(glob_match("*.rs", "main.rs"));
        assert!(!glob_match("*", ".env"));
        assert!(glob_match(".[e]nv", ".env"));
        assert!(glob_match(".[!x]nv", ".env"));
        assert!(!glob_match(".[!e]nv", ".env"));
        assert!(glob_match("[a-c]?", "b1"));
        assert!(glob_match("[", "["));
    }

    #[test]
    fn globs_agree_with_the_shell_on_the_details() {
        // Stars: empty runs, several in a row, at both ends.
        assert!(glob_match("*", "a"));
        assert!(glob_match("**", ""));
        assert!(glob_match("a*", "a"));
        assert!(glob_match("*a", "a"));
        assert!(glob_match("a**b", "ab"));
        assert!(glob_match("*ab*ab*", "xxabyyabzz"));
        assert!(!glob_match("*ab*ab*", "xxabyyazz"));
        assert!(glob_match("a*b*c", "abbbbc"));
        assert!(!glob_match("a*b*c", "abbbbcd"));
        assert!(glob_match("*.tar.gz", "x.tar.tar.gz"));
        // The retry after a star has to reconsider a partial match.
        assert!(glob_match("*aab", "aaab"));
        assert!(glob_match("*?b", "ab"));
        assert!(!glob_match("?*b", "b"));
        // Classes: `]` first is a member, `-` at an end is literal, `!`/`^`.
        assert!(glob_match("[]]", "]"));
        assert!(glob_match("[!]]", "a"));
        assert!(!glob_match("[!]]", "]"));
        assert!(glob_match("[a-]", "-"));
        assert!(glob_match("[^a]x", "bx"));
        assert!(glob_match("*[0-9]", "v10"));
        assert!(!glob_match("*[0-9]", "v1a"));
        assert!(glob_match("a[", "a["));
        assert!(glob_match("[*]", "*"));
        assert!(!glob_match("[*]", "a"));
        // Not UTF-8 bytes but characters: `?` is one character.
        assert!(glob_match("?", "é"));
        assert!(glob_match("*é*", "caféine"));
        assert!(!glob_match("??", "é"));
        // The leading dot: only a literal `.` matches it.
        assert!(!glob_match("?env", ".env"));
        assert!(!glob_match("[.]env", ".env"));
        assert!(!glob_match("*env", ".env"));
        assert!(glob_match(".*", ".env"));
        assert!(glob_match("*.env", "a.env"));
    }

    /// The obvious recursive matcher (exponential on some inputs): the
    /// reference the linear one must agree with, on inputs small enough.
    fn reference(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).any(|i| reference(&p[1..], &n[i..])),
            Some('?') => !n.is_empty() && reference(&p[1..], &n[1..]),
            Some('[') => match class(p) {
                Some((len, token)) => {
                    !n.is_empty() && token.matches(n[0]) && reference(&p[len..], &n[1..])
                }
                None => !n.is_empty() && n[0] == '[' && reference(&p[1..], &n[1..]),
            },
            Some(c) => !n.is_empty() && n[0] == *c && reference(&p[1..], &n[1..]),
        }
    }

    #[test]
    fn the_linear_matcher_agrees_with_the_reference() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let mut runner = TestRunner::new(Config {
            cases: 4000,
            failure_persistence: None,
            ..Config::default()
        });
        let strategy = (
            proptest::string::string_regex("[ab.*?\\[\\]!^-]{0,10}").unwrap(),
            proptest::string::string_regex("[ab.\\[\\]!^-]{0,10}").unwrap(),
        );
        runner
            .run(&strategy, |(pattern, name)| {
                let p: Vec<char> = pattern.chars().collect();
                let n: Vec<char> = name.chars().collect();
                let want =
                    (pattern.starts_with('.') || !name.starts_with('.')) && reference(&p, &n);
                prop_assert_eq!(
                    glob_match(&pattern, &name),
                    want,
                    "{:?} {:?}",
                    pattern,
                    name
                );
                Ok(())
            })
            .unwrap();
    }

    /// The worst shape for a backtracking matcher: `*a*a*…*b` against a long
    /// run of `a`. Exponential before; now bounded by the product of the
    /// lengths, counted in steps (not timed).
    #[test]
    fn backtracking_patterns_take_linear_steps() {
        for (stars, len) in [(12, 40), (30, 100), (200, 1000)] {
            let pattern = format!("{}b", "*a".repeat(stars));
            let glob = ShellGlob::new(&pattern);
            for name in ["a".repeat(len), format!("{}b", "a".repeat(len))] {
                let mut steps = 0;
                let hit = glob.run(&name, &mut steps);
                assert_eq!(hit, name.ends_with('b') && len >= stars, "{stars} {len}");
                let bound = (name.len() + 1) * (glob.tokens.len() + 1);
                assert!(steps <= bound, "{steps} steps > {bound}");
            }
        }
        // `?` and classes between the stars, and a long run of stars.
        let glob = ShellGlob::new(&format!("{}z", "*[a-c]?".repeat(50)));
        let mut steps = 0;
        assert!(!glob.run(&"ab".repeat(500), &mut steps));
        assert!(steps <= 1001 * (glob.tokens.len() + 1), "{steps}");
        let glob = ShellGlob::new(&"*".repeat(10_000));
        assert_eq!(glob.tokens, vec![Token::Star]);
        assert!(glob.is_match("anything"));
    }

    #[test]
    fn names() {
        let home = Path::new("/home/u");
        for secret in [
            "/home/u/.ssh",
            "/home/u/.aws/credentials",
            "/home/u/.config/gh/hosts.yml",
            "/home/u/.kube/config",
            "/home/u/.docker/config.json",
            "/ws/.env",
            "/ws/.env.production",
            "/ws/.e*",
            "/etc/shadow",
            "/proc/1/environ",
            "/proc/self/environ",
            "/etc/ssh/ssh_host_ed25519_key",
            "/root/.ssh/authorized_keys",
        ] {
            assert_eq!(
                path_risk(Path::new(secret), home),
                Some(Risk::Credential),
                "{secret}"
            );
        }
        for plain in [
            "/ws/.env.example",
            "/ws/.env.sample",
            "/ws/.env.template",
            "/ws/env",
            "/ws/.envrc.md",
            "/etc/passwd",
            "/etc/ssh/ssh_host_ed25519_key.pub",
            "/home/u/.config/nvim/init.lua",
            "/ws/*.rs",
        ] {
            assert_eq!(path_risk(Path::new(plain), home), None, "{plain}");
        }
    }
}
