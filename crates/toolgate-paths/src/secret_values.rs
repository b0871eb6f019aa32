//! Configuration files that are not secret as a whole but hold secrets as
//! some of their values: git's `~/.gitconfig` and `~/.config/git/config` (a
//! token in an `insteadOf` URL, an `extraheader`, `sendemail.smtpPass`),
//! cargo's `~/.cargo/config.toml` (a registry's `token`, `[env]`, a proxy's
//! password), cabal's `~/.cabal/config` (a repository's `password`). Masking
//! such a file whole breaks the tool that reads it, so where it must stay
//! readable (the sandbox shows them to builds) a copy is shown instead
//! ([`shown_copy`]): for git and cargo only what is known to hold no secret
//! (git's keys of [`GIT_CONFIG_HARMLESS_KEYS`], cargo's sections of
//! [`CARGO_SECTIONS`] without their token lines), for cabal the file
//! without its password lines.
//!
//! ```
//! use toolgate_paths::secret_values::{shown_copy, shown_kind};
//! let kind = shown_kind(b".cargo", b"config.toml").unwrap();
//! let text = "[registry]\ntoken = \"cio123\"\n[alias]\nb = \"build\"\n[env]\nK = \"v\"\n";
//! assert_eq!(shown_copy(kind, text).as_deref(), Some("[registry]\n[alias]\nb = \"build\"\n"));
//! ```

/// How a file of secret values is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// Without the lines that set these keys (compared without regard to
    /// ASCII case, anywhere on a line: `token = "…"`, an inline
    /// `registry = { token = "…" }`, cabal's `password: …`).
    WithoutKeys(&'static [&'static str]),
    /// Only git's keys known to hold no secret ([`git_config_shown`]).
    GitConfig,
    /// Only cargo's known sections, without their secret keys
    /// ([`cargo_config_shown`]).
    CargoConfig,
}

/// `(directory, file, how it is shown, where documented)`: the file inside
/// that directory holds secrets as some of its values. The directory `""`
/// is the home directory itself (`~/.gitconfig`).
pub const SECRET_VALUE_FILES: &[(&str, &str, Shown, &str)] = &[
    (
        ".cargo",
        "config.toml",
        Shown::CargoConfig,
        "https://doc.rust-lang.org/cargo/reference/config.html (registry.token, registries.<name>.token, the asymmetric secret-key, [env], http.proxy)",
    ),
    (
        ".cargo",
        "config",
        Shown::CargoConfig,
        "cargo's configuration under its older name: https://doc.rust-lang.org/cargo/reference/config.html#hierarchical-structure",
    ),
    (
        ".cabal",
        "config",
        Shown::WithoutKeys(&["password", "token"]),
        "https://cabal.readthedocs.io/en/stable/config.html (a repository's username and password for upload)",
    ),
    (
        "",
        ".gitconfig",
        Shown::GitConfig,
        "git-config(1): any key may hold a secret (http.<url>.extraHeader, sendemail.smtpPass, a token in url.<base>.insteadOf, other tools' sections)",
    ),
    (
        "git",
        "config",
        Shown::GitConfig,
        "git-config(1), $XDG_CONFIG_HOME/git/config",
    ),
];

const CARGO_KEYS: &[&str] = &["token", "secret-key"];

/// Cargo's configuration tables shown to builds (cargo-config(5)); every
/// other table is left out: `[env]` sets variables for builds, where people
/// keep secrets, and `[credential-alias]` names credential providers with
/// their arguments.
pub const CARGO_SECTIONS: &[&str] = &[
    "alias",
    "build",
    "cache",
    "cargo-new",
    "doc",
    "future-incompat-report",
    "gc",
    "http",
    "install",
    "net",
    "patch",
    "profile",
    "registries",
    "registry",
    "resolver",
    "source",
    "target",
    "term",
    "unstable",
];

/// How the file called `name` in a directory called `parent` (`""`: a file
/// of the home directory itself) is shown, when it holds secret values
/// ([`SECRET_VALUE_FILES`]).
pub fn shown_kind(parent: &[u8], name: &[u8]) -> Option<Shown> {
    SECRET_VALUE_FILES
        .iter()
        .find(|(d, f, _, _)| parent == d.as_bytes() && name == f.as_bytes())
        .map(|(_, _, shown, _)| *shown)
}

