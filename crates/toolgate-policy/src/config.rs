//! The TOML config format and its layers.
//!
//! One file is parsed by [`parse_config`] into a [`ConfigFile`]: its rules (the
//! compact `[permission]` form and the explicit `[[rules]]` list, both in the order
//! written and both keeping file:line), `mode`, `timeout` (seconds an ask waits),
//! `[tool_output]`, `[approvals]` (the approval channels of `mcp`/`serve`, in
//! order) and `[serve]` (where `serve` reads its bearer token; refused in the
//! project layer). Every mistake is a [`ConfigError`] naming the file, the line
//! and the fix.
//!
//! Reading is two steps: serde reads the whole file into types that keep every
//! value with its span whatever its type, and every table with its keys
//! (`config/raw.rs`); a validation pass turns those into the types below,
//! reporting the first mistake in the order written.
//!
//! ```
//! use std::path::Path;
//! use toolgate_policy::config::parse_config;
//! use toolgate_policy::pattern::PatternBase;
//! use toolgate_policy::rules::Layer;
//! let base = PatternBase { root: Path::new("/ws"), home: Path::new("/home/u") };
//! let text = "[permission.bash]\n\"git status *\" = \"allow\"\n";
//! let file = parse_config(text, "config.toml", Layer::Project, &base).unwrap();
//! assert_eq!(file.rules[0].line, 2);
//! let err = parse_config("[permission]\nread = \"maybe\"\n", "c.toml", Layer::Project, &base).unwrap_err();
//! assert_eq!(err.line, 2);
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::pattern::{PatternBase, PatternKind};

mod raw;
mod sandbox_section;
use crate::rules::{Layer, Rule, RuleEffect};
use raw::{
    FirstProblem, RawApprovals, RawConfig, RawPermission, RawRule, RawRules, RawServe,
    RawToolOutput, Section, Written,
};
pub use sandbox_section::{SandboxConfig, SandboxMode};

/// A config error, naming the file, the line and the fix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}. Fix: {fix}")]
pub struct ConfigError {
    /// The file.
    pub file: String,
    /// The 1-based line (0 when the file as a whole is at fault).
    pub line: u32,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl ConfigError {
    fn new(file: &str, line: u32, message: impl Into<String>, fix: impl Into<String>) -> Self {
        ConfigError {
            file: file.to_string(),
            line,
            message: message.into(),
            fix: fix.into(),
        }
    }
}

/// The permission mode: a preset over the defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// The defaults of the decision tree.
    #[default]
    Default,
    /// Writes inside the location are allowed without asking.
    AcceptEdits,
    /// Read-only: every request that is not `read` is denied.
    Plan,
    /// Work the sandbox confines to the location runs without asking (writes
    /// and programs with no network, nothing outside the location, no
    /// protected path, nothing destructive); file-tool writes follow
    /// `accept-edits`. Where the sandbox is not available it is `default`.
    Auto,
}

impl Mode {
    /// The name used in config and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AcceptEdits => "accept-edits",
            Mode::Plan => "plan",
            Mode::Auto => "auto",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "default" => Ok(Mode::Default),
            "accept-edits" | "acceptEdits" | "accept_edits" => Ok(Mode::AcceptEdits),
            "plan" => Ok(Mode::Plan),
            "auto" => Ok(Mode::Auto),
            other => Err(format!(
                "unknown mode {other:?}; use \"default\", \"accept-edits\", \"auto\" or \"plan\""
            )),
        }
    }
}

/// `[tool_output]`: how much output the model sees before the rest is
/// spilled, and the checks made on it before the model sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolOutputConfig {
    /// Maximum lines.
    pub max_lines: Option<usize>,
    /// Maximum bytes.
    pub max_bytes: Option<usize>,
    /// Redact secret content (PEM keys, provider tokens, connection-string
    /// passwords) from what the model sees; on unless set to `false`.
    pub redact_secrets: Option<bool>,
    /// Flag prompt-injection cues in tool output; on unless set to `false`.
    pub flag_injection: Option<bool>,
}

impl ToolOutputConfig {
    /// The output checks this configuration asks for (each on by default).
    pub fn checks(&self) -> toolgate_core::OutputChecks {
        toolgate_core::OutputChecks {
            redact_secrets: self.redact_secrets.unwrap_or(true),
            flag_injection: self.flag_injection.unwrap_or(true),
        }
    }
}

/// An approval channel: where a person can answer an ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalChannelName {
    /// The MCP client, through elicitation.
    Mcp,
    /// The approval web page.
    Web,
    /// The terminal (`/dev/tty`) of the server process.
    Terminal,
}

impl ApprovalChannelName {
    /// Every channel, in the default order.
    pub const DEFAULT_ORDER: [ApprovalChannelName; 3] = [
        ApprovalChannelName::Mcp,
        ApprovalChannelName::Web,
        ApprovalChannelName::Terminal,
    ];

    /// The name used in config and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalChannelName::Mcp => "mcp",
            ApprovalChannelName::Web => "web",
            ApprovalChannelName::Terminal => "terminal",
        }
    }
}

impl fmt::Display for ApprovalChannelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApprovalChannelName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ApprovalChannelName::DEFAULT_ORDER
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| {
                format!("unknown approval channel {s:?}; the channels are mcp, web and terminal")
            })
    }
}

/// `[approvals]`: the approval channels of `mcp` and `serve`, in the order they
/// are tried, and how long one may ask alone before the next is asked too.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApprovalsConfig {
    /// `channels`: a non-empty list without repeats.
    pub channels: Option<Vec<ApprovalChannelName>>,
    /// `escalate_after`: seconds (0 = every channel at once).
    pub escalate_after: Option<Duration>,
}

/// Where `serve` reads its bearer token (`[serve] token_file` or `token_env`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenSource {
    /// A file holding the token (its first line); the path is absolute.
    File(std::path::PathBuf),
    /// An environment variable holding the token.
    Env(String),
}

/// `[serve]`: settings of `toolgate serve`. Refused in the project layer, which
/// a cloned repository controls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServeConfig {
    /// The configured token source.
    pub token: TokenSource,
    /// Where it was set (`file:line`), for error messages.
    pub origin: String,
}

