//! Arguments that make a command riskier than its program's spec says,
//! whatever the program: a URL of a cloud metadata service (a credential
//! read) and a mode with the set-user-ID or set-group-ID bit (a program
//! that runs with its owner's rights for whoever starts it). Each raises
//! the part's risk, so that no saved approval for a milder use of the same
//! program covers it.
//!
//! And arguments that make a command a different request from the one its
//! prefix names, at the same risk ([`narrowed`]): a network command whose
//! host is not proved public (a service on this machine or its network),
//! a git remote that names a transport program (`ext::CMD`, `NAME::URL`).
//! A saved prefix (`curl *`, `git clone *`) does not answer them.

use toolgate_core::Risk;
use toolgate_core::local_host::local_host_of_word;
use toolgate_core::metadata_host::{host_of_word, is_metadata_host};

use super::words::Word;

/// The risk and reason `args` of the program `name` (already of risk
/// `risk`) raise the part to, if any.
pub(crate) fn raised(name: &str, risk: Risk, args: &[Word]) -> Option<(Risk, String)> {
    if risk >= Risk::Network {
        if let Some(host) = args
            .iter()
            .find_map(|w| host_of_word(&w.text).filter(|h| is_metadata_host(h)))
        {
            return Some((
                Risk::Credential,
                format!(
                    "`{name}` reaches {host}, a cloud metadata service, which hands out this machine's credentials"
                ),
            ));
        }
    }
    if let Some(key) = npm_config_secret(name, args) {
        return Some((
            Risk::Credential,
            format!(
                "`{name} config get {key}` prints a value outside the settings known to hold no credential (a registry's `_authToken` or `_password`, a proxy URL's password)"
            ),
        ));
    }
    if grants_privilege(name, args) {
        return Some((
            Risk::Destructive,
            format!(
                "`{name}` sets the set-user-ID or set-group-ID bit: the program then runs with its owner's rights for whoever starts it"
            ),
        ));
    }
    None
}

/// npm's settings whose values are never credentials (npm-config(7));
/// printing one is harmless. Any other key may hold one: npm stores
/// credentials under per-registry keys (`//registry.npmjs.org/:_authToken`,
/// `_auth`, `_password`, `username`, `certfile`…) and a proxy's URL may
/// carry a password.
const NPM_PLAIN_SETTINGS: &[&str] = &[
    "access",
    "audit",
    "audit-level",
    "cache",
    "color",
    "engine-strict",
    "fund",
    "git",
    "global",
    "globalconfig",
    "ignore-scripts",
    "include",
    "init-author-name",
    "init-author-email",
    "init-author-url",
    "init-license",
    "init-module",
    "init-version",
    "legacy-peer-deps",
    "location",
    "loglevel",
    "node-version",
    "omit",
    "package-lock",
    "prefer-offline",
    "prefer-online",
    "prefix",
    "progress",
    "registry",
    "save",
    "save-exact",
    "save-prefix",
    "scope",
    "script-shell",
    "shell",
    "strict-ssl",
    "tag",
    "umask",
    "unicode",
    "update-notifier",
    "userconfig",
    "workspaces",
];

/// The key `npm config get KEY…` (or `npm get`, and pnpm's) prints that is
/// not one of [`NPM_PLAIN_SETTINGS`] (nor a scope's `@scope:registry`).
fn npm_config_secret<'a>(name: &str, args: &'a [Word]) -> Option<&'a str> {
    if !matches!(name, "npm" | "pnpm") {
        return None;
    }
    let mut words = args
        .iter()
        .map(|w| w.text.as_str())
        .filter(|t| !t.starts_with('-'));
    match words.next()? {
        "config" | "c" => {
            if words.next()? != "get" {
                return None;
            }
        }
        "get" => {}
        _ => return None,
    }
    words.find(|key| {
        let plain = NPM_PLAIN_SETTINGS.contains(key)
            || key
                .strip_prefix('@')
                .and_then(|k| k.split_once(':'))
                .is_some_and(|(_, setting)| setting == "registry");
        !plain
    })
}

