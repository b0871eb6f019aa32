//! The compiled policy and steps 3–6 of the decision tree.
//!
//! [`Policy::load`] merges the layers — user, project, session (CLI `--config`
//! files and flags), then the managed layer, applied last and final — and compiles
//! the rules once. [`Policy::judge`] decides one request:
//!
//! 1. a matching managed rule is final;
//! 2. in `plan` mode everything that is not `read` is denied;
//! 3. otherwise the last matching rule of the merged list decides (a bare-wildcard
//!    `allow` never allows `destructive` or `credential`);
//! 4. with no rule, the default for the risk (`accept-edits` allows writes inside
//!    the location);
//! 5. an `ask` that an earlier approval covers becomes `allow` — never for `ask!`,
//!    a destructive request, or a command that could not be analysed.
//!
//! An opaque command is at least `ask` whatever a rule says (invariant 4).

use std::path::{Path, PathBuf};
use std::time::Duration;

use toolgate_core::{Decision, DecisionSource, Effect, Location, PermissionRequest, Risk};

use crate::config::{
    ApprovalChannelName, ApprovalsConfig, ConfigError, ConfigFile, Mode, SandboxConfig,
    ServeConfig, ToolOutputConfig, check_example, parse_config,
};
use crate::pattern::{Pattern, PatternBase, PatternKind};
use crate::rules::{Layer, Rule, RuleEffect, RuleSet};

/// The default time an ask waits for an answer.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(30);
/// Where the managed layer lives unless overridden.
pub const DEFAULT_MANAGED_PATH: &str = "/etc/toolgate/config.toml";

/// Where the layers come from.
#[derive(Clone, Debug)]
pub struct PolicySources {
    /// The location root: the project, and the base of relative path patterns.
    pub root: PathBuf,
    /// The home directory (`~` in patterns).
    pub home: PathBuf,
    /// The user layer file; skipped when it does not exist.
    pub user: Option<PathBuf>,
    /// The project layer file; skipped when it does not exist.
    pub project: Option<PathBuf>,
    /// Session layer files (`--config FILE`); each must exist.
    pub session_files: Vec<PathBuf>,
    /// Session rules given directly, as `(action, resource, effect)`.
    pub session_rules: Vec<(String, String, RuleEffect)>,
    /// The mode chosen on the command line (beats config, but not managed).
    pub mode: Option<Mode>,
    /// The managed layer file; skipped when it does not exist.
    pub managed: Option<PathBuf>,
}

impl PolicySources {
    /// The standard places for a project at `root`: `$HOME/.config/toolgate/config.toml`,
    /// `<root>/.toolgate/config.toml`, and `/etc/toolgate/config.toml` (or
    /// `$TOOLGATE_MANAGED_CONFIG`).
    pub fn standard(root: impl Into<PathBuf>) -> PolicySources {
        let root = root.into();
        let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from);
        let managed = std::env::var_os("TOOLGATE_MANAGED_CONFIG")
            .map_or_else(|| PathBuf::from(DEFAULT_MANAGED_PATH), PathBuf::from);
        PolicySources {
            user: Some(home.join(".config/toolgate/config.toml")),
            project: Some(root.join(".toolgate/config.toml")),
            root,
            home,
            session_files: Vec::new(),
            session_rules: Vec::new(),
            mode: None,
            managed: Some(managed),
        }
    }

    /// No files at all: only the defaults (plus what is added later).
    pub fn bare(root: impl Into<PathBuf>, home: impl Into<PathBuf>) -> PolicySources {
        PolicySources {
            root: root.into(),
            home: home.into(),
            user: None,
            project: None,
            session_files: Vec::new(),
            session_rules: Vec::new(),
            mode: None,
            managed: None,
        }
    }
}

/// A config example that must (or must not) match its rule, for `policy test`.
#[derive(Clone, Debug)]
pub struct RuleExample {
    /// The rule, as merged.
    pub rule: Rule,
    /// The example text.
    pub text: String,
    /// Whether it must match.
    pub must_match: bool,
}