/// The copy of `text` shown for a file of kind `kind`; `None` when it cannot
/// be shown in part (the caller hides it whole).
pub fn shown_copy(kind: Shown, text: &str) -> Option<String> {
    match kind {
        Shown::WithoutKeys(keys) => redacted(text, keys),
        Shown::GitConfig => git_config_shown(text),
        Shown::CargoConfig => cargo_config_shown(text),
    }
}

/// The configuration variables git defines whose values are never secrets
/// (git-config(1), "Variables"), as `section.variable` or, for variables
/// under a subsection, `section.*.variable`; names ignore case. Printing one
/// is a read. A section is not enough: git stores any name under any section
/// (`user.password`, `remote.origin.token`), so every other key — `http.*`
/// (a CI checkout's `extraheader`), `credential.*`, `sendemail.smtpPass`,
/// `alias.*`, another tool's section — may hold a credential.
pub const GIT_CONFIG_HARMLESS_KEYS: &[&str] = &[
    "core.autocrlf",
    "core.bare",
    "core.editor",
    "core.eol",
    "core.excludesfile",
    "core.filemode",
    "core.hookspath",
    "core.ignorecase",
    "core.logallrefupdates",
    "core.pager",
    "core.precomposeunicode",
    "core.quotepath",
    "core.repositoryformatversion",
    "core.safecrlf",
    "core.sparsecheckout",
    "core.symlinks",
    "core.worktree",
    "user.name",
    "user.email",
    "user.signingkey",
    "user.useconfigonly",
    "author.name",
    "author.email",
    "committer.name",
    "committer.email",
    "init.defaultbranch",
    "init.templatedir",
    "pull.rebase",
    "pull.ff",
    "push.default",
    "push.autosetupremote",
    "push.followtags",
    "fetch.prune",
    "fetch.prunetags",
    "merge.conflictstyle",
    "merge.ff",
    "merge.tool",
    "diff.tool",
    "diff.algorithm",
    "rebase.autostash",
    "rebase.autosquash",
    "rebase.updaterefs",
    "commit.gpgsign",
    "commit.template",
    "tag.gpgsign",
    "gpg.format",
    "gpg.program",
    "color.ui",
    "status.showuntrackedfiles",
    "log.date",
    "safe.directory",
    "branch.autosetupmerge",
    "branch.autosetuprebase",
    "branch.*.remote",
    "branch.*.merge",
    "branch.*.rebase",
    "branch.*.pushremote",
    "branch.*.description",
    "remote.*.url",
    "remote.*.pushurl",
    "remote.*.fetch",
    "remote.*.push",
    "remote.*.mirror",
    "remote.*.tagopt",
    "remote.*.prune",
    "submodule.*.url",
    "submodule.*.path",
    "submodule.*.branch",
    "submodule.*.update",
    // Where git finds more configuration, and URL rewrites (a subsection
    // carrying `user:token@` is never shown): paths and URL prefixes.
    "include.path",
    "includeif.*.path",
    "url.*.insteadof",
    "url.*.pushinsteadof",
    // Git LFS's filter, which a checkout of an LFS repository runs.
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "filter.*.required",
];

/// Whether the value of git's configuration key `key` (`section.name` or
/// `section.subsection.name`, any case) is never a secret: it is one of
/// [`GIT_CONFIG_HARMLESS_KEYS`].
///
/// ```
/// use toolgate_paths::secret_values::git_key_holds_no_secret;
/// assert!(git_key_holds_no_secret("user.email"));
/// assert!(git_key_holds_no_secret("remote.origin.url"));
/// assert!(!git_key_holds_no_secret("http.https://x/.extraheader"));
/// assert!(!git_key_holds_no_secret("sendemail.smtppass"));
/// ```
pub fn git_key_holds_no_secret(key: &str) -> bool {
    let Some((section, rest)) = key.split_once('.') else {
        return false;
    };
    let (subsection, variable) = match rest.rsplit_once('.') {
        Some((sub, var)) => (Some(sub), var),
        None => (None, rest),
    };
    harmless(section, subsection, variable)
}

