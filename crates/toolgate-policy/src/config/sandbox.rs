//! `[sandbox]`: how bash commands are confined.
//!
//! ```toml
//! [sandbox]
//! mode = "auto"                       # auto | required | off
//! writable = ["~/.cargo/registry", "~/.npm"]
//! allow_domains = ["crates.io", "*.npmjs.org"]
//! ```
//!
//! A project's config (untrusted) may only tighten: it may set
//! `mode = "required"`, nothing else.

use std::path::PathBuf;

use toml::Spanned;
use toml::de::DeValue;

use super::{ConfigError, Parser, sorted};
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
}

impl Parser<'_> {
    pub(super) fn sandbox(
        &self,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<SandboxConfig, ConfigError> {
        let Some(table) = value.get_ref().as_table() else {
            return Err(self.err(
                value.span(),
                "`sandbox` must be a table",
                "write [sandbox] with mode = \"auto\"",
            ));
        };
        let mut out = SandboxConfig::default();
        for (key, v) in sorted(table) {
            let name = key.get_ref().as_ref();
            match name {
                "mode" => {
                    let s = self.string(v, "mode", "mode = \"auto\"")?;
                    let mode = match s {
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
                    out.mode = Some(mode);
                }
                "writable" | "allow_domains" => {
                    if self.layer == Layer::Project {
                        return Err(self.project_loosens(v, &format!("[sandbox] {name}")));
                    }
                    let items = self.string_list(v, name)?;
                    if name == "writable" {
                        for item in items {
                            if item.trim().is_empty() {
                                return Err(self.err(
                                    v.span(),
                                    "an empty path in [sandbox] writable",
                                    "name a directory, e.g. \"~/.cargo/registry\"",
                                ));
                            }
                            out.writable.push(self.config_relative(&item));
                        }
                    } else {
                        for item in items {
                            if !valid_domain_pattern(&item) {
                                return Err(self.err(
                                    v.span(),
                                    format!("{item:?} in [sandbox] allow_domains is not a host name or *.suffix"),
                                    "write names like \"crates.io\" or \"*.npmjs.org\"",
                                ));
                            }
                            out.allow_domains.push(item.to_ascii_lowercase());
                        }
                    }
                }
                other => {
                    return Err(self.err(
                        key.span(),
                        format!("unknown key {other:?} in [sandbox]"),
                        "use mode, writable or allow_domains",
                    ));
                }
            }
        }
        Ok(out)
    }

    fn project_loosens(&self, v: &Spanned<DeValue<'_>>, what: &str) -> ConfigError {
        self.err(
            v.span(),
            format!("{what} is not read from a project's config: a cloned repository could loosen its own sandbox"),
            "put it in ~/.config/toolgate/config.toml or a file given with --config (a project may only set mode = \"required\")",
        )
    }

    fn string_list(
        &self,
        v: &Spanned<DeValue<'_>>,
        name: &str,
    ) -> Result<Vec<String>, ConfigError> {
        let fix = format!("write {name} = [\"…\", \"…\"]");
        let Some(array) = v.get_ref().as_array() else {
            return Err(self.err(v.span(), format!("`{name}` must be a list of strings"), fix));
        };
        array
            .iter()
            .map(|item| {
                item.get_ref().as_str().map(str::to_string).ok_or_else(|| {
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