/// The compiled policy. Immutable; a reload builds a new one.
#[derive(Debug)]
pub struct Policy {
    rules: RuleSet,
    managed: RuleSet,
    mode: Mode,
    ask_timeout: Duration,
    tool_output: ToolOutputConfig,
    approvals: ApprovalsConfig,
    managed_approvals: ApprovalsConfig,
    serve: Option<ServeConfig>,
    sandbox: SandboxConfig,
    root: PathBuf,
    home: PathBuf,
    files: Vec<String>,
    examples: Vec<RuleExample>,
}

/// The judgement of one request, with what the gate needs to resolve it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The decision.
    pub decision: Decision,
    /// A rule forces asking (`ask!`): approvals are neither used nor saved.
    pub forced: bool,
    /// An approval may answer this request later (not forced, not destructive, not
    /// opaque, and it has a save pattern).
    pub reusable: bool,
}

/// Earlier approvals the policy may consult for an `ask`.
pub trait ApprovalLookup {
    /// An approval covering `(action, resource)`: where it comes from and its pattern.
    fn covering(&self, action: &str, resource: &str) -> Option<(DecisionSource, String)>;
}

/// No approvals at all.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoApprovals;

impl ApprovalLookup for NoApprovals {
    fn covering(&self, _: &str, _: &str) -> Option<(DecisionSource, String)> {
        None
    }
}

/// Whether an approval `pattern` saved for `action` covers `resource`.
pub fn approval_covers(action: &str, pattern: &str, resource: &str) -> bool {
    let base = PatternBase {
        root: Path::new("/"),
        home: Path::new("/"),
    };
    Pattern::parse(pattern, PatternKind::for_action(action), &base)
        .map(|p| !p.is_bare_wildcard() && p.is_match(resource))
        .unwrap_or(false)
}

fn read_file(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.display().to_string(),
        line: 0,
        message: format!("cannot read the config file: {e}"),
        fix: "check that the path is right and the file is readable UTF-8 text".into(),
    })
}

impl Policy {
    /// Loads and merges every layer named by `sources`.
    pub fn load(sources: &PolicySources) -> Result<Policy, ConfigError> {
        let base = PatternBase {
            root: &sources.root,
            home: &sources.home,
        };
        let mut files = Vec::new();
        let optional = |path: &Option<PathBuf>, layer: Layer, files: &mut Vec<ConfigFile>| {
            if let Some(p) = path.as_ref().filter(|p| p.exists()) {
                let text = read_file(p)?;
                files.push(parse_config(&text, &p.display().to_string(), layer, &base)?);
            }
            Ok::<(), ConfigError>(())
        };
        optional(&sources.user, Layer::User, &mut files)?;
        optional(&sources.project, Layer::Project, &mut files)?;
        for p in &sources.session_files {
            let text = read_file(p)?;
            files.push(parse_config(
                &text,
                &p.display().to_string(),
                Layer::Session,
                &base,
            )?);
        }
        optional(&sources.managed, Layer::Managed, &mut files)?;
        let mut session_rules = Vec::new();
        for (action, resource, effect) in &sources.session_rules {
            let rule = Rule::new(action, resource, *effect, Layer::Session, "<cli>", 0, &base)
                .map_err(|e| ConfigError {
                    file: "<cli>".into(),
                    line: 0,
                    message: format!("bad pattern {resource:?} for action {action:?}: {e}"),
                    fix: "use `*`, `**` and `?` as wildcards".into(),
                })?;
            session_rules.push(rule);
        }
        Policy::from_parts(files, session_rules, sources)
    }

    /// Builds a policy from config texts `(file name, layer, text)` in merge order
    /// (for tests, benches and embedders).
    pub fn from_texts(
        root: &Path,
        home: &Path,
        texts: &[(&str, Layer, &str)],
        mode: Option<Mode>,
    ) -> Result<Policy, ConfigError> {
        let base = PatternBase { root, home };
        let mut files = Vec::new();
        for (name, layer, text) in texts {
            files.push(parse_config(text, name, *layer, &base)?);
        }
        let mut sources = PolicySources::bare(root, home);
        sources.mode = mode;
        Policy::from_parts(files, Vec::new(), &sources)
    }