/// What a saved approval may answer, where narrower than the prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Saving {
    /// Only an approval of exactly this command.
    Exact,
    /// No approval: asked every time (code its arguments give).
    Never,
}

/// How `args` of the program `name` (of risk `risk`) narrow what a saved
/// approval may answer, with why in words, if they do:
/// * a command that runs a program or talks to the network and names a
///   host not proved public ([`toolgate_core::local_host`]): only the
///   exact command, since a
///   prefix saved for a public site would reach Docker's API on loopback
///   or a router's admin page;
/// * git given a remote of the form `NAME::ADDRESS`: git runs the remote
///   helper `git-remote-NAME` found on PATH (only the exact command), and
///   `ext::CMD` runs CMD through the shell (code the arguments give: never
///   saved), wherever the word stands (a remote, `--remote=`, an
///   `insteadOf` value).
pub(crate) fn narrowed(name: &str, risk: Risk, args: &[Word]) -> Option<(Saving, String)> {
    if name == "git" {
        let mut found: Option<(Saving, String)> = None;
        for w in args {
            let Some(transport) = remote_helper(&w.text) else {
                continue;
            };
            if transport.eq_ignore_ascii_case("ext") {
                return Some((
                    Saving::Never,
                    format!(
                        "`{}` makes git run the command it names (the `ext` transport), so it is asked every time",
                        w.text
                    ),
                ));
            }
            found.get_or_insert((
                Saving::Exact,
                format!(
                    "`{}` makes git run the program git-remote-{transport}, so only an approval of this exact command allows it",
                    w.text
                ),
            ));
        }
        if found.is_some() {
            return found;
        }
    }
    // A program that runs (`execute`: the tables do not prove what it does)
    // or talks to the network.
    if risk >= Risk::Execute {
        if let Some(host) = args.iter().find_map(|w| local_host_of_word(&w.text)) {
            return Some((
                Saving::Exact,
                format!(
                    "`{name}` reaches {host}, which is not proved to be a public host (a service on this machine or its network trusts whoever reaches it), so only an approval of this exact command allows it"
                ),
            ));
        }
    }
    None
}

/// The transport a git remote word names when git takes it for a remote
/// helper: `NAME::ADDRESS` (git's `transport_get`: a name of letters,
/// digits, `+`, `-` and `.` before `::`), also as an option's value
/// (`--remote=ext::…`) or inside a `-c` setting (`url.ext::….insteadOf`).
fn remote_helper(word: &str) -> Option<&str> {
    let at = word.find("::")?;
    let head = &word[..at];
    // The name runs back from `::` to the last character that cannot be
    // in it (`=`, `.` of `url.`, a quote).
    let start = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '+' || c == '-'))
        .map_or(0, |i| i + 1);
    let name = &head[start..];
    (!name.is_empty() && name.starts_with(|c: char| c.is_ascii_alphabetic())).then_some(name)
}

/// Whether `name` with `args` gives a file the set-user-ID or set-group-ID
/// bit: `chmod` with such a mode (symbolic `u+s`, `g=s`, `+s`; numeric
/// `4755`, `2755`) or copying another file's mode (`--reference`), and
/// `install`, `mkdir`, `mknod`, `mkfifo` with `-m`/`--mode` such a mode.
fn grants_privilege(name: &str, args: &[Word]) -> bool {
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    match name {
        "chmod" => {
            // `chmod [OPTION]... MODE[,MODE]... FILE...`: the first word
            // that is not an option is the mode; `--reference` copies a
            // mode it does not show.
            if texts.iter().any(|t| t.starts_with("--reference")) {
                return true;
            }
            let mut after_options = false;
            let mode = texts.iter().find(|t| {
                if after_options {
                    return true;
                }
                if **t == "--" {
                    after_options = true;
                    return false;
                }
                !(t.starts_with("--") || is_chmod_flag(t))
            });
            mode.is_some_and(|m| mode_grants(m))
        }
        "install" | "mkdir" | "mknod" | "mkfifo" => {
            let mut next_is_mode = false;
            texts.iter().any(|t| {
                if next_is_mode {
                    next_is_mode = false;
                    return mode_grants(t);
                }
                if *t == "-m" || *t == "--mode" {
                    next_is_mode = true;
                    return false;
                }
                t.strip_prefix("--mode=")
                    .or_else(|| t.strip_prefix("-m").filter(|m| !m.is_empty()))
                    .is_some_and(mode_grants)
            })
        }
        _ => false,
    }
}