/// One parsed config file.
#[derive(Clone, Debug)]
pub struct ConfigFile {
    /// The file name as given.
    pub file: String,
    /// Its layer.
    pub layer: Layer,
    /// Its rules, in the order written.
    pub rules: Vec<Rule>,
    /// `mode`, if set.
    pub mode: Option<Mode>,
    /// `timeout` (how long an ask waits), if set.
    pub ask_timeout: Option<Duration>,
    /// `[tool_output]`, if set.
    pub tool_output: Option<ToolOutputConfig>,
    /// `[approvals]`, if set.
    pub approvals: Option<ApprovalsConfig>,
    /// `[serve]`, if set.
    pub serve: Option<ServeConfig>,
    /// `[sandbox]`, if set.
    pub sandbox: Option<SandboxConfig>,
    /// The examples each rule carries: `(rule index, text, must match)`.
    pub examples: Vec<(usize, String, bool)>,
    /// The lines of the settings that are not rules (0 when not set).
    pub lines: SettingLines,
}

/// Where the settings of a config file that are not rules were written, so
/// that an ignored setting can be reported as `file:line`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SettingLines {
    /// `mode`.
    pub mode: u32,
    /// `timeout`.
    pub timeout: u32,
    /// `[tool_output]`.
    pub tool_output: u32,
    /// `[approvals]`.
    pub approvals: u32,
}

const TOP_KEYS: &str = "mode, timeout, permission, rules, tool_output, approvals, serve, sandbox, upstreams, store, identity, telemetry";

/// Parses one config file. Patterns are compiled against `base`, and every rule's
/// `match` / `not_match` examples are checked.
pub fn parse_config(
    text: &str,
    file: &str,
    layer: Layer,
    base: &PatternBase<'_>,
) -> Result<ConfigFile, ConfigError> {
    let lines = LineIndex::new(text);
    let doc = DeTable::parse(text).map_err(|e| {
        let line = e.span().map_or(0, |s| lines.line(s.start));
        let message = e.message().trim();
        let fix = if message.contains("duplicate") {
            "give each key once per table; to set a whole action and some patterns, write `\"*\" = \"ask\"` inside its [permission.ACTION] table"
        } else {
            "correct the TOML syntax at that line (strings need quotes, tables need [brackets])"
        };
        ConfigError::new(file, line, format!("invalid TOML: {message}"), fix)
    })?;
    let mut out = ConfigFile {
        file: file.to_string(),
        layer,
        rules: Vec::new(),
        mode: None,
        ask_timeout: None,
        tool_output: None,
        approvals: None,
        serve: None,
        sandbox: None,
        examples: Vec::new(),
        lines: SettingLines::default(),
    };
    let p = Parser {
        file,
        layer,
        lines: &lines,
        base,
    };
    let doc = Spanned::new(doc.span(), DeValue::Table(doc.into_inner()));
    let (raw, keys) = match p.read::<Section<RawConfig>>(doc)? {
        Section::Table { fields, keys } => (fields, keys),
        // A document is always a table.
        Section::Other(_) => (RawConfig::default(), Vec::new()),
    };
    // Rules from both forms, each with its byte offset, so they keep file order.
    let mut ordered: Vec<OrderedRule> = Vec::new();
    for key in in_order(&keys) {
        let line = lines.line(key.span().start);
        match key.get_ref().as_str() {
            "mode" => {
                out.lines.mode = line;
                if let Some(written) = &raw.mode {
                    let s = p.text(written, "mode", "mode = \"default\"")?;
                    out.mode = Some(s.parse::<Mode>().map_err(|fix| {
                        ConfigError::new(file, line, format!("unknown mode {s:?}"), fix)
                    })?);
                }
            }
            "timeout" => {
                out.lines.timeout = line;
                if let Some(written) = &raw.timeout {
                    out.ask_timeout = Some(p.timeout(written)?);
                }
            }
            "tool_output" => {
                out.lines.tool_output = line;
                if let Some(section) = &raw.tool_output {
                    out.tool_output = Some(p.tool_output(section)?);
                }
            }
            "approvals" => {
                out.lines.approvals = line;
                if let Some(section) = &raw.approvals {
                    out.approvals = Some(p.approvals(section)?);
                }
            }
            // Upstream MCP servers: read by the gateway (toolgate-mcp), not the policy.
            "upstreams" => {}
            "serve" => {
                if let Some(section) = &raw.serve {
                    out.serve = p.serve(section)?;
                }
            }
            "sandbox" => {
                if let Some(section) = &raw.sandbox {
                    out.sandbox = Some(p.sandbox(section)?);
                }
            }
            "permission" => {
                if let Some(section) = &raw.permission {
                    p.permission(section, &mut ordered)?;
                }
            }
            "rules" => {
                if let Some(rules) = &raw.rules {
                    p.rules(rules, &mut ordered)?;
                }
            }
            // The team store and who this person is: read by the binary
            // from the user, session and managed layers only. A cloned
            // repository must not send the audit log or approvals elsewhere,
            // nor say who the person is.
            key @ ("store" | "identity" | "telemetry") => {
                if layer == Layer::Project {
                    return Err(ConfigError::new(
                        file,
                        line,
                        format!(
                            "[{key}] is not read from a project's config: a cloned repository could send the audit log and approvals elsewhere or speak for someone"
                        ),
                        format!(
                            "put [{key}] in ~/.config/toolgate/config.toml, /etc/toolgate/config.toml or a file given with --config"
                        ),
                    ));
                }
            }
            other => {
                return Err(ConfigError::new(
                    file,
                    line,
                    format!("unknown key {other:?}"),
                    format!("remove it, or use one of: {TOP_KEYS}"),
                ));
            }
        }
    }
    ordered.sort_by_key(|(offset, _, _)| *offset);
    for (_, rule, examples) in ordered {
        let idx = out.rules.len();
        for (text, must) in examples {
            check_example(&rule, &text, must, base)?;
            out.examples.push((idx, text, must));
        }
        out.rules.push(rule);
    }
    Ok(out)
}