    fn from_parts(
        mut files: Vec<ConfigFile>,
        session_rules: Vec<Rule>,
        sources: &PolicySources,
    ) -> Result<Policy, ConfigError> {
        // Stable: layers in merge order, files of one layer in the order given.
        files.sort_by_key(|f| f.layer);
        let mut normal = Vec::new();
        let mut managed = Vec::new();
        let mut examples = Vec::new();
        let mut mode = None;
        let mut managed_mode = None;
        let mut ask_timeout = None;
        let mut tool_output = ToolOutputConfig::default();
        let mut approvals = ApprovalsConfig::default();
        let mut managed_approvals = ApprovalsConfig::default();
        let mut serve = None;
        let mut sandbox = SandboxConfig::default();
        let mut managed_sandbox_mode = None;
        let mut names = Vec::new();
        for f in files {
            names.push(format!("{} ({})", f.file, f.layer.as_str()));
            for (idx, text, must) in &f.examples {
                examples.push(RuleExample {
                    rule: f.rules[*idx].clone(),
                    text: text.clone(),
                    must_match: *must,
                });
            }
            if f.layer == Layer::Managed {
                managed.extend(f.rules);
                managed_mode = f.mode.or(managed_mode);
            } else {
                normal.extend(f.rules);
                mode = f.mode.or(mode);
            }
            ask_timeout = f.ask_timeout.or(ask_timeout);
            if let Some(t) = f.tool_output {
                tool_output.max_lines = t.max_lines.or(tool_output.max_lines);
                tool_output.max_bytes = t.max_bytes.or(tool_output.max_bytes);
            }
            if let Some(a) = f.approvals {
                let into = if f.layer == Layer::Managed {
                    &mut managed_approvals
                } else {
                    &mut approvals
                };
                into.channels = a.channels.or(into.channels.take());
                into.escalate_after = a.escalate_after.or(into.escalate_after);
            }
            // Layers are in merge order and managed comes last, so it is final.
            serve = f.serve.or(serve);
            if let Some(sb) = f.sandbox {
                if f.layer == Layer::Managed {
                    managed_sandbox_mode = sb.mode.or(managed_sandbox_mode);
                }
                sandbox.mode = sb.mode.or(sandbox.mode);
                sandbox.writable.extend(sb.writable);
                sandbox.allow_domains.extend(sb.allow_domains);
            }
        }
        sandbox.mode = managed_sandbox_mode.or(sandbox.mode);
        normal.extend(session_rules);
        let compile = |rules: Vec<Rule>| {
            RuleSet::compile(rules).map_err(|e| ConfigError {
                file: "<rules>".into(),
                line: 0,
                message: e.to_string(),
                fix: "use fewer or simpler wildcard patterns".into(),
            })
        };
        Ok(Policy {
            rules: compile(normal)?,
            managed: compile(managed)?,
            mode: managed_mode.or(sources.mode).or(mode).unwrap_or_default(),
            ask_timeout: ask_timeout.unwrap_or(DEFAULT_ASK_TIMEOUT),
            tool_output,
            approvals,
            managed_approvals,
            serve,
            sandbox,
            root: sources.root.clone(),
            home: sources.home.clone(),
            files: names,
            examples,
        })
    }

    /// The mode in force.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// How long an ask waits.
    pub fn ask_timeout(&self) -> Duration {
        self.ask_timeout
    }

    /// `[tool_output]`, merged.
    pub fn tool_output(&self) -> ToolOutputConfig {
        self.tool_output
    }

    /// `[sandbox]`, merged: the last layer's `mode` (the managed layer's is
    /// final), every layer's `writable` and `allow_domains`.
    pub fn sandbox(&self) -> &SandboxConfig {
        &self.sandbox
    }

    /// The approval channels of `mcp` and `serve`, in the order to try them:
    /// the managed layer's `[approvals] channels` if set, else `cli` (the
    /// command line), else the last layer that sets it, else mcp, web, terminal.
    pub fn approval_channels(
        &self,
        cli: Option<&[ApprovalChannelName]>,
    ) -> Vec<ApprovalChannelName> {
        self.managed_approvals
            .channels
            .as_deref()
            .or(cli)
            .or(self.approvals.channels.as_deref())
            .unwrap_or(&ApprovalChannelName::DEFAULT_ORDER)
            .to_vec()
    }