/// `chmod`'s short options (`-R`, `-v`, `-c`, `-f`, and bundles such as
/// `-Rv`); any other word starting with `-` is a mode (`-w`, `-x`).
fn is_chmod_flag(word: &str) -> bool {
    word.strip_prefix('-')
        .is_some_and(|f| !f.is_empty() && f.bytes().all(|b| b"Rcfv".contains(&b)))
}

/// Whether a mode argument may set the set-user-ID or set-group-ID bit:
/// every mode that is not proved plain ([`mode_is_plain`]).
fn mode_grants(mode: &str) -> bool {
    !mode_is_plain(mode)
}

/// Whether a mode (chmod(1)'s grammar: an octal number, or clauses
/// `[ugoa]*([-+=]([rwxXst]*|[ugo]|[0-7]+))+` separated by commas) is proved
/// to set neither the set-user-ID nor the set-group-ID bit. What the grammar
/// does not describe is not proved (a mode chmod refuses is harmless, but a
/// spelling this reading missed would not be).
fn mode_is_plain(mode: &str) -> bool {
    let octal_plain = |digits: &str| u32::from_str_radix(digits, 8).is_ok_and(|v| v & 0o6000 == 0);
    if !mode.is_empty() && mode.bytes().all(|b| b.is_ascii_digit()) {
        return octal_plain(mode);
    }
    mode.split(',').all(|clause| {
        let actions = clause.trim_start_matches(['u', 'g', 'o', 'a']);
        if actions.is_empty() {
            return false;
        }
        // Each action: an operator, then what it applies.
        let mut rest = actions;
        while let Some(op) = rest.chars().next() {
            if !matches!(op, '-' | '+' | '=') {
                return false;
            }
            let body_end = rest[1..]
                .find(['-', '+', '='])
                .map_or(rest.len(), |i| i + 1);
            let body = &rest[1..body_end];
            let plain = if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
                op == '-' || octal_plain(body)
            } else if matches!(body, "u" | "g" | "o") {
                // Copies read, write and execute bits only.
                true
            } else {
                body.bytes().all(|b| b"rwxXst".contains(&b)) && (op == '-' || !body.contains('s'))
            };
            if !plain {
                return false;
            }
            rest = &rest[body_end..];
        }
        true
    })
}

#[cfg(test)]
mod tests {
    use super::mode_grants;

    #[test]
    fn modes_that_grant_privilege() {
        for m in [
            "u+s",
            "+s",
            "g+s",
            "ug+xs",
            "a=rwxs",
            "4755",
            "2755",
            "6755",
            "04755",
            "u+x,u+s",
            "=4755",
            "+4000",
            "u=rwxs,go=rx",
            "0004755",
            "u+x+s",
            "u-x+s",
            "u+z",
            "",
            "8755",
            "u",
            ",",
        ] {
            assert!(mode_grants(m), "{m}");
        }
        for m in [
            "+x",
            "755",
            "0755",
            "1777",
            "u-s",
            "a+rwx",
            "644",
            "o+t",
            "=755",
            "-4000",
            "g=u",
            "u=rwx,go=rx",
            "a-st",
            "+X",
            "u+x-w",
        ] {
            assert!(!mode_grants(m), "{m}");
        }
    }
}