/// Checks one example against its rule, as `policy test` and loading do. Path
/// examples are read like path patterns (relative to the root, `~` for home).
pub fn check_example(
    rule: &Rule,
    text: &str,
    must_match: bool,
    base: &PatternBase<'_>,
) -> Result<(), ConfigError> {
    let example = match rule.resource.kind {
        PatternKind::Path => crate::pattern::expand_path(text, base),
        _ => text.to_string(),
    };
    let hit = rule.resource.is_match(&example);
    if hit == must_match {
        return Ok(());
    }
    let (message, fix) = if must_match {
        (
            format!(
                "rule {} has example {:?} in `match`, but the pattern does not match it",
                rule.describe(),
                text
            ),
            "change the pattern so that it matches the example, or move the example to `not_match`",
        )
    } else {
        (
            format!(
                "rule {} has example {:?} in `not_match`, but the pattern matches it",
                rule.describe(),
                text
            ),
            "narrow the pattern, or move the example to `match`",
        )
    };
    Err(ConfigError::new(&rule.file, rule.line, message, fix))
}

/// A rule with its byte offset (for file order) and its examples.
type OrderedRule = (usize, Rule, Vec<(String, bool)>);

struct Parser<'a> {
    file: &'a str,
    layer: Layer,
    lines: &'a LineIndex,
    base: &'a PatternBase<'a>,
}

/// A table's keys in the order written (by their offsets).
fn in_order(keys: &[Spanned<String>]) -> Vec<&Spanned<String>> {
    let mut keys: Vec<_> = keys.iter().collect();
    keys.sort_by_key(|k| k.span().start);
    keys
}

/// A map's entries in the order written, each key with its span.
fn entries<'m, V>(
    map: &'m BTreeMap<String, V>,
    keys: &'m [Spanned<String>],
) -> impl Iterator<Item = (&'m Spanned<String>, &'m V)> {
    in_order(keys)
        .into_iter()
        .filter_map(|key| Some((key, map.get(key.get_ref())?)))
}

impl Parser<'_> {
    fn err(
        &self,
        span: Range<usize>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> ConfigError {
        ConfigError::new(self.file, self.lines.line(span.start), message, fix)
    }

    fn timeout(&self, value: &Spanned<Written>) -> Result<Duration, ConfigError> {
        match value.get_ref().as_number() {
            Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
            _ => Err(self.err(
                value.span(),
                "`timeout` must be a number of seconds between 0 and 86400",
                "write it like timeout = 30",
            )),
        }
    }

    fn action(&self, action: &str, span: Range<usize>) -> Result<(), ConfigError> {
        if crate::actions::kind_of(action).is_some()
            || action.contains(['*', '?'])
            // Tools proxied from MCP servers are named `server__tool`.
            || action.contains("__")
        {
            return Ok(());
        }
        // Rules name actions, not tools: say so, since a tool's name is the
        // likeliest mistake (every tool that changes files asks for `edit`).
        let fix = format!(
            "use one of: {} (a rule names the action a request asks for, not the tool: \
             every file change, by any tool, is the action `{}`)",
            crate::actions::names().collect::<Vec<_>>().join(", "),
            crate::actions::EDIT
        );
        Err(self.err(span, format!("unknown action {action:?}"), fix))
    }

    fn effect(&self, value: &Spanned<Written>) -> Result<RuleEffect, ConfigError> {
        let text = value.get_ref().as_str();
        text.and_then(RuleEffect::parse).ok_or_else(|| {
            let shown = text.map_or_else(
                || value.get_ref().type_str().to_string(),
                |t| format!("{t:?}"),
            );
            self.err(
                value.span(),
                format!("bad effect {shown}"),
                "use \"allow\", \"ask\", \"ask!\" (always ask) or \"deny\"",
            )
        })
    }

    fn rule(
        &self,
        action: &str,
        resource: &str,
        effect: RuleEffect,
        at: Range<usize>,
    ) -> Result<Rule, ConfigError> {
        let line = self.lines.line(at.start);
        Rule::new(action, resource, effect, self.layer, self.file, line, self.base).map_err(|e| {
            ConfigError::new(
                self.file,
                line,
                format!("bad pattern {resource:?} for action {action:?}: {e}"),
                "use `*` (any text; within one path component for paths), `**` (any depth) and `?` (one character)",
            )
        })
    }

    /// `[permission]`: `action = effect` or `[permission.action]` tables of
    /// `pattern = effect`.
    fn permission(
        &self,
        section: &Spanned<Section<RawPermission>>,
        out: &mut Vec<OrderedRule>,
    ) -> Result<(), ConfigError> {
        let (actions, keys) = self.section_table(
            section,
            "permission",
            "write [permission] followed by lines like read = \"allow\"",
        )?;
        for (key, value) in entries(actions, keys) {
            let action = key.get_ref().as_str();
            self.action(action, key.span())?;
            match value.get_ref() {
                Section::Table {
                    fields: patterns,
                    keys,
                } => {
                    for (pattern, effect) in entries(patterns, keys) {
                        let effect = self.effect(effect)?;
                        let rule = self.rule(action, pattern.get_ref(), effect, pattern.span())?;
                        out.push((pattern.span().start, rule, Vec::new()));
                    }
                }
                Section::Other(written) => {
                    let written = Spanned::new(value.span(), written.clone());
                    let effect = self.effect(&written)?;
                    let rule = self.rule(action, "*", effect, key.span())?;
                    out.push((key.span().start, rule, Vec::new()));
                }
            }
        }
        Ok(())
    }

    /// `[[rules]]`: `{action, resource, effect, match?, not_match?}`.
    fn rules(
        &self,
        value: &Spanned<RawRules>,
        out: &mut Vec<OrderedRule>,
    ) -> Result<(), ConfigError> {
        let RawRules::List(items) = value.get_ref() else {
            return Err(self.err(
                value.span(),
                "`rules` must be an array of tables",
                "write each rule as a [[rules]] section",
            ));
        };
        for item in items {
            let Section::Table {
                fields: written,
                keys,
            } = item.get_ref()
            else {
                return Err(self.err(
                    item.span(),
                    "each entry of `rules` must be a table",
                    "write each rule as a [[rules]] section with action, resource and effect",
                ));
            };
            let at = keys
                .iter()
                .map(|k| k.span().start)
                .min()
                .unwrap_or(item.span().start);
            out.push(self.one_rule(keys, written, at)?);
        }
        Ok(())
    }

    /// One `[[rules]]` entry, which starts at byte `at`.
    fn one_rule(
        &self,
        keys: &[Spanned<String>],
        written: &RawRule,
        at: usize,
    ) -> Result<OrderedRule, ConfigError> {
        let mut first = FirstProblem::new();
        self.unknown_keys(
            keys,
            RawRule::KEYS,
            "[[rules]]",
            "use action, resource, effect, match or not_match",
            &mut first,
        );
        let action = first.field(written.action.as_ref(), |v| {
            let a = self.text(v, "action", "action = \"bash\"")?;
            self.action(a, v.span())?;
            Ok(a)
        });
        let resource = first.field(written.resource.as_ref(), |v| {
            self.text(v, "resource", "resource = \"git status *\"")
        });
        let effect = first.field(written.effect.as_ref(), |v| self.effect(v));
        let mut lists: Vec<_> = [
            ("match", &written.must_match),
            ("not_match", &written.not_match),
        ]
        .into_iter()
        .filter_map(|(name, list)| Some((name, list.as_ref()?)))
        .collect();
        lists.sort_by_key(|(_, list)| list.span().start);
        let mut examples = Vec::new();
        for (name, list) in lists {
            if let Some(texts) = first.field(Some(list), |v| self.examples(name, v)) {
                examples.extend(texts.into_iter().map(|t| (t, name == "match")));
            }
        }
        let (action, resource, effect) = first.into_result((action, resource, effect))?;
        let missing = |what: &str, example: &str| {
            ConfigError::new(
                self.file,
                self.lines.line(at),
                format!("this [[rules]] entry has no `{what}`"),
                format!("add {example}"),
            )
        };
        let action = action.ok_or_else(|| missing("action", "action = \"bash\""))?;
        let effect = effect.ok_or_else(|| missing("effect", "effect = \"allow\""))?;
        let rule = self.rule(action, resource.unwrap_or("*"), effect, at..at)?;
        Ok((at, rule, examples))
    }

    /// `match` or `not_match`: a list of example strings.
    fn examples(&self, name: &str, value: &Spanned<Written>) -> Result<Vec<String>, ConfigError> {
        let Some(list) = value.get_ref().as_list() else {
            return Err(self.err(
                value.span(),
                format!("`{name}` must be a list of strings"),
                format!("write it like {name} = [\"cargo test\"]"),
            ));
        };
        list.iter()
            .map(|ex| Ok(self.text(ex, name, "\"cargo test -p core\"")?.to_string()))
            .collect()
    }
}