    /// How long a channel asks alone before the next one is asked too
    /// (`[approvals] escalate_after`, managed layer first; default 0: all at once).
    pub fn escalate_after(&self) -> Duration {
        self.managed_approvals
            .escalate_after
            .or(self.approvals.escalate_after)
            .unwrap_or(Duration::ZERO)
    }

    /// Where `serve` reads its bearer token (`[serve]`, last layer wins; never
    /// from the project layer), if configured.
    pub fn serve_config(&self) -> Option<&ServeConfig> {
        self.serve.as_ref()
    }

    /// The location root the policy was compiled for.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The home directory `~` stands for.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The files loaded, with their layers, in merge order.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// The merged (non-managed) rules, in order.
    pub fn rules(&self) -> &[Rule] {
        self.rules.rules()
    }

    /// The managed rules, in order.
    pub fn managed_rules(&self) -> &[Rule] {
        self.managed.rules()
    }

    /// Every example of every rule, for `policy test`.
    pub fn examples(&self) -> &[RuleExample] {
        &self.examples
    }

    /// Re-checks every example; returns the failures (empty when all pass).
    pub fn test_examples(&self) -> Vec<ConfigError> {
        let base = PatternBase {
            root: &self.root,
            home: &self.home,
        };
        self.examples
            .iter()
            .filter_map(|ex| check_example(&ex.rule, &ex.text, ex.must_match, &base).err())
            .collect()
    }

    /// The rule that decides `(action, resource)` at `risk`, and whether it is managed.
    pub fn deciding_rule(&self, action: &str, resource: &str, risk: Risk) -> Option<(&Rule, bool)> {
        if let Some(r) = self.managed.find(action, resource, risk) {
            return Some((r, true));
        }
        self.rules.find(action, resource, risk).map(|r| (r, false))
    }

    /// Whether every use of `action` is denied by a rule (for catalogue
    /// visibility only): the last rule naming the action is a bare-wildcard deny,
    /// looking at the managed layer first since it is final.
    pub fn denies_wholesale(&self, action: &str) -> bool {
        let last = |set: &RuleSet| {
            set.rules()
                .iter()
                .rev()
                .find(|r| r.matches_action(action))
                .map(|r| r.effect == RuleEffect::Deny && r.resource.is_bare_wildcard())
        };
        last(&self.managed)
            .or_else(|| last(&self.rules))
            .unwrap_or(false)
    }

