//! The arguments of `toolgate-hook`, read by hand: the program that answers
//! every call of an agent does not link or build a command-line parser.
//! The same flags and variables as `toolgate hook AGENT`.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::Durability;

use super::Options;

/// What `toolgate-hook AGENT [FLAGS]` was asked.
#[derive(Clone, Debug)]
pub struct Invocation {
    /// The agent's name, as given.
    pub agent: String,
    /// `--root`, `--config` and `--mode`.
    pub options: Options,
    /// `--data-dir`, else `TOOLGATE_DATA_DIR`.
    pub data_dir: Option<PathBuf>,
    /// `--durability`, else `TOOLGATE_DURABILITY`, else normal.
    pub durability: Durability,
}

/// Arguments `toolgate-hook` cannot use.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ArgsError {
    /// The agent, when it was named: its blocking form answers.
    pub agent: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// Reads `args` (without the program name), and the variables the flags
/// fall back on.
pub fn parse_invocation(args: impl IntoIterator<Item = OsString>) -> Result<Invocation, ArgsError> {
    let mut agent: Option<String> = None;
    let mut options = Options::default();
    let mut data_dir = std::env::var_os("TOOLGATE_DATA_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let mut durability = std::env::var("TOOLGATE_DURABILITY").ok();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let fail = |agent: &Option<String>, message: String| ArgsError {
            agent: agent.clone(),
            message,
        };
        let Some(text) = arg.to_str() else {
            return Err(fail(&agent, format!("an argument is not UTF-8: {arg:?}")));
        };
        let Some(flag) = text.strip_prefix("--") else {
            if agent.is_some() {
                return Err(fail(&agent, format!("unexpected argument `{text}`")));
            }
            agent = Some(text.to_string());
            continue;
        };
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(OsString::from(value))),
            None => (flag, None),
        };
        let Some(value) = inline.or_else(|| args.next()) else {
            return Err(fail(&agent, format!("--{name} needs a value")));
        };
        match name {
            "root" => options.root = Some(PathBuf::from(value)),
            "config" => options.config.push(PathBuf::from(value)),
            "data-dir" => data_dir = Some(PathBuf::from(value)),
            "mode" | "durability" => {
                let Some(value) = value.to_str() else {
                    return Err(fail(&agent, format!("--{name} is not UTF-8")));
                };
                if name == "mode" {
                    options.mode = Some(value.parse().map_err(|e| fail(&agent, e))?);
                } else {
                    durability = Some(value.to_string());
                }
            }
            other => return Err(fail(&agent, format!("unknown flag --{other}"))),
        }
    }
    let durability = match durability.as_deref() {
        None | Some("normal") => Durability::Normal,
        Some("full") => Durability::Full,
        Some(other) => {
            return Err(ArgsError {
                agent,
                message: format!("durability `{other}` is neither normal nor full"),
            });
        }
    };
    let Some(agent) = agent else {
        return Err(ArgsError {
            agent: None,
            message: "no agent named".into(),
        });
    };
    Ok(Invocation {
        agent,
        options,
        data_dir,
        durability,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Invocation, ArgsError> {
        parse_invocation(args.iter().map(OsString::from))
    }

    #[test]
    fn flags_in_either_form_around_the_agent() {
        let i = parse(&[
            "--root",
            "/p",
            "codex",
            "--config=/a.toml",
            "--config",
            "/b.toml",
            "--mode",
            "auto",
            "--data-dir=/d",
            "--durability",
            "full",
        ])
        .unwrap();
        assert_eq!(i.agent, "codex");
        assert_eq!(i.options.root, Some(PathBuf::from("/p")));
        assert_eq!(
            i.options.config,
            [PathBuf::from("/a.toml"), PathBuf::from("/b.toml")]
        );
        assert!(i.options.mode.is_some());
        assert_eq!(i.data_dir, Some(PathBuf::from("/d")));
        assert_eq!(i.durability, Durability::Full);
    }

    #[test]
    fn bad_arguments_name_the_agent_when_it_was_given() {
        let e = parse(&["cursor", "--bogus", "x"]).unwrap_err();
        assert_eq!(e.agent.as_deref(), Some("cursor"));
        assert!(e.message.contains("--bogus"), "{e}");
        let e = parse(&["gemini", "--mode", "sideways"]).unwrap_err();
        assert_eq!(e.agent.as_deref(), Some("gemini"));
        let e = parse(&["claude-code", "--root"]).unwrap_err();
        assert!(e.message.contains("needs a value"), "{e}");
        assert!(parse(&[]).unwrap_err().agent.is_none());
        assert!(parse(&["a", "b"]).is_err());
    }
}
