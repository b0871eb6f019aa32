//! `[sandbox]`: how bash commands are confined.
//!
//! ```toml
//! [sandbox]
//! mode = "auto"                       # auto | required | off
//! readable = ["~/.config/my-tool"]      # home places shown read-only, besides the toolchains
//! env = ["CARGO_TARGET_DIR"]            # variables passed in, besides the allowlist
//! allow_domains = ["crates.io", "*.npmjs.org"]
//! writable = ["~/scratch"]              # written directly, never staged: other projects may run it
//! ```
//!
//! A project's config (untrusted) may only tighten: it may set
//! `mode = "required"`, nothing else.

use std::path::PathBuf;

use toml::Spanned;

use super::raw::{FirstProblem, RawSandbox, Section, Written};
use super::{ConfigError, Parser};
use crate::rules::Layer;

/// `[sandbox] mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SandboxMode {
    /// Confine every bash command where the machine can; run unconfined (and
    /// say so at start) where it cannot.
    #[default]
    Auto,
    /// Confine every bash command; where the machine cannot, bash refuses to run.
    Required,
    /// Never confine (the person's explicit choice, stated at start).
    Off,
}

impl SandboxMode {
    /// The name as written in config.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Auto => "auto",
            SandboxMode::Required => "required",
            SandboxMode::Off => "off",
        }
    }
}

/// One file's `[sandbox]` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SandboxConfig {
    /// `mode`, if set.
    pub mode: Option<SandboxMode>,
    /// `writable`: extra paths a confined command may write (`~/` expanded).
    pub writable: Vec<PathBuf>,
    /// `allow_domains`: names a confined command may reach through the proxy
    /// (exact names and `*.suffix`).
    pub allow_domains: Vec<String>,
    /// `readable`: places shown read-only inside the sandbox besides the
    /// home directory's toolchains and caches (`~/` expanded).
    pub readable: Vec<PathBuf>,
    /// `env`: names of variables a confined command inherits besides the
    /// allowlist.
    pub env: Vec<String>,
}

impl Parser<'_> {
    pub(super) fn sandbox(
        &self,
        section: &Spanned<Section<RawSandbox>>,
    ) -> Result<SandboxConfig, ConfigError> {
        let (written, keys) =
            self.section_table(section, "sandbox", "write [sandbox] with mode = \"auto\"")?;
        let mut first = FirstProblem::new();
        self.unknown_keys(
            keys,
            RawSandbox::KEYS,
            "[sandbox]",
            "use mode, writable, readable, env or allow_domains",
            &mut first,
        );
        let out = SandboxConfig {
            mode: first.field(written.mode.as_ref(), |v| self.sandbox_mode(v)),
            writable: first
                .field(written.writable.as_ref(), |v| self.writable(v))
                .unwrap_or_default(),
            allow_domains: first
                .field(written.allow_domains.as_ref(), |v| self.allow_domains(v))
                .unwrap_or_default(),
            readable: first
                .field(written.readable.as_ref(), |v| self.paths(v, "readable"))
                .unwrap_or_default(),
            env: first
                .field(written.env.as_ref(), |v| self.env_names(v))
                .unwrap_or_default(),
        };
        first.into_result(out)
    }

    fn sandbox_mode(&self, v: &Spanned<Written>) -> Result<SandboxMode, ConfigError> {
        let mode = match self.text(v, "mode", "mode = \"auto\"")? {
            "auto" => SandboxMode::Auto,
            "required" => SandboxMode::Required,
            "off" => SandboxMode::Off,
            other => {
                return Err(self.err(
                    v.span(),
                    format!("unknown sandbox mode {other:?}"),
                    "use \"auto\", \"required\" or \"off\"",
                ));
            }
        };
        if self.layer == Layer::Project && mode != SandboxMode::Required {
            return Err(self.project_loosens(v, "[sandbox] mode"));
        }
        Ok(mode)
    }

    fn writable(&self, v: &Spanned<Written>) -> Result<Vec<PathBuf>, ConfigError> {
        self.paths(v, "writable")
    }

    fn env_names(&self, v: &Spanned<Written>) -> Result<Vec<String>, ConfigError> {
        self.string_list(v, "env")?
            .into_iter()
            .map(|item| {
                let ok = !item.is_empty()
                    && item.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !item.starts_with(|c: char| c.is_ascii_digit());
                if ok {
                    Ok(item.to_string())
                } else {
                    Err(self.err(
                        v.span(),
                        format!("{item:?} in [sandbox] env is not a variable name"),
                        "write names like \"CARGO_TARGET_DIR\"",
                    ))
                }
            })
            .collect()
    }

    fn paths(&self, v: &Spanned<Written>, name: &str) -> Result<Vec<PathBuf>, ConfigError> {
        self.string_list(v, name)?
            .into_iter()
            .map(|item| {
                if item.trim().is_empty() {
                    return Err(self.err(
                        v.span(),
                        format!("an empty path in [sandbox] {name}"),
                        "name a directory, e.g. \"~/.cargo/registry\"",
                    ));
                }
                Ok(self.config_relative(item))
            })
            .collect()
    }

    fn allow_domains(&self, v: &Spanned<Written>) -> Result<Vec<String>, ConfigError> {
        self.string_list(v, "allow_domains")?
            .into_iter()
            .map(|item| {
                if !valid_domain_pattern(item) {
                    return Err(self.err(
                        v.span(),
                        format!(
                            "{item:?} in [sandbox] allow_domains is not a host name or *.suffix"
                        ),
                        "write names like \"crates.io\" or \"*.npmjs.org\"",
                    ));
                }
                Ok(item.to_ascii_lowercase())
            })
            .collect()
    }

    fn project_loosens(&self, v: &Spanned<Written>, what: &str) -> ConfigError {
        self.err(
            v.span(),
            format!("{what} is not read from a project's config: a cloned repository could loosen its own sandbox"),
            "put it in ~/.config/toolgate/config.toml or a file given with --config (a project may only set mode = \"required\")",
        )
    }

    /// A list of strings; a project may not set one at all (each loosens).
    fn string_list<'v>(
        &self,
        v: &'v Spanned<Written>,
        name: &str,
    ) -> Result<Vec<&'v str>, ConfigError> {
        if self.layer == Layer::Project {
            return Err(self.project_loosens(v, &format!("[sandbox] {name}")));
        }
        let fix = format!("write {name} = [\"…\", \"…\"]");
        let Some(items) = v.get_ref().as_list() else {
            return Err(self.err(v.span(), format!("`{name}` must be a list of strings"), fix));
        };
        items
            .iter()
            .map(|item| {
                item.get_ref().as_str().ok_or_else(|| {
                    self.err(
                        item.span(),
                        format!("`{name}` must be a list of strings"),
                        fix.clone(),
                    )
                })
            })
            .collect()
    }
}