    /// Decides one request (steps 3–5 of the decision tree).
    pub fn judge(
        &self,
        request: &PermissionRequest,
        opaque: bool,
        raised_reason: Option<&str>,
        location: &Location,
        approvals: &dyn ApprovalLookup,
    ) -> Verdict {
        let risk = request.risk;
        let what = describe_request(request, raised_reason);
        let reusable = !opaque && risk != Risk::Destructive && request.save_pattern.is_some();
        let verdict =
            |effect: Effect, source, reason: String, rule: Option<&Rule>, forced| Verdict {
                decision: Decision {
                    effect,
                    risk,
                    reason,
                    source,
                    rule: rule.map(Rule::rule_ref),
                    feedback: None,
                },
                forced,
                reusable: reusable && !forced,
            };
        // A bare wildcard never allows destructive or credential requests, nor a
        // command run as another user: matching treats the latter as credential.
        let match_risk = if runs_as_another_user(request) && risk < Risk::Credential {
            Risk::Credential
        } else {
            risk
        };
        // 1. Managed rules are final.
        if let Some(rule) = self
            .managed
            .find(&request.action, &request.resource, match_risk)
        {
            let (effect, forced) = self.rule_effect(rule, opaque);
            let reason = format!("{what}: {}", rule_reason(rule, effect, opaque, true));
            let mut v = verdict(effect, DecisionSource::Rule, reason, Some(rule), forced);
            if effect == Effect::Ask && !forced {
                self.apply_approvals(&mut v, request, approvals);
            }
            return v;
        }
        let rule = self
            .rules
            .find(&request.action, &request.resource, match_risk);
        // 2. Plan mode is read-only; a configured deny still reports itself.
        if self.mode == Mode::Plan && risk != Risk::Read {
            if let Some(rule) = rule.filter(|r| r.effect == RuleEffect::Deny) {
                let reason = format!("{what}: {}", rule_reason(rule, Effect::Deny, opaque, false));
                return verdict(
                    Effect::Deny,
                    DecisionSource::Rule,
                    reason,
                    Some(rule),
                    false,
                );
            }
            let reason = format!("{what}: plan mode is read-only, so {risk} requests are denied");
            return verdict(Effect::Deny, DecisionSource::Default, reason, None, false);
        }
        // 3. The last matching rule.
        let mut v = if let Some(rule) = rule {
            let (effect, forced) = self.rule_effect(rule, opaque);
            let reason = format!("{what}: {}", rule_reason(rule, effect, opaque, false));
            verdict(effect, DecisionSource::Rule, reason, Some(rule), forced)
        } else {
            // 4. The default for the risk.
            let (mut effect, mut why) = self.default_for(request, location);
            if let Some((refused, why_refused)) = self.refused_wildcard(request) {
                // A bare wildcard matched but may not decide: say so, rather
                // than "no rule matched".
                if effect == Effect::Allow {
                    effect = Effect::Ask;
                }
                why = format!(
                    "{} {} at {}:{} is a bare wildcard, which never allows {why_refused}, so {}",
                    refused_wildcard_default(request),
                    refused.describe(),
                    refused.file,
                    refused.line,
                    default_words(effect)
                );
            }
            if opaque && effect == Effect::Allow {
                effect = Effect::Ask;
                why = "the command cannot be fully analysed, so it is asked".into();
            }
            verdict(
                effect,
                DecisionSource::Default,
                format!("{what}: {why}"),
                None,
                false,
            )
        };
        // 5. Earlier approvals.
        if v.decision.effect == Effect::Ask && !v.forced {
            self.apply_approvals(&mut v, request, approvals);
        }
        v
    }

    /// The bare-wildcard `allow` rule that matched `request` but may not decide
    /// it (invariant 3: it is destructive, credential, or run as another user),
    /// with what it never allows, in words. Explain and the judge's reason name
    /// it so that a default is not described as "no rule matched".
    pub fn refused_wildcard(&self, request: &PermissionRequest) -> Option<(&Rule, &'static str)> {
        let why = wildcard_restriction(request)?;
        // `Risk::Read` lifts the restriction: what would match without it.
        let unrestricted = self
            .managed
            .find(&request.action, &request.resource, Risk::Read)
            .or_else(|| {
                self.rules
                    .find(&request.action, &request.resource, Risk::Read)
            })?;
        (unrestricted.effect == RuleEffect::Allow && unrestricted.resource.is_bare_wildcard())
            .then_some((unrestricted, why))
    }

    fn rule_effect(&self, rule: &Rule, opaque: bool) -> (Effect, bool) {
        match rule.effect {
            RuleEffect::Allow if opaque => (Effect::Ask, false),
            RuleEffect::ForceAsk => (Effect::Ask, true),
            other => (other.effect(), false),
        }
    }

    fn apply_approvals(
        &self,
        v: &mut Verdict,
        request: &PermissionRequest,
        approvals: &dyn ApprovalLookup,
    ) {
        if !v.reusable {
            return;
        }
        if let Some((source, pattern)) = approvals.covering(&request.action, &request.resource) {
            v.decision.effect = Effect::Allow;
            v.decision.source = source;
            let when = if source == DecisionSource::Saved {
                "always, for this project"
            } else {
                "earlier in this session"
            };
            v.decision.reason = format!(
                "{}; allowed because `{}` for {} was approved {when}",
                v.decision.reason, pattern, request.action
            );
        }
    }