/// Reading a section into its serde type, and the checks every section shares.
impl Parser<'_> {
    /// The table a section must be, with its keys, or today's "must be a
    /// table" error.
    fn section_table<'s, T>(
        &self,
        section: &'s Spanned<Section<T>>,
        name: &str,
        fix: &str,
    ) -> Result<(&'s T, &'s [Spanned<String>]), ConfigError> {
        match section.get_ref() {
            Section::Table { fields, keys } => Ok((fields, keys)),
            Section::Other(_) => {
                Err(self.err(section.span(), format!("`{name}` must be a table"), fix))
            }
        }
    }

    /// Reads the parsed file into its serde type `T`.
    fn read<'de, T: serde::Deserialize<'de>>(
        &self,
        value: Spanned<DeValue<'de>>,
    ) -> Result<T, ConfigError> {
        let whole = value.span();
        raw::read(value).map_err(|e| {
            self.err(
                e.span().unwrap_or(whole),
                format!("invalid TOML: {}", e.message().trim()),
                "correct the TOML syntax at that line (strings need quotes, tables need [brackets])",
            )
        })
    }

    /// Notes every key of a table that is not one of `known`.
    fn unknown_keys(
        &self,
        keys: &[Spanned<String>],
        known: &[&str],
        section: &str,
        fix: &str,
        first: &mut FirstProblem<ConfigError>,
    ) {
        for key in keys {
            let name: &str = key.get_ref();
            if !known.contains(&name) {
                first.note(
                    key.span().start,
                    self.err(
                        key.span(),
                        format!("unknown key {name:?} in {section}"),
                        fix,
                    ),
                );
            }
        }
    }

    /// A string, or today's "must be a string" error.
    fn text<'v>(
        &self,
        value: &'v Spanned<Written>,
        what: &str,
        example: &str,
    ) -> Result<&'v str, ConfigError> {
        value.get_ref().as_str().ok_or_else(|| {
            self.err(
                value.span(),
                format!(
                    "`{what}` must be a string, not {}",
                    value.get_ref().type_str()
                ),
                format!("write it like {example}"),
            )
        })
    }
}

/// `[tool_output]` checks.
impl Parser<'_> {
    fn tool_output(
        &self,
        section: &Spanned<Section<RawToolOutput>>,
    ) -> Result<ToolOutputConfig, ConfigError> {
        let (written, keys) = self.section_table(
            section,
            "tool_output",
            "write [tool_output] with max_lines = N, max_bytes = N, redact_secrets = true, flag_injection = true",
        )?;
        let mut first = FirstProblem::new();
        self.unknown_keys(
            keys,
            RawToolOutput::KEYS,
            "[tool_output]",
            "use max_lines, max_bytes, redact_secrets or flag_injection",
            &mut first,
        );
        let positive = |name: &str, v: &Spanned<Written>| {
            match v.get_ref() {
                Written::Integer(i) => usize::try_from(*i).ok().filter(|n| *n > 0),
                _ => None,
            }
            .ok_or_else(|| {
                self.err(
                    v.span(),
                    format!("`{name}` must be a positive integer"),
                    "write it like max_lines = 2000",
                )
            })
        };
        let boolean = |name: &str, v: &Spanned<Written>| match v.get_ref() {
            Written::Bool(b) => Ok(*b),
            other => Err(self.err(
                v.span(),
                format!("`{name}` must be true or false, not a {}", other.type_str()),
                format!("write it like {name} = true"),
            )),
        };
        let out = ToolOutputConfig {
            max_lines: first.field(written.max_lines.as_ref(), |v| positive("max_lines", v)),
            max_bytes: first.field(written.max_bytes.as_ref(), |v| positive("max_bytes", v)),
            redact_secrets: first.field(written.redact_secrets.as_ref(), |v| {
                boolean("redact_secrets", v)
            }),
            flag_injection: first.field(written.flag_injection.as_ref(), |v| {
                boolean("flag_injection", v)
            }),
        };
        first.into_result(out)
    }
}

