//! Which paths hold secrets: the credential part of the classification.
//!
//! Judged on the path's components, so it works on both the lexical path (what
//! the command names) and the resolved one (where symlinks lead).

use std::path::{Component, Path};

use toolgate_core::credential::{self, SECRET_FILES, is_credential};
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
        if let Some(of) = credential::hard_link_of(path, home, roots) {
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
    SECRET_FILES
        .iter()
        .chain(&[".env.local", ".env.production"])
        .any(|p| glob_match(&pattern, p))
}

/// Minimal shell glob: `*`, `?` and `[...]` (with `!`/`^` negation and ranges).
/// A leading `.` must be matched literally, as the shell does.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n)
}

fn match_from(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|i| match_from(&p[1..], &n[i..])),
        Some('?') => !n.is_empty() && match_from(&p[1..], &n[1..]),
        Some('[') => match class(p) {
            Some((set_len, matches)) => {
                !n.is_empty() && matches(n[0]) && match_from(&p[set_len..], &n[1..])
            }
            None => !n.is_empty() && n[0] == '[' && match_from(&p[1..], &n[1..]),
        },
        Some(c) => !n.is_empty() && n[0] == *c && match_from(&p[1..], &n[1..]),
    }
}

/// Parses `[...]` at the start of `p`: its length and a matcher.
fn class(p: &[char]) -> Option<(usize, impl Fn(char) -> bool)> {
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
    let members: Vec<char> = p[start..i].to_vec();
    let matcher = move |c: char| {
        let mut hit = false;
        let mut j = 0;
        while j < members.len() {
            if j + 2 < members.len() && members[j + 1] == '-' {
                if members[j] <= c && c <= members[j + 2] {
                    hit = true;
                }
                j += 3;
            } else {
                if members[j] == c {
                    hit = true;
                }
                j += 1;
            }
        }
        hit != negate
    };
    Some((i + 1, matcher))
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
