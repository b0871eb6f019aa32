//! Risk classes, effects and decisions: the vocabulary the gate speaks.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How much harm a request can do.
///
/// The order `read < write < execute < network < credential < destructive` is the
/// order used to report the risk of a whole call (its maximum). Decisions are made
/// per request, so a `credential` request inside a `destructive` command is still
/// judged as `credential`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Reads inside the location.
    Read,
    /// Creates or changes files.
    Write,
    /// Runs a program.
    Execute,
    /// Talks to the network.
    Network,
    /// Touches secrets (keys, tokens, `.env`).
    Credential,
    /// Destroys data that cannot be recovered; asked every time.
    Destructive,
}

impl Risk {
    /// All classes, lowest first.
    pub const ALL: [Risk; 6] = [
        Risk::Read,
        Risk::Write,
        Risk::Execute,
        Risk::Network,
        Risk::Credential,
        Risk::Destructive,
    ];

    /// The lowercase name used in configs, JSON and the audit log.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Read => "read",
            Risk::Write => "write",
            Risk::Execute => "execute",
            Risk::Network => "network",
            Risk::Credential => "credential",
            Risk::Destructive => "destructive",
        }
    }

    /// One level up, saturating at `credential` (used for "outside the location").
    ///
    /// `destructive` stays `destructive`; `credential` stays `credential`.
    pub fn raised(self) -> Risk {
        match self {
            Risk::Read => Risk::Write,
            Risk::Write => Risk::Execute,
            Risk::Execute => Risk::Network,
            Risk::Network => Risk::Credential,
            other => other,
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the gate does with a request. Ordered by strictness: `allow < ask < deny`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Run without asking.
    Allow,
    /// Ask a person.
    Ask,
    /// Refuse.
    Deny,
}

impl Effect {
    /// The lowercase name used in configs and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Ask => "ask",
            Effect::Deny => "deny",
        }
    }

    /// The strictest of several effects (`deny` beats `ask` beats `allow`);
    /// `allow` for an empty list.
    pub fn strictest<I: IntoIterator<Item = Effect>>(effects: I) -> Effect {
        effects.into_iter().max().unwrap_or(Effect::Allow)
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a decision came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecisionSource {
    /// The default for the risk class (no rule matched).
    Default,
    /// A configured rule.
    Rule,
    /// An approval saved for the project ("always").
    Saved,
    /// An approval given earlier in this session.
    Session,
    /// A person answered just now.
    User,
    /// Nobody answered in time.
    Timeout,
    /// An external hook decided.
    Hook,
    /// Allowed because the command runs confined by the sandbox (mode `auto`).
    Sandbox,
    /// The approval client answered by itself, without showing the person
    /// (an MCP client that declines every elicitation when nobody is at its
    /// prompt: Claude Code's `-p`, Codex's `exec`).
    Client,
}

impl DecisionSource {
    /// The lowercase name used in JSON and the audit log.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionSource::Default => "default",
            DecisionSource::Rule => "rule",
            DecisionSource::Saved => "saved",
            DecisionSource::Session => "session",
            DecisionSource::User => "user",
            DecisionSource::Timeout => "timeout",
            DecisionSource::Hook => "hook",
            DecisionSource::Sandbox => "sandbox",
            DecisionSource::Client => "client",
        }
    }
}

impl fmt::Display for DecisionSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A configured rule that produced a decision, for explain and the audit log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RuleRef {
    /// The config file the rule came from (or `<builtin>`, `<cli>`).
    pub file: String,
    /// The 1-based line of the rule in that file (0 when unknown).
    pub line: u32,
    /// The rule's action pattern.
    pub action: String,
    /// The rule's resource pattern.
    pub resource: String,
}

impl RuleRef {
    /// `file:line`, the form `check --json` prints.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// A decision about one request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Decision {
    /// Allow, ask or deny.
    pub effect: Effect,
    /// The risk the request had when it was decided.
    pub risk: Risk,
    /// Why, in words a person reads.
    pub reason: String,
    /// Where the decision came from.
    pub source: DecisionSource,
    /// The rule that matched, if one did.
    pub rule: Option<RuleRef>,
    /// A message from a person who rejected the request, passed on to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
}

impl Decision {
    /// A decision without a rule or feedback.
    pub fn new(
        effect: Effect,
        risk: Risk,
        source: DecisionSource,
        reason: impl Into<String>,
    ) -> Self {
        Decision {
            effect,
            risk,
            reason: reason.into(),
            source,
            rule: None,
            feedback: None,
        }
    }
}