/// `[approvals]` checks.
impl Parser<'_> {
    fn approvals(
        &self,
        section: &Spanned<Section<RawApprovals>>,
    ) -> Result<ApprovalsConfig, ConfigError> {
        let (written, keys) = self.section_table(
            section,
            "approvals",
            "write [approvals] with channels = [\"mcp\", \"web\", \"terminal\"]",
        )?;
        let mut first = FirstProblem::new();
        self.unknown_keys(
            keys,
            RawApprovals::KEYS,
            "[approvals]",
            "use channels or escalate_after",
            &mut first,
        );
        let out = ApprovalsConfig {
            channels: first.field(written.channels.as_ref(), |v| self.approval_channels(v)),
            escalate_after: first
                .field(written.escalate_after.as_ref(), |v| self.escalate_after(v)),
        };
        first.into_result(out)
    }

    fn approval_channels(
        &self,
        value: &Spanned<Written>,
    ) -> Result<Vec<ApprovalChannelName>, ConfigError> {
        let example = "write it like channels = [\"mcp\", \"web\", \"terminal\"]";
        let Some(list) = value.get_ref().as_list() else {
            return Err(self.err(
                value.span(),
                "`channels` in [approvals] must be a list of channel names",
                example,
            ));
        };
        let mut channels = Vec::new();
        for item in list {
            let name = self.text(item, "channels", "\"web\"")?;
            let channel = name.parse::<ApprovalChannelName>().map_err(|message| {
                self.err(
                    item.span(),
                    message,
                    "use mcp (the MCP client), web (the approval page) or terminal",
                )
            })?;
            if channels.contains(&channel) {
                return Err(self.err(
                    item.span(),
                    format!("approval channel {name:?} is listed twice"),
                    "list each channel once, in the order to try them",
                ));
            }
            channels.push(channel);
        }
        if channels.is_empty() {
            return Err(self.err(
                value.span(),
                "`channels` in [approvals] is empty, so no ask could ever be answered",
                "list at least one of mcp, web, terminal; to refuse what would be asked, write deny rules instead",
            ));
        }
        Ok(channels)
    }

    fn escalate_after(&self, value: &Spanned<Written>) -> Result<Duration, ConfigError> {
        match value.get_ref().as_number() {
            Some(s) if s.is_finite() && (0.0..=86_400.0).contains(&s) => {
                Ok(Duration::from_secs_f64(s))
            }
            _ => Err(self.err(
                value.span(),
                "`escalate_after` must be a number of seconds from 0 to 86400",
                "write it like escalate_after = 10 (0 asks every channel at once)",
            )),
        }
    }
}

/// `[serve]` checks.
impl Parser<'_> {
    fn serve(
        &self,
        section: &Spanned<Section<RawServe>>,
    ) -> Result<Option<ServeConfig>, ConfigError> {
        if self.layer == Layer::Project {
            return Err(self.err(
                section.span(),
                "[serve] is not read from a project's config: a cloned repository could set a bearer token it knows",
                "put [serve] in ~/.config/toolgate/config.toml, /etc/toolgate/config.toml or a file given with --config",
            ));
        }
        let (written, keys) = self.section_table(
            section,
            "serve",
            "write [serve] with token_file = \"~/.config/toolgate/serve-token\"",
        )?;
        let mut first = FirstProblem::new();
        self.unknown_keys(
            keys,
            RawServe::KEYS,
            "[serve]",
            "use token_file or token_env",
            &mut first,
        );
        first.field::<(), _>(written.token.as_ref(), |v| {
            Err(self.err(
                v.span(),
                "a bearer token written in a config file is refused (config files are shared and copied)",
                "put the token in a file readable only by you and set token_file, or set token_env to the name of an environment variable",
            ))
        });
        let file = first.field(written.token_file.as_ref(), |v| self.token_file(v));
        let env = first.field(written.token_env.as_ref(), |v| self.token_env(v));
        let mut sources: Vec<_> = file.into_iter().chain(env).collect();
        sources.sort_by_key(|(at, _)| at.start);
        let mut sources = sources.into_iter();
        let Some((at, token)) = sources.next() else {
            return first.into_result(None);
        };
        let origin = format!("{}:{}", self.file, self.lines.line(at.start));
        if let Some((second, _)) = sources.next() {
            first.note(
                second.start,
                self.err(
                    second,
                    format!("[serve] sets both token_file and token_env (the first at {origin})"),
                    "keep one of them",
                ),
            );
        }
        first.into_result(Some(ServeConfig { token, origin }))
    }

    fn token_file(&self, v: &Spanned<Written>) -> Result<(Range<usize>, TokenSource), ConfigError> {
        let text = self.text(
            v,
            "token_file",
            "token_file = \"~/.config/toolgate/serve-token\"",
        )?;
        if text.trim().is_empty() {
            return Err(self.err(
                v.span(),
                "`token_file` is empty",
                "name the file that holds the token",
            ));
        }
        Ok((v.span(), TokenSource::File(self.config_relative(text))))
    }

    fn token_env(&self, v: &Spanned<Written>) -> Result<(Range<usize>, TokenSource), ConfigError> {
        let name = self.text(v, "token_env", "token_env = \"TOOLGATE_SERVE_TOKEN\"")?;
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(self.err(
                v.span(),
                format!("`token_env` = {name:?} is not an environment variable name"),
                "use letters, digits and _, not starting with a digit, e.g. token_env = \"TOOLGATE_SERVE_TOKEN\"",
            ));
        }
        Ok((v.span(), TokenSource::Env(name.to_string())))
    }
}

