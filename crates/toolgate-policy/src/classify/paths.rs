//! Which paths hold secrets: the credential part of the classification.
//!
//! Judged on the path's components, so it works on both the lexical path (what
//! the command names) and the resolved one (where symlinks lead).

use std::path::{Component, Path};

use toolgate_core::Risk;

/// Directory names whose whole content is secret, wherever they appear.
const SECRET_DIRS: &[&str] = &[".ssh", ".aws", ".gnupg", ".password-store", ".azure"];

/// `(directory, entry)` pairs: the entry inside that directory is secret
/// (`entry = "*"` means anything below it).
const SECRET_PAIRS: &[(&str, &str)] = &[
    (".config", "gh"),
    (".config", "gcloud"),
    (".docker", "config.json"),
    (".kube", "config"),
    ("keyrings", "*"),
];

/// File names that are secret wherever they are.
const SECRET_FILES: &[&str] = &[
    ".env",
    ".git-credentials",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".htpasswd",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
];

/// `.env.*` variants that are templates, not secrets.
const ENV_TEMPLATES: &[&str] = &[
    ".env.example",
    ".env.sample",
    ".env.template",
    ".env.dist",
    ".env.defaults",
];

/// Absolute paths (or directories) outside any home that hold secrets.
const SECRET_SYSTEM: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/shadow-",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssl/private",
];

/// `Some(Risk::Credential)` when `path` names a secret: `~/.ssh`, `~/.aws`,
/// `~/.config/gh`, `.git-credentials`, `.netrc`, `~/.docker/config.json`,
/// `~/.kube/config`, `.env` and `.env.*` (but not `.env.example`, `.env.sample`,
/// `.env.template`), `/etc/shadow`, `/proc/*/environ`, SSH host keys…
///
/// A glob in the last component counts when it could match such a name
/// (`.env*`, `.e*`).
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
    is_secret(path, home).then_some(Risk::Credential)
}

fn is_secret(path: &Path, home: &Path) -> bool {
    // One pass over the components, without allocating: this runs for every
    // path a command names.
    let mut first: Option<&str> = None;
    let mut prev: Option<&str> = None;
    let mut last: Option<&str> = None;
    for c in path.components() {
        let Component::Normal(s) = c else {
            continue;
        };
        let Some(name) = s.to_str() else {
            continue;
        };
        if SECRET_DIRS.contains(&name) {
            return true;
        }
        if let Some(dir) = prev {
            if SECRET_PAIRS
                .iter()
                .any(|(d, entry)| dir == *d && (*entry == "*" || name == *entry))
            {
                return true;
            }
        }
        first.get_or_insert(name);
        prev = Some(name);
        last = Some(name);
    }
    if last.is_some_and(secret_name) {
        return true;
    }
    // Every system secret lives under `/etc` or `/proc`.
    if path.is_absolute() && matches!(first, Some("etc" | "proc")) && is_system_secret(path) {
        return true;
    }
    // `~/.kube` itself, `~/.config/gh` itself: the directory holding the secret.
    if matches!(last, Some(".kube" | ".docker" | "gh")) {
        if let Ok(rest) = path.strip_prefix(home) {
            let rest = rest.to_string_lossy();
            if rest == ".kube" || rest == ".docker" || rest == ".config/gh" {
                return true;
            }
        }
    }
    false
}

fn is_system_secret(path: &Path) -> bool {
    if SECRET_SYSTEM.iter().any(|s| path.starts_with(s)) {
        return true;
    }
    let text = path.to_string_lossy();
    // Process environments hold every secret the process was given.
    if text.starts_with("/proc/") && text.ends_with("/environ") {
        return true;
    }
    // SSH host private keys (the `.pub` halves are public).
    if let Some(name) = text.strip_prefix("/etc/ssh/") {
        return name.starts_with("ssh_host_") && !name.ends_with(".pub");
    }
    false
}

/// Whether a file name is a secret by itself; globs count when they could match one.
fn secret_name(name: &str) -> bool {
    if has_glob(name) {
        return glob_may_match_secret(name);
    }
    if SECRET_FILES.contains(&name) {
        return true;
    }
    name.starts_with(".env.") && !ENV_TEMPLATES.contains(&name)
}

fn has_glob(name: &str) -> bool {
    name.contains(['*', '?', '['])
}

/// A glob like `.e*`, `.env*`, `*credentials*`, `.?nv` may expand to a secret name.
fn glob_may_match_secret(pattern: &str) -> bool {
    let probes = [
        ".env",
        ".env.local",
        ".env.production",
        ".git-credentials",
        ".netrc",
        ".npmrc",
        ".pgpass",
        "id_rsa",
        "id_ed25519",
    ];
    probes.iter().any(|p| glob_match(pattern, p))
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
