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
        "chmod" => texts
            .iter()
            .any(|t| t.starts_with("--reference") || (!t.starts_with("--") && mode_grants(t))),
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

/// Whether a mode argument sets the set-user-ID or set-group-ID bit: a
/// numeric mode whose fourth-from-last digit has 4 or 2, or a symbolic
/// clause that adds or sets `s`.
fn mode_grants(mode: &str) -> bool {
    if !mode.is_empty() && mode.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        let digits = mode.trim_start_matches('0');
        if digits.len() >= 4 {
            let special = digits.as_bytes()[digits.len() - 4] - b'0';
            return special & 0o6 != 0;
        }
        return false;
    }
    mode.split(',').any(|clause| {
        clause
            .find(['+', '='])
            .is_some_and(|at| clause[at..].contains('s'))
    })
}

#[cfg(test)]
mod tests {
    use super::mode_grants;

    #[test]
    fn modes_that_grant_privilege() {
        for m in [
            "u+s", "+s", "g+s", "ug+xs", "a=rwxs", "4755", "2755", "6755", "04755", "u+x,u+s",
        ] {
            assert!(mode_grants(m), "{m}");
        }
        for m in ["+x", "755", "0755", "1777", "u-s", "a+rwx", "644", "o+t"] {
            assert!(!mode_grants(m), "{m}");
        }
    }
}