/// Paths in config.
impl Parser<'_> {
    /// A path from config: `~/` is the home directory; a relative path is
    /// relative to the config file's directory.
    fn config_relative(&self, text: &str) -> std::path::PathBuf {
        if let Some(rest) = text.strip_prefix("~/") {
            return self.base.home.join(rest);
        }
        let path = std::path::Path::new(text);
        if path.is_absolute() {
            return path.to_path_buf();
        }
        std::path::Path::new(self.file)
            .parent()
            .map_or_else(|| path.to_path_buf(), |dir| dir.join(path))
    }
}

/// Byte offset → 1-based line.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    fn line(&self, offset: usize) -> u32 {
        let idx = self.starts.partition_point(|&s| s <= offset);
        u32::try_from(idx).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn base() -> PatternBase<'static> {
        PatternBase {
            root: Path::new("/ws"),
            home: Path::new("/home/u"),
        }
    }

    fn parse(text: &str) -> Result<ConfigFile, ConfigError> {
        parse_config(text, "cfg.toml", Layer::Project, &base())
    }

    #[test]
    fn output_check_switches_are_booleans_with_a_clear_error_otherwise() {
        let f = parse("[tool_output]\nredact_secrets = false\nflag_injection = true\n").unwrap();
        let t = f.tool_output.unwrap();
        assert_eq!(
            (t.redact_secrets, t.flag_injection),
            (Some(false), Some(true))
        );
        let e = parse("[tool_output]\nredact_secrets = \"no\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`redact_secrets` must be true or false, not a string"),
            "{e}"
        );
    }

    #[test]
    fn design_example_parses_in_order_with_lines() {
        let text = r#"# comment
mode = "accept-edits"
timeout = 12

[permission]
read = "allow"
webfetch = "deny"

[permission.bash]
"*" = "ask"
"git status *" = "allow"
"git push *" = "ask!"

[permission.edit]
"src/**" = "allow"

[[rules]]
action = "bash"
resource = "cargo test *"
effect = "allow"
match = ["cargo test", "cargo test -p core"]
not_match = ["cargo testx"]

[tool_output]
max_lines = 2000
max_bytes = 51_200
"#;
        let f = parse(text).unwrap();
        let got: Vec<(String, String, RuleEffect, u32)> = f
            .rules
            .iter()
            .map(|r| (r.action.clone(), r.resource.text.clone(), r.effect, r.line))
            .collect();
        let want = vec![
            ("read", "*", RuleEffect::Allow, 6),
            ("webfetch", "*", RuleEffect::Deny, 7),
            ("bash", "*", RuleEffect::Ask, 10),
            ("bash", "git status *", RuleEffect::Allow, 11),
            ("bash", "git push *", RuleEffect::ForceAsk, 12),
            ("edit", "src/**", RuleEffect::Allow, 15),
            ("bash", "cargo test *", RuleEffect::Allow, 18),
        ];
        let want: Vec<_> = want
            .into_iter()
            .map(|(a, r, e, l)| (a.to_string(), r.to_string(), e, l))
            .collect();
        assert_eq!(got, want);
        assert_eq!(f.mode, Some(Mode::AcceptEdits));
        assert_eq!(f.ask_timeout, Some(Duration::from_secs(12)));
        assert_eq!(
            f.tool_output,
            Some(ToolOutputConfig {
                max_lines: Some(2000),
                max_bytes: Some(51200),
                ..ToolOutputConfig::default()
            })
        );
        assert_eq!(f.examples.len(), 3);
    }

    #[test]
    fn compact_order_is_the_order_written_not_alphabetical() {
        let f = parse("[permission.bash]\n\"z *\" = \"allow\"\n\"a *\" = \"deny\"\n").unwrap();
        assert_eq!(f.rules[0].resource.text, "z *");
        assert_eq!(f.rules[1].resource.text, "a *");
    }

    fn err(text: &str) -> ConfigError {
        parse(text).unwrap_err()
    }

    #[test]
    fn bad_toml_names_the_line() {
        let e = err("[permission]\nread = allow\n");
        assert_eq!((e.file.as_str(), e.line), ("cfg.toml", 2));
        assert!(e.message.contains("invalid TOML"), "{e}");
        assert!(e.to_string().starts_with("cfg.toml:2: "), "{e}");
    }

    #[test]
    fn unknown_action_names_line_and_fix() {
        let e = err("\n[permission]\nbsah = \"allow\"\n");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("unknown action \"bsah\""), "{e}");
        assert!(e.fix.contains("bash"), "{e}");
        let e = err("[permission]\nwrite = \"allow\"\n");
        assert!(e.fix.contains("`edit`"), "{e}");
        let e = err("[[rules]]\naction = \"nope\"\neffect = \"allow\"\n");
        assert_eq!(e.line, 2);
    }

    #[test]
    fn bad_effect_names_line_and_fix() {
        let e = err("[permission.bash]\n\"ls\" = \"allow\"\n\"rm *\" = \"nope\"\n");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("bad effect \"nope\""), "{e}");
        assert!(e.fix.contains("ask!"), "{e}");
        let e = err("[permission]\nread = true\n");
        assert!(e.message.contains("boolean"), "{e}");
    }

    #[test]
    fn bad_pattern_names_line() {
        let e = err("[permission.edit]\n\n\"src/***\" = \"allow\"\n");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("bad pattern"), "{e}");
        let e = err("[permission.bash]\n\"\" = \"allow\"\n");
        assert_eq!(e.line, 2);
    }

    #[test]
    fn failing_examples_name_the_rule_line() {
        let text = "[permission]\nread = \"allow\"\n\n[[rules]]\naction = \"bash\"\nresource = \"cargo test *\"\neffect = \"allow\"\nmatch = [\"cargo build\"]\n";
        let e = err(text);
        assert_eq!(e.line, 5);
        assert!(e.message.contains("\"cargo build\""), "{e}");
        let text = "[[rules]]\naction = \"bash\"\nresource = \"cargo test *\"\neffect = \"allow\"\nnot_match = [\"cargo test\"]\n";
        let e = err(text);
        assert!(e.message.contains("not_match"), "{e}");
    }

    #[test]
    fn path_examples_are_relative_to_the_root() {
        let text = "[[rules]]\naction = \"edit\"\nresource = \"src/**\"\neffect = \"allow\"\nmatch = [\"src/a.rs\", \"/ws/src/b/c.rs\"]\nnot_match = [\"tests/a.rs\"]\n";
        parse(text).unwrap();
    }

    #[test]
    fn duplicate_action_and_table_gets_a_specific_fix() {
        let e = err("[permission]\nbash = \"deny\"\n[permission.bash]\n\"ls\" = \"allow\"\n");
        assert!(e.message.contains("duplicate"), "{e}");
        assert!(e.fix.contains("[permission.ACTION]"), "{e}");
    }

    #[test]
    fn other_mistakes() {
        assert!(err("mode = \"yolo\"\n").message.contains("unknown mode"));
        assert!(err("colour = 1\n").message.contains("unknown key"));
        assert!(err("timeout = -3\n").message.contains("timeout"));
        assert!(
            err("[tool_output]\nmax_lines = 0\n")
                .message
                .contains("positive")
        );
        assert!(
            err("[tool_output]\nmax_rows = 5\n")
                .message
                .contains("max_rows")
        );
        assert!(
            err("[[rules]]\naction = \"bash\"\n")
                .message
                .contains("effect")
        );
        assert!(
            err("[[rules]]\naction = \"bash\"\neffect = \"allow\"\ncolour = 1\n")
                .message
                .contains("colour")
        );
        assert!(err("permission = 3\n").message.contains("table"));
    }

    #[test]
    fn approvals_section_parses_in_the_order_written() {
        let f =
            parse("[approvals]\nchannels = [\"web\", \"mcp\"]\nescalate_after = 2.5\n").unwrap();
        let a = f.approvals.unwrap();
        assert_eq!(
            a.channels,
            Some(vec![ApprovalChannelName::Web, ApprovalChannelName::Mcp])
        );
        assert_eq!(a.escalate_after, Some(Duration::from_millis(2500)));
        let f = parse("[approvals]\nescalate_after = 0\n").unwrap();
        assert_eq!(f.approvals.unwrap().escalate_after, Some(Duration::ZERO));
        assert_eq!(parse("mode = \"default\"\n").unwrap().approvals, None);
    }

    #[test]
    fn bad_approvals_name_file_line_and_the_valid_channels() {
        let e = err("\n[approvals]\nchannels = [\"mcp\",\n  \"slack\"]\n");
        assert_eq!((e.file.as_str(), e.line), ("cfg.toml", 4));
        assert!(
            e.message.contains("unknown approval channel \"slack\""),
            "{e}"
        );
        assert!(e.message.contains("mcp, web and terminal"), "{e}");
        let e = err("[approvals]\nchannels = []\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("empty"), "{e}");
        let e = err("[approvals]\nchannels = [\"web\", \"web\"]\n");
        assert!(e.message.contains("listed twice"), "{e}");
        let e = err("[approvals]\nchannels = \"web\"\n");
        assert!(e.message.contains("must be a list"), "{e}");
        let e = err("[approvals]\nchannels = [1]\n");
        assert!(e.message.contains("must be a string"), "{e}");
        let e = err("[approvals]\nchanels = [\"web\"]\n");
        assert!(
            e.message.contains("unknown key \"chanels\" in [approvals]"),
            "{e}"
        );
        for bad in ["-1", "\"10\"", "90000", "nan"] {
            let e = err(&format!("[approvals]\nescalate_after = {bad}\n"));
            assert!(e.message.contains("escalate_after"), "{bad}: {e}");
        }
        assert!(err("approvals = 1\n").message.contains("must be a table"));
    }

    #[test]
    fn a_section_reports_its_first_mistake_in_the_order_written() {
        let e = err("[approvals]\nchanels = 1\nchannels = []\n");
        assert_eq!(e.line, 2, "{e}");
        let e = err("[approvals]\nchannels = []\nchanels = 1\n");
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("empty"), "{e}");
        let e = err("[tool_output]\nmax_bytes = 0\nmax_lines = -1\n");
        assert!(e.message.contains("max_bytes"), "{e}");
        let e = parse_in(
            "[serve]\ntoken_env = \"B\"\ntoken_file = \"a\"\nzzz = 1\n",
            Layer::User,
        )
        .unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(
            e.message
                .contains("(the first at /home/u/.config/toolgate/config.toml:2)"),
            "{e}"
        );
    }

    #[test]
    fn rules_and_effects_keep_their_order_and_type_names() {
        let e = err("[[rules]]\ncolour = 1\naction = \"nope\"\n");
        assert!(e.message.contains("colour"), "{e}");
        let e = err("[[rules]]\naction = \"nope\"\ncolour = 1\n");
        assert!(e.message.contains("unknown action"), "{e}");
        let e = err("[[rules]]\naction = \"bash\"\ncolour = 1\n");
        assert!(e.message.contains("colour"), "{e}");
        let e = err("[permission]\nread = 1979-05-27\n");
        assert!(e.message.contains("bad effect datetime"), "{e}");
        let e = err("[permission.bash]\n\"ls\" = [1]\n");
        assert!(e.message.contains("bad effect array"), "{e}");
        let f = parse("[[rules]]\nnot_match = [\"b\"]\naction = \"bash\"\nresource = \"a*\"\neffect = \"allow\"\nmatch = [\"a\", \"ab\"]\n").unwrap();
        let got: Vec<_> = f
            .examples
            .iter()
            .map(|(_, t, m)| (t.as_str(), *m))
            .collect();
        assert_eq!(got, [("b", false), ("a", true), ("ab", true)]);
    }

    #[test]
    fn numbers_are_read_as_toml_means_them() {
        // Hexadecimal, octal and binary integers are their value, not their
        // digits read as decimal.
        let f =
            parse("timeout = 0x10\n[tool_output]\nmax_lines = 0o17\nmax_bytes = 0b101\n").unwrap();
        assert_eq!(f.ask_timeout, Some(Duration::from_secs(16)));
        let out = f.tool_output.unwrap();
        assert_eq!((out.max_lines, out.max_bytes), (Some(15), Some(5)));
        let f = parse("[approvals]\nescalate_after = 0xa\n").unwrap();
        assert_eq!(
            f.approvals.unwrap().escalate_after,
            Some(Duration::from_secs(10))
        );
    }

    #[test]
    fn an_integer_too_large_for_toml_names_its_line() {
        let e = err("mode = \"default\"\ntimeout = 999999999999999999999999999999999999999999\n");
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("overflow"), "{e}");
        assert!(e.to_string().contains("Fix:"), "{e}");
        // Within i64 but beyond any timeout: refused by the section's own check.
        let e = err("timeout = 99999999999999999\n");
        assert_eq!(e.line, 1, "{e}");
    }

    #[test]
    fn a_datetime_is_a_value_of_its_own_type_wherever_it_is_written() {
        let e = err("\n\ntool_output = 1979-05-27\n");
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("`tool_output` must be a table"), "{e}");
        let e = err("rules = 1979-05-27\n");
        assert!(e.message.contains("must be an array of tables"), "{e}");
        let e = err("rules = [1979-05-27]\n");
        assert!(
            e.message.contains("each entry of `rules` must be a table"),
            "{e}"
        );
        let e = err("[[rules]]\naction = 1979-05-27\n");
        assert!(e.message.contains("must be a string, not datetime"), "{e}");
        let e = err("[permission.bash]\n\"ls\" = 1979-05-27\n");
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("bad effect datetime"), "{e}");
    }

    #[test]
    fn keys_keep_their_lines_in_every_kind_of_table() {
        let f = parse("[permission]\nbash.\"ls *\" = \"allow\"\nread = \"allow\"\n[tool_output]\nmax_lines = 5\n")
            .unwrap();
        let got: Vec<_> = f
            .rules
            .iter()
            .map(|r| (r.action.as_str(), r.resource.text.as_str(), r.line))
            .collect();
        assert_eq!(got, [("bash", "ls *", 2), ("read", "*", 3)]);
        assert_eq!(f.lines.tool_output, 4);
        let e = err("tool_output.max_lines = 5\ntool_output.rows = 1\n");
        assert_eq!(e.line, 2, "{e}");
        assert!(
            e.message.contains("unknown key \"rows\" in [tool_output]"),
            "{e}"
        );
    }

    pub(super) fn parse_in(text: &str, layer: Layer) -> Result<ConfigFile, ConfigError> {
        parse_config(text, "/home/u/.config/toolgate/config.toml", layer, &base())
    }

    #[test]
    fn serve_token_sources_resolve_paths() {
        let f = parse_in("[serve]\ntoken_file = \"serve-token\"\n", Layer::User).unwrap();
        let s = f.serve.unwrap();
        assert_eq!(
            s.token,
            TokenSource::File("/home/u/.config/toolgate/serve-token".into())
        );
        assert_eq!(s.origin, "/home/u/.config/toolgate/config.toml:2");
        let f = parse_in("[serve]\ntoken_file = \"~/secrets/t\"\n", Layer::Managed).unwrap();
        assert_eq!(
            f.serve.unwrap().token,
            TokenSource::File("/home/u/secrets/t".into())
        );
        let f = parse_in("[serve]\ntoken_file = \"/run/t\"\n", Layer::Session).unwrap();
        assert_eq!(f.serve.unwrap().token, TokenSource::File("/run/t".into()));
        let f = parse_in("[serve]\ntoken_env = \"MY_TOKEN\"\n", Layer::User).unwrap();
        assert_eq!(f.serve.unwrap().token, TokenSource::Env("MY_TOKEN".into()));
        assert_eq!(parse_in("[serve]\n", Layer::User).unwrap().serve, None);
    }

    #[test]
    fn store_and_identity_are_refused_in_a_project_config_only() {
        for text in [
            "[store]\nurl = \"postgres://tg@db/audit\"\n",
            "[identity]\nperson = \"someone-else\"\n",
            "[telemetry]\nendpoint = \"http://collector:4318\"\n",
        ] {
            let e = parse_in(text, Layer::Project).unwrap_err();
            assert!(
                e.message.contains("not read from a project's config"),
                "{e}"
            );
            assert!(parse_in(text, Layer::User).is_ok());
            assert!(parse_in(text, Layer::Managed).is_ok());
        }
    }

    #[test]
    fn serve_in_a_project_config_is_refused() {
        for text in [
            "[serve]\ntoken_file = \"README.md\"\n",
            "[serve]\ntoken_env = \"HOME\"\n",
        ] {
            let e = parse_in(text, Layer::Project).unwrap_err();
            assert_eq!(e.line, 1, "{e}");
            assert!(e.message.contains("not read from a project"), "{e}");
            assert!(e.fix.contains("~/.config/toolgate/config.toml"), "{e}");
        }
    }

    #[test]
    fn bad_serve_settings_are_named() {
        let e = |t: &str| parse_in(t, Layer::User).unwrap_err();
        let x = e("[serve]\ntoken = \"abcdefabcdefabcdef\"\n");
        assert_eq!(x.line, 2);
        assert!(
            x.message.contains("refused") && x.fix.contains("token_file"),
            "{x}"
        );
        let x = e("[serve]\ntoken_file = \"a\"\ntoken_env = \"B\"\n");
        assert_eq!(x.line, 3);
        assert!(x.message.contains("both"), "{x}");
        assert!(
            e("[serve]\ntoken_env = \"1X\"\n")
                .message
                .contains("not an environment variable name")
        );
        assert!(
            e("[serve]\ntoken_env = \"A-B\"\n")
                .message
                .contains("not an environment variable name")
        );
        assert!(e("[serve]\ntoken_file = \" \"\n").message.contains("empty"));
        assert!(
            e("[serve]\ntoken_file = 3\n")
                .message
                .contains("must be a string")
        );
        assert!(
            e("[serve]\nlisten = \"x\"\n")
                .message
                .contains("unknown key \"listen\" in [serve]")
        );
        assert!(e("serve = true\n").message.contains("must be a table"));
    }
}
