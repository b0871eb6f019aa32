//! Arguments that make a command riskier than its program's spec says,
//! whatever the program: a URL of a cloud metadata service (a credential
//! read) and a mode with the set-user-ID or set-group-ID bit (a program
//! that runs with its owner's rights for whoever starts it). Each raises
//! the part's risk, so that no saved approval for a milder use of the same
//! program covers it.

use toolgate_core::Risk;
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