fn harmless(section: &str, subsection: Option<&str>, variable: &str) -> bool {
    GIT_CONFIG_HARMLESS_KEYS.iter().any(|known| {
        let mut parts = known.split('.');
        let (Some(s), Some(middle), last) = (parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        let (want_sub, var) = match last {
            Some(var) => (true, var),
            None => (false, middle),
        };
        s.eq_ignore_ascii_case(section)
            && var.eq_ignore_ascii_case(variable)
            && want_sub == subsection.is_some()
    })
}

/// Whether `text` holds a URL with a user part (`https://user:token@host`,
/// `https://token@host`): never shown.
fn has_userinfo(text: &str) -> bool {
    text.match_indices("://").any(|(at, _)| {
        let rest = &text[at + 3..];
        let authority = rest
            .split(|c: char| c == '/' || c == '"' || c == '\'' || c.is_whitespace())
            .next()
            .unwrap_or("");
        authority.contains('@')
    })
}

/// Git's configuration with only what is known to hold no secret: each
/// variable of [`GIT_CONFIG_HARMLESS_KEYS`] whose value carries no URL user
/// part, under its section's header (written only when something of the
/// section is kept, and never for a subsection carrying a user part).
/// Comments and every other variable, with its continuation lines, are left
/// out. `None` when a section header cannot be read (hidden whole).
pub fn git_config_shown(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    // The section being read: (name, subsection, its header as written).
    let mut section: Option<(String, Option<String>, String)> = None;
    let mut header_written = false;
    let mut continued = false;
    let mut keep_continued = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if continued {
            continued = body.ends_with('\\');
            if keep_continued {
                out.push_str(line);
            }
            continue;
        }
        let mut rest = body.trim_start();
        if rest.starts_with('[') {
            let (name, sub, header, after) = git_header(rest)?;
            section = Some((name, sub, header));
            header_written = false;
            rest = after.trim_start();
        }
        if rest.is_empty() || rest.starts_with(['#', ';']) {
            continue;
        }
        continued = rest.ends_with('\\');
        let variable = rest
            .split(|c: char| c == '=' || c.is_whitespace())
            .next()
            .unwrap_or("");
        let keep = section.as_ref().is_some_and(|(name, sub, _)| {
            !sub.as_deref().is_some_and(has_userinfo) && harmless(name, sub.as_deref(), variable)
        }) && !has_userinfo(rest)
            && !continued;
        keep_continued = false;
        if keep {
            if let Some((_, _, header)) = &section {
                if !header_written {
                    out.push_str(header);
                    out.push('\n');
                    header_written = true;
                }
            }
            out.push('\t');
            out.push_str(rest);
            out.push('\n');
        }
    }
    Some(out)
}

/// A git section header at the start of `line` (`[core]`, `[remote
/// "origin"]`, the old `[remote.origin]`): its name (lower case), its
/// subsection, the header as written, and what follows it on the line.
fn git_header(line: &str) -> Option<(String, Option<String>, String, &str)> {
    let inner_start = 1;
    let bytes = line.as_bytes();
    let mut i = inner_start;
    let mut quoted = false;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quoted => i += 1,
            b'"' => quoted = !quoted,
            b']' if !quoted => break,
            _ => {}
        }
        i += 1;
    }
    if i >= bytes.len() {
        return None;
    }
    let inner = &line[inner_start..i];
    let header = line[..=i].to_string();
    let after = &line[i + 1..];
    let (name, sub) = match inner.find('"') {
        Some(q) => {
            let sub = inner[q + 1..].trim_end().strip_suffix('"')?;
            (inner[..q].trim(), Some(sub.to_string()))
        }
        None => match inner.split_once('.') {
            Some((n, s)) => (n.trim(), Some(s.trim().to_string())),
            None => (inner.trim(), None),
        },
    };
    Some((name.to_ascii_lowercase(), sub, header, after))
}