    /// The default effect for a request no rule matched, and why.
    fn default_for(&self, request: &PermissionRequest, location: &Location) -> (Effect, String) {
        let risk = request.risk;
        match risk {
            Risk::Read => (Effect::Allow, "no rule matched; reads are allowed by default".into()),
            Risk::Write => {
                let inside = request.action == "edit"
                    || (request.resource.starts_with('/')
                        && location.contains(Path::new(&request.resource)));
                if self.mode == Mode::AcceptEdits && inside {
                    (
                        Effect::Allow,
                        "no rule matched; accept-edits mode allows writes inside the location".into(),
                    )
                } else {
                    (Effect::Ask, "no rule matched; writes are asked by default".into())
                }
            }
            Risk::Execute => (Effect::Ask, "no rule matched; running programs is asked by default".into()),
            Risk::Network => (Effect::Ask, "no rule matched; network access is asked by default".into()),
            Risk::Credential => (
                Effect::Deny,
                "no rule matched; touching credentials is denied by default (only a rule that names the path or command can allow it)".into(),
            ),
            Risk::Destructive => (
                Effect::Ask,
                "no rule matched; destructive requests are asked every time and no approval is reused".into(),
            ),
        }
    }
}

/// What a bare-wildcard `allow` may not allow about `request`, in words
/// (`a destructive request`…), or `None` when such a rule may allow it.
pub fn wildcard_restriction(request: &PermissionRequest) -> Option<&'static str> {
    if runs_as_another_user(request) {
        return Some("a command run as another user");
    }
    match request.risk {
        Risk::Destructive => Some("a destructive request"),
        Risk::Credential => Some("touching credentials"),
        _ => None,
    }
}

/// How explain and reasons name the default that applies when a bare wildcard
/// may not decide `request`.
pub fn refused_wildcard_default(request: &PermissionRequest) -> &'static str {
    if runs_as_another_user(request) {
        "the default for commands run as another user applies:"
    } else if request.risk == Risk::Credential {
        "the default for credential requests applies:"
    } else {
        "the default for destructive requests applies:"
    }
}

fn default_words(effect: Effect) -> &'static str {
    match effect {
        Effect::Allow => "it is allowed",
        Effect::Ask => "it is asked (only a rule that names the command or path can allow it)",
        Effect::Deny => "it is denied (only a rule that names the command or path can allow it)",
    }
}

fn describe_request(request: &PermissionRequest, raised: Option<&str>) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(request.action.len() + request.resource.len() + 48);
    s.push_str(&request.action);
    s.push(' ');
    push_quoted(&mut s, &request.resource);
    let _ = write!(s, " ({})", request.risk);
    if let Some(r) = raised.filter(|r| !r.is_empty()) {
        s.push_str(", ");
        s.push_str(r);
    }
    s
}

/// `` `text` ``, cut after 120 characters with `…`.
fn push_quoted(s: &mut String, text: &str) {
    const MAX: usize = 120;
    s.push('`');
    // At most MAX bytes is at most MAX characters: no need to count.
    if text.len() > MAX && text.chars().count() > MAX {
        s.extend(text.chars().take(MAX));
        s.push('…');
    } else {
        s.push_str(text);
    }
    s.push('`');
}

fn rule_reason(rule: &Rule, effect: Effect, opaque: bool, managed: bool) -> String {
    use std::fmt::Write;
    let verb = match (rule.effect, effect) {
        (RuleEffect::ForceAsk, _) => "forces asking; no approval can allow it",
        (RuleEffect::Allow, Effect::Ask) if opaque => {
            "would allow it, but the command cannot be fully analysed, so it is asked"
        }
        (_, Effect::Allow) => "allows it",
        (_, Effect::Ask) => "asks",
        (_, Effect::Deny) => "denies it",
    };
    let mut s = String::with_capacity(
        rule.action.len() + rule.resource.text.len() + rule.file.len() + verb.len() + 48,
    );
    if managed {
        s.push_str("managed rule (final) ");
    } else {
        s.push_str(rule.layer.as_str());
        s.push_str(" rule ");
    }
    let _ = write!(
        s,
        "{} \"{}\" = \"{}\" at {}:{} {verb}",
        rule.action, rule.resource.text, rule.effect, rule.file, rule.line
    );
    s
}

/// Whether the shell analyser marked `request` as run through sudo or doas.
fn runs_as_another_user(request: &PermissionRequest) -> bool {
    request
        .note
        .as_deref()
        .is_some_and(|n| n.starts_with(crate::shell::ANOTHER_USER_NOTE))
}