/// `name.example`, or `*.example` (a suffix): letters, digits, `-` and `.`.
fn valid_domain_pattern(s: &str) -> bool {
    let host = s.strip_prefix("*.").unwrap_or(s);
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse_in;
    use super::*;

    #[test]
    fn parses_sandbox_table() {
        let f = parse_in(
            "[sandbox]\nmode = \"required\"\nwritable = [\"~/.cargo/registry\"]\nallow_domains = [\"crates.io\", \"*.npmjs.org\"]\n",
            Layer::User,
        )
        .unwrap();
        let s = f.sandbox.unwrap();
        assert_eq!(s.mode, Some(SandboxMode::Required));
        assert_eq!(s.writable, vec![PathBuf::from("/home/u/.cargo/registry")]);
        assert_eq!(s.allow_domains, vec!["crates.io", "*.npmjs.org"]);
    }

    #[test]
    fn bad_sandbox_values_are_named() {
        let e = parse_in("[sandbox]\nmode = \"loose\"\n", Layer::User).unwrap_err();
        assert!(e.message.contains("unknown sandbox mode \"loose\""), "{e}");
        let e = parse_in("[sandbox]\nallow_domains = [\"http://x\"]\n", Layer::User).unwrap_err();
        assert!(e.message.contains("not a host name"), "{e}");
        let e = parse_in("[sandbox]\nwritable = \"~/.npm\"\n", Layer::User).unwrap_err();
        assert!(e.message.contains("list of strings"), "{e}");
        let e = parse_in("[sandbox]\nnetwork = true\n", Layer::User).unwrap_err();
        assert!(e.message.contains("unknown key \"network\""), "{e}");
    }

    #[test]
    fn a_project_may_only_tighten_the_sandbox() {
        let f = parse_in("[sandbox]\nmode = \"required\"\n", Layer::Project).unwrap();
        assert_eq!(f.sandbox.unwrap().mode, Some(SandboxMode::Required));
        for loosening in [
            "[sandbox]\nmode = \"off\"\n",
            "[sandbox]\nwritable = [\"/\"]\n",
            "[sandbox]\nallow_domains = [\"evil.example\"]\n",
        ] {
            let e = parse_in(loosening, Layer::Project).unwrap_err();
            assert!(
                e.message.contains("not read from a project's config"),
                "{e}"
            );
        }
    }
}