/// Cargo's configuration with only the tables of [`CARGO_SECTIONS`] (a key
/// outside any table counts by its first dotted part: `env.K = …` is
/// `[env]`), without the lines that set a registry's `token` or
/// `secret-key` and without any line carrying a URL user part; a line that
/// continues a value (an array's items) follows its key. `None` for a
/// multi-line string, which lines cannot cut safely.
pub fn cargo_config_shown(text: &str) -> Option<String> {
    if text.contains("\"\"\"") || text.contains("\'\'\'") {
        return None;
    }
    let known = |name: &str| {
        let top = name
            .trim()
            .trim_matches(['"', '\''])
            .split('.')
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches(['"', '\'']);
        CARGO_SECTIONS.contains(&top)
    };
    let mut out = String::with_capacity(text.len());
    // Whether the table being read is shown (`None`: the root, judged per key).
    let mut table: Option<bool> = None;
    let mut keep_continued = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if t.starts_with('[') {
            let name = t.trim_start_matches('[');
            let name = name.split(']').next().unwrap_or("");
            let shown = known(name) && !has_userinfo(t);
            table = Some(shown);
            keep_continued = false;
            if shown {
                out.push_str(line);
            }
            continue;
        }
        let assigns = t.contains('=')
            && !t.starts_with(['"', '\'', '{', ']', '}'])
            && t.split('=').next().is_some_and(|k| !k.contains(['[', ',']));
        if !assigns {
            // An item of the value above (a multi-line array).
            if keep_continued {
                out.push_str(line);
            }
            continue;
        }
        let key = t.split('=').next().unwrap_or("");
        let in_shown = match table {
            Some(shown) => shown,
            None => known(key),
        };
        let keep = in_shown && !sets_a_key(t, CARGO_KEYS) && !has_userinfo(t);
        keep_continued = keep;
        if keep {
            out.push_str(line);
        }
    }
    Some(out)
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
        let keys = CARGO_KEYS;
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
        let Some(Shown::WithoutKeys(keys)) = shown_kind(b".cabal", b"config") else {
            panic!("cabal's config has secret keys")
        };
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
    fn git_config_keeps_only_keys_known_to_hold_no_secret() {
        let text = "# a comment CANARY0\n[user]\n\tname = Ana\n[core] sshCommand = ssh CANARY1\n\
                    [core]\n\teditor = vim\n\tpager = less \\\n CANARY2\n\
                    [url \"https://t:CANARY3@github.com/\"]\n\tinsteadOf = https://github.com/\n\
                    [url \"git@github.com:\"]\n\tinsteadOf = https://github.com/\n\
                    [remote \"origin\"]\n\turl = https://u:CANARY4@h/r\n\tfetch = +refs/*:refs/*\n\
                    [http \"https://h/\"]\n\textraheader = CANARY5\n[bad\n";
        assert_eq!(
            git_config_shown(text),
            None,
            "an unreadable header hides it whole"
        );
        let text = text.trim_end_matches("[bad\n");
        let out = git_config_shown(text).unwrap();
        assert!(!out.contains("CANARY"), "{out}");
        for kept in [
            "name = Ana",
            "editor = vim",
            "[url \"git@github.com:\"]",
            "fetch = +refs/*:refs/*",
        ] {
            assert!(out.contains(kept), "{kept} is gone: {out}");
        }
        assert!(!out.contains("[http"), "{out}");
    }

    #[test]
    fn cargo_config_keeps_only_its_tables_without_tokens_or_user_parts() {
        let text = "env.K = \"CANARY0\"\nbuild.jobs = 4\n[env]\nK = \"CANARY1\"\n\
                    [build]\nrustflags = [\n  \"-C\", \"target-cpu=native\",\n]\n\
                    [http]\nproxy = \"http://u:CANARY2@p:3128\"\ntimeout = 30\n\
                    [credential-alias]\nmy = [\"helper\", \"--token\", \"CANARY3\"]\n";
        let out = cargo_config_shown(text).unwrap();
        assert!(!out.contains("CANARY"), "{out}");
        for kept in [
            "build.jobs = 4",
            "target-cpu=native",
            "timeout = 30",
            "[http]",
        ] {
            assert!(out.contains(kept), "{kept} is gone: {out}");
        }
    }

    #[test]
    fn other_files_have_no_secret_values() {
        assert!(shown_kind(b".cargo", b"env").is_none());
        assert!(shown_kind(b"ws", b"config.toml").is_none());
    }
}
