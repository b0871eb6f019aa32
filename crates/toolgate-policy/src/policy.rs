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

use serde::{Deserialize, Serialize};
use toolgate_core::protected::{Protected, ProtectedClass, ProtectedPaths};
use toolgate_core::{
    Decision, DecisionSource, Effect, Location, PermissionRequest, ResourceKind, Risk,
};

use crate::config::{
    ApprovalChannelName, ApprovalsConfig, ConfigError, ConfigFile, Mode, SandboxConfig,
    SandboxMode, ServeConfig, ToolOutputConfig, check_example, parse_config,
};
use crate::pattern::{Pattern, PatternBase, PatternKind};
use crate::rules::{Layer, Rule, RuleEffect, RuleSet};
use crate::trust::TrustStore;

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
    /// The trust records ([`crate::trust::TrustStore`]); without them no
    /// project config is trusted, so the project layer only tightens.
    pub trust: Option<PathBuf>,
    /// toolgate's data directory: protected, like every config file above.
    pub data_dir: Option<PathBuf>,
    /// Bash commands run confined by the sandbox on this machine (the binary
    /// sets it from the sandbox's detection). Without it mode `auto` is
    /// `default` (invariant 11). `[sandbox] mode = "off"` overrides it.
    pub sandbox_available: bool,
    /// The bash commands this policy judges are run by toolgate's own bash
    /// tool (the binary sets it for the engine that runs calls: `mcp`,
    /// `serve`, `call`), so a confined one gets only the sandbox's
    /// allowlisted environment. False for `check` and hooks, where the
    /// command runs (if at all) with the environment it was given.
    pub runs_commands: bool,
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
            trust: None,
            data_dir: None,
            sandbox_available: false,
            runs_commands: false,
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
            trust: None,
            data_dir: None,
            sandbox_available: false,
            runs_commands: false,
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
    /// The machine confines bash commands (see [`PolicySources::sandbox_available`]).
    sandbox_available: bool,
    /// See [`PolicySources::runs_commands`].
    runs_commands: bool,
    root: PathBuf,
    home: PathBuf,
    files: Vec<String>,
    examples: Vec<RuleExample>,
    protected: ProtectedPaths,
    project: Option<ProjectStatus>,
    project_error: Option<ConfigError>,
    /// The parsed project config, kept so that a reload that finds it broken
    /// can keep what it tightens.
    project_file: Option<ConfigFile>,
    /// With an untrusted project layer: the policy of the other layers alone,
    /// which a project rule may only make stricter.
    without_project: Option<Box<Policy>>,
    /// With an untrusted project layer: the policy as if it were trusted, to
    /// report what was ignored.
    as_trusted: Option<Box<Policy>>,
}

/// An entry of an untrusted project config that was ignored because it would
/// loosen the gate, or a broken project config ignored as a whole:
/// `{"rule":"file:line","why":"…"}` in `check --json`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ignored {
    /// `file:line` of the entry.
    pub rule: String,
    /// Why it was ignored and what it would have done.
    pub why: String,
}

/// What explain, `check` and `toolgate trust` say about the project layer.
pub const UNTRUSTED: &str = "project config not trusted (run `toolgate trust`)";

/// The project layer as loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectStatus {
    /// The file, as named in rules and reasons.
    pub file: String,
    /// Its absolute path, as trust records it.
    pub path: PathBuf,
    /// The sha256 of the bytes that were parsed.
    pub sha256: String,
    /// Whether a person trusted exactly these bytes.
    pub trusted: bool,
    /// What it would loosen (empty when trusted): every `allow` rule, and each
    /// setting that allows more than the layers below.
    pub loosening: Vec<Ignored>,
}

/// What a write request's target is, for the protected-path rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteGuard {
    /// The target is a protected path.
    Protected(Protected),
    /// The target is only known at run time (a redirect to `$F`, a backtick
    /// target, a relative path in an unknown directory): it might be any path,
    /// protected ones included, so no mode and no `allow` rule allows it.
    Unknown,
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

/// The earlier approval that answers `request`, if any. A protected path
/// (`exact_only`) is answered only by an approval of that path; a command
/// whose save pattern is the exact command (it runs code its arguments
/// choose, or gives options: [`crate::classify::exact_only`]) only by an
/// approval of exactly that command, never by a prefix pattern.
pub fn approval_covering(
    request: &PermissionRequest,
    exact_only: bool,
    approvals: &dyn ApprovalLookup,
) -> Option<(DecisionSource, String)> {
    let exact_only = exact_only
        || (request.kind == ResourceKind::Command
            && crate::classify::exact_only(&request.resource, request.save_pattern.as_deref()));
    approvals
        .covering(&request.action, &request.resource)
        .filter(|(_, pattern)| !exact_only || *pattern == request.resource)
}

fn read_file(path: &Path) -> Result<String, ConfigError> {
    let err = |message: String| ConfigError {
        file: path.display().to_string(),
        line: 0,
        message,
        fix: "check that the path is right and the file is readable UTF-8 text".into(),
    };
    let bytes = crate::trust::read_config_bytes(path)
        .map_err(|e| err(format!("cannot read the config file: {e}")))?;
    String::from_utf8(bytes).map_err(|e| err(format!("cannot read the config file: {e}")))
}

/// A parsed project config and what trust says about it.
struct ProjectInput {
    file: ConfigFile,
    path: PathBuf,
    sha256: String,
    trusted: bool,
}

/// Reads and parses the project config at `path`, hashing the very bytes
/// that are parsed.
fn read_project(
    path: &Path,
    base: &PatternBase<'_>,
    trust: Option<&Path>,
) -> Result<ProjectInput, ConfigError> {
    let name = path.display().to_string();
    let bytes = crate::trust::read_config_bytes(path).map_err(|e| ConfigError {
        file: name.clone(),
        line: 0,
        message: format!("cannot read the config file: {e}"),
        fix: "check that the file is readable".into(),
    })?;
    let text = std::str::from_utf8(&bytes).map_err(|e| ConfigError {
        file: name.clone(),
        line: 0,
        message: format!("the config file is not UTF-8 text: {e}"),
        fix: "save the file as UTF-8".into(),
    })?;
    let file = parse_config(text, &name, Layer::Project, base)?;
    let sha256 = crate::trust::sha256_hex(&bytes);
    let key = crate::trust::config_key(path);
    let trusted = trust.is_some_and(|t| TrustStore::new(t).is_trusted(&key, &sha256));
    Ok(ProjectInput {
        file,
        path: key,
        sha256,
        trusted,
    })
}

impl Policy {
    /// Loads and merges every layer named by `sources`. A user, session or
    /// managed config that is broken is an error; a broken project config is
    /// ignored as a whole and reported by [`Policy::project_error`].
    pub fn load(sources: &PolicySources) -> Result<Policy, ConfigError> {
        Policy::load_after(sources, None)
    }

    /// [`Policy::load`] for a reload: when the project config is now broken,
    /// what the `previous` policy's project config tightened stays in force
    /// (what it loosened does not: the file changed, so it is untrusted).
    pub fn load_after(
        sources: &PolicySources,
        previous: Option<&Policy>,
    ) -> Result<Policy, ConfigError> {
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
        let mut project = None;
        let mut project_error = None;
        if let Some(p) = sources.project.as_ref().filter(|p| p.exists()) {
            match read_project(p, &base, sources.trust.as_deref()) {
                Ok(input) => project = Some(input),
                Err(e) => {
                    tracing::debug!("project config ignored: {e}");
                    project = previous.and_then(|prev| {
                        let status = prev.project.as_ref()?;
                        Some(ProjectInput {
                            file: prev.project_file.clone()?,
                            path: status.path.clone(),
                            sha256: status.sha256.clone(),
                            trusted: false,
                        })
                    });
                    project_error = Some(e);
                }
            }
        }
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
        let mut policy = Policy::assemble(files, project, session_rules, sources)?;
        policy.project_error = project_error;
        Ok(policy)
    }

    /// Builds a policy from config texts `(file name, layer, text)` in merge order
    /// (for tests, benches and embedders). The caller vouches for every text:
    /// a project layer given here is applied as trusted. Use
    /// [`Policy::from_texts_untrusted`] for one that is not.
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
        Policy::build(files, Vec::new(), &sources)
    }

    /// [`Policy::from_texts`] with the project layer's texts untrusted: they
    /// only tighten.
    pub fn from_texts_untrusted(
        root: &Path,
        home: &Path,
        texts: &[(&str, Layer, &str)],
        mode: Option<Mode>,
    ) -> Result<Policy, ConfigError> {
        let base = PatternBase { root, home };
        let mut files = Vec::new();
        let mut project = None;
        for (name, layer, text) in texts {
            let file = parse_config(text, name, *layer, &base)?;
            if *layer == Layer::Project && project.is_none() {
                project = Some(ProjectInput {
                    file,
                    path: PathBuf::from(name),
                    sha256: crate::trust::sha256_hex(text.as_bytes()),
                    trusted: false,
                });
            } else {
                files.push(file);
            }
        }
        let mut sources = PolicySources::bare(root, home);
        sources.mode = mode;
        Policy::assemble(files, project, Vec::new(), &sources)
    }

    /// Merges the layers; an untrusted project config only tightens.
    fn assemble(
        others: Vec<ConfigFile>,
        project: Option<ProjectInput>,
        session_rules: Vec<Rule>,
        sources: &PolicySources,
    ) -> Result<Policy, ConfigError> {
        let Some(input) = project else {
            return Policy::build(others, session_rules, sources);
        };
        let status = |loosening| ProjectStatus {
            file: input.file.file.clone(),
            path: input.path.clone(),
            sha256: input.sha256.clone(),
            trusted: input.trusted,
            loosening,
        };
        if input.trusted {
            let mut all = others;
            all.push(input.file.clone());
            let mut policy = Policy::build(all, session_rules, sources)?;
            policy.project = Some(status(Vec::new()));
            policy.project_file = Some(input.file);
            return Ok(policy);
        }
        let without = Policy::build(others.clone(), session_rules.clone(), sources)?;
        let mut all = others.clone();
        all.push(input.file.clone());
        let as_trusted = Policy::build(all, session_rules.clone(), sources)?;
        let (tight, loosening) = tighten_only(input.file.clone(), &without);
        let mut all = others;
        all.push(tight);
        let mut policy = Policy::build(all, session_rules, sources)?;
        let shown = format!("{} ({})", input.file.file, Layer::Project.as_str());
        for name in policy.files.iter_mut().filter(|n| **n == shown) {
            *name = format!(
                "{} (project, not trusted: only what it tightens applies)",
                input.file.file
            );
        }
        // `policy test` checks the examples of every rule written, kept or not.
        policy.examples = as_trusted.examples.clone();
        policy.project = Some(status(loosening));
        policy.project_file = Some(input.file);
        policy.without_project = Some(Box::new(without));
        policy.as_trusted = Some(Box::new(as_trusted));
        Ok(policy)
    }

    fn build(
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
                tool_output.redact_secrets = t.redact_secrets.or(tool_output.redact_secrets);
                tool_output.flag_injection = t.flag_injection.or(tool_output.flag_injection);
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
                sandbox.readable.extend(sb.readable);
                sandbox.env.extend(sb.env);
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
        let own = sources
            .user
            .iter()
            .chain(sources.managed.iter())
            .chain(sources.session_files.iter())
            .chain(sources.data_dir.iter())
            .cloned()
            .chain(
                sources
                    .trust
                    .iter()
                    .filter_map(|t| t.parent().map(Path::to_path_buf)),
            );
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
            sandbox_available: sources.sandbox_available,
            runs_commands: sources.runs_commands,
            root: sources.root.clone(),
            home: sources.home.clone(),
            files: names,
            examples,
            protected: ProtectedPaths::new(sources.home.clone(), own.collect::<Vec<_>>())
                .with_roots([sources.root.clone()]),
            project: None,
            project_error: None,
            project_file: None,
            without_project: None,
            as_trusted: None,
        })
    }

    /// The project layer as loaded: its file, digest, whether it is trusted
    /// and what it would loosen. `None` when there is no project config (or it
    /// is broken: see [`Policy::project_error`]).
    pub fn project(&self) -> Option<&ProjectStatus> {
        self.project.as_ref()
    }

    /// The error of a broken project config, which was ignored as a whole.
    pub fn project_error(&self) -> Option<&ConfigError> {
        self.project_error.as_ref()
    }

    /// What to tell a person at start about the project layer, in one line:
    /// a broken config ignored, or an untrusted one whose loosening entries
    /// are ignored. `None` when there is nothing to say.
    pub fn project_notice(&self) -> Option<String> {
        if let Some(e) = &self.project_error {
            return Some(format!("project config ignored: {e}"));
        }
        let p = self.project.as_ref().filter(|p| !p.trusted)?;
        if p.loosening.is_empty() {
            return None;
        }
        let n = p.loosening.len();
        Some(format!(
            "{}: {n} loosening entr{} ignored ({}); what it tightens applies",
            p.file,
            if n == 1 { "y" } else { "ies" },
            UNTRUSTED
        ))
    }

    /// The protected-path table this policy judges writes against.
    pub fn protected_paths(&self) -> &ProtectedPaths {
        &self.protected
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

    /// Records whether this machine confines bash commands (for a policy
    /// loaded before the sandbox was detected: `check` detects it only when
    /// the mode is `auto`).
    pub fn set_sandbox_available(&mut self, available: bool) {
        self.sandbox_available = available;
        for inner in [&mut self.without_project, &mut self.as_trusted]
            .into_iter()
            .flatten()
        {
            inner.set_sandbox_available(available);
        }
    }

    /// Records that toolgate's own bash tool runs the commands this policy
    /// judges (see [`PolicySources::runs_commands`]).
    pub fn set_runs_commands(&mut self, runs: bool) {
        self.runs_commands = runs;
        for inner in [&mut self.without_project, &mut self.as_trusted]
            .into_iter()
            .flatten()
        {
            inner.set_runs_commands(runs);
        }
    }

    /// Whether toolgate's own bash tool runs the commands this policy judges
    /// (see [`PolicySources::runs_commands`]).
    pub fn runs_commands(&self) -> bool {
        self.runs_commands
    }

    /// Whether bash commands run confined: the machine supports it and
    /// `[sandbox] mode` is not `off`. Mode `auto` relies on it.
    pub fn sandbox_confines(&self) -> bool {
        self.sandbox_available && self.sandbox.mode != Some(SandboxMode::Off)
    }

    /// Whether mode `auto` is in force with a sandbox to back it: otherwise
    /// `auto` is `default`.
    pub fn auto_confined(&self) -> bool {
        self.mode == Mode::Auto && self.sandbox_confines()
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

    /// Whether a rule of any layer covers `action` (names it, or matches it
    /// by a pattern over actions). Without one, a read request of `action`
    /// is allowed by default in every mode.
    pub fn names_action(&self, action: &str) -> bool {
        [&self.managed, &self.rules]
            .into_iter()
            .any(|set| set.rules().iter().any(|r| r.matches_action(action)))
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

    /// Whether every request of `action` on exactly `resource` is denied by
    /// a rule, whatever its risk (for catalogue visibility only: an upstream
    /// tool `NAME__tool` denied by name or by `NAME__*`).
    pub fn denies_resource(&self, action: &str, resource: &str) -> bool {
        [Risk::Read, Risk::Write, Risk::Execute]
            .into_iter()
            .all(|risk| {
                self.deciding_rule(action, resource, risk)
                    .is_some_and(|(r, _)| r.effect == RuleEffect::Deny)
            })
    }

    /// What a write request's target is for the protected-path rules: `None`
    /// for a request that is not a write to a path, or whose path is known
    /// and not protected.
    pub fn write_guard(&self, request: &PermissionRequest) -> Option<WriteGuard> {
        if request.action != crate::actions::EDIT {
            return None;
        }
        let path = Path::new(&request.resource);
        if !known_target(path) {
            return Some(WriteGuard::Unknown);
        }
        self.protected.check(path).map(WriteGuard::Protected)
    }

    /// Raises a write to a protected path before it is judged: at least
    /// `execute`, and an approval for it is saved for the exact path only.
    pub fn raise_protected(&self, request: &mut PermissionRequest) -> Option<String> {
        let Some(WriteGuard::Protected(p)) = self.write_guard(request) else {
            return None;
        };
        request.risk = request.risk.max(Risk::Execute);
        if request.save_pattern.is_some() {
            request.save_pattern = exact_pattern(&request.resource);
        }
        Some(protected_reason(&request.resource, &p))
    }

    /// Decides one request (steps 3–5 of the decision tree). With an
    /// untrusted project config, a project rule may only make the decision
    /// of the other layers stricter.
    pub fn judge(
        &self,
        request: &PermissionRequest,
        opaque: bool,
        raised_reason: Option<&str>,
        location: &Location,
        approvals: &dyn ApprovalLookup,
    ) -> Verdict {
        self.judge_confined(request, opaque, raised_reason, location, approvals, true)
    }

    /// [`Policy::judge`] for a request of a call that will run inside the
    /// sandbox (`confined`) or not: a call that asked to run unsandboxed is
    /// judged as in `default`, so mode `auto` allows nothing of it.
    pub fn judge_confined(
        &self,
        request: &PermissionRequest,
        opaque: bool,
        raised_reason: Option<&str>,
        location: &Location,
        approvals: &dyn ApprovalLookup,
        confined: bool,
    ) -> Verdict {
        let (v, layer) = self.judge_here(
            request,
            opaque,
            raised_reason,
            location,
            approvals,
            confined,
        );
        // An untrusted project config never makes a decision less strict
        // than the other layers alone: not through a rule, nor through its
        // mode (`accept-edits` under an `auto` that the sandbox does not back,
        // which is `default`), nor through anything else it sets.
        let Some(below) = self.without_project.as_deref() else {
            return v;
        };
        let mut b = below.judge_confined(
            request,
            opaque,
            raised_reason,
            location,
            approvals,
            confined,
        );
        if strictness(&b) > strictness(&v) {
            match &v.decision.rule {
                Some(rule) if layer == Some(Layer::Project) => {
                    b.decision.reason = format!(
                        "{}; project rule {} \"{}\" at {}:{} would have lowered it, but it is ignored: {UNTRUSTED}",
                        b.decision.reason, rule.action, rule.resource, rule.file, rule.line
                    );
                }
                _ if self.mode != below.mode => {
                    b.decision.reason = format!(
                        "{}; the project's mode = \"{}\" would have lowered it, but it is ignored: {UNTRUSTED}",
                        b.decision.reason, self.mode
                    );
                }
                _ => {}
            }
            return b;
        }
        v
    }

    /// The entries of an untrusted project config that would have loosened
    /// the judgement `actual` of `request` (empty when the project config is
    /// trusted, absent, or would not have changed it).
    #[allow(clippy::too_many_arguments)] // the judgement's inputs, as `judge_confined` takes them, plus its result
    pub fn ignored_for(
        &self,
        request: &PermissionRequest,
        opaque: bool,
        raised_reason: Option<&str>,
        location: &Location,
        approvals: &dyn ApprovalLookup,
        actual: &Verdict,
        confined: bool,
    ) -> Option<Ignored> {
        let trusted = self.as_trusted.as_deref()?;
        let project = self.project.as_ref()?;
        let would = trusted.judge_confined(
            request,
            opaque,
            raised_reason,
            location,
            approvals,
            confined,
        );
        if strictness(&would) >= strictness(actual) {
            return None;
        }
        let effect = would.decision.effect;
        if let Some(rule) = would
            .decision
            .rule
            .as_ref()
            .filter(|r| r.file == project.file)
        {
            return Some(Ignored {
                rule: format!("{}:{}", rule.file, rule.line),
                why: format!(
                    "{UNTRUSTED}: rule {} \"{}\" would {} it",
                    rule.action,
                    rule.resource,
                    effect_verb(effect)
                ),
            });
        }
        let line = self.project_file.as_ref().map_or(0, |f| f.lines.mode);
        // The project's mode, kept because it ranks below the other layers',
        // may be what would have lowered it.
        let below_mode = self.without_project.as_deref().map(|b| b.mode);
        let why = if trusted.mode() != self.mode || below_mode.is_some_and(|m| m != self.mode) {
            format!(
                "{UNTRUSTED}: mode = \"{}\" would {} it",
                trusted.mode(),
                effect_verb(effect)
            )
        } else {
            format!("{UNTRUSTED}: it would {} it", effect_verb(effect))
        };
        Some(Ignored {
            rule: format!("{}:{line}", project.file),
            why,
        })
    }

    /// Whether `rule` may decide a request with `guard`: an `allow` for a
    /// write whose target is unknown never applies; one for a protected path
    /// only when it names the path (a component of its pattern is the
    /// protected name), and for toolgate's own files only from the user or
    /// managed layer.
    fn admissible(rule: &Rule, guard: Option<&WriteGuard>) -> bool {
        if rule.effect != RuleEffect::Allow {
            return true;
        }
        match guard {
            None => true,
            Some(WriteGuard::Unknown) => false,
            Some(WriteGuard::Protected(p)) => {
                let names = rule
                    .resource
                    .text
                    .split('/')
                    .any(|part| part.eq_ignore_ascii_case(&p.name));
                names
                    && (p.class != ProtectedClass::Toolgate
                        || matches!(rule.layer, Layer::User | Layer::Managed))
            }
        }
    }

    fn judge_here<'a>(
        &'a self,
        request: &PermissionRequest,
        opaque: bool,
        raised_reason: Option<&str>,
        location: &Location,
        approvals: &dyn ApprovalLookup,
        confined: bool,
    ) -> (Verdict, Option<Layer>) {
        let guard = self.write_guard(request);
        let protected = match &guard {
            Some(WriteGuard::Protected(p)) => Some(p),
            _ => None,
        };
        let risk = if protected.is_some() {
            request.risk.max(Risk::Execute)
        } else {
            request.risk
        };
        let protected_why = protected.map(|p| protected_reason(&request.resource, p));
        let raised_reason = match (&protected_why, raised_reason) {
            (Some(why), Some(r)) if r.contains(why.as_str()) => Some(r),
            (Some(why), _) => Some(why.as_str()),
            (None, r) => r,
        };
        let what = describe_request(request, risk, raised_reason);
        let reusable = !opaque
            && risk != Risk::Destructive
            && request.save_pattern.is_some()
            && guard != Some(WriteGuard::Unknown);
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
        let mut refused: Option<&Rule> = None;
        // The last matching rule that may decide: for a guarded write, an
        // `allow` that does not name the path is passed over (and reported).
        let find = |set: &'a RuleSet, refused: &mut Option<&'a Rule>| -> Option<&'a Rule> {
            let hit = set.find(&request.action, &request.resource, match_risk)?;
            if Policy::admissible(hit, guard.as_ref()) {
                return Some(hit);
            }
            *refused = refused.or(Some(hit));
            set.all_matches(&request.action, &request.resource)
                .into_iter()
                .rev()
                .find(|r| r.applies_to_risk(match_risk) && Policy::admissible(r, guard.as_ref()))
        };
        // 1. Managed rules are final.
        if let Some(rule) = find(&self.managed, &mut refused) {
            let (effect, forced) = self.rule_effect(rule, opaque);
            let reason = rule_reason(&what, rule, effect, opaque, true);
            let mut v = verdict(effect, DecisionSource::Rule, reason, Some(rule), forced);
            if effect == Effect::Ask && !forced {
                self.apply_approvals(&mut v, request, protected.is_some(), approvals);
            }
            return (v, Some(Layer::Managed));
        }
        let rule = find(&self.rules, &mut refused);
        // 2. Plan mode is read-only; a configured deny still reports itself.
        if self.mode == Mode::Plan && risk != Risk::Read {
            if let Some(rule) = rule.filter(|r| r.effect == RuleEffect::Deny) {
                let reason = rule_reason(&what, rule, Effect::Deny, opaque, false);
                return (
                    verdict(
                        Effect::Deny,
                        DecisionSource::Rule,
                        reason,
                        Some(rule),
                        false,
                    ),
                    Some(rule.layer),
                );
            }
            let reason = format!("{what}: plan mode is read-only, so {risk} requests are denied");
            return (
                verdict(Effect::Deny, DecisionSource::Default, reason, None, false),
                None,
            );
        }
        // 3. The last matching rule.
        let layer = rule.map(|r| r.layer);
        let mut v = if let Some(rule) = rule {
            let (effect, forced) = self.rule_effect(rule, opaque);
            let reason = rule_reason(&what, rule, effect, opaque, false);
            verdict(effect, DecisionSource::Rule, reason, Some(rule), forced)
        } else if let Some(guard) = guard.as_ref().filter(|_| risk != Risk::Credential) {
            // 4a. A write to a protected path or an unknown target: no mode
            // and no rule that does not name the path allows it. (A write
            // to a credential that is also protected, `config/.env.staging`
            // by its dot, keeps the stricter default of a credential.)
            let (effect, why) = guarded_default(guard);
            let why = match refused {
                Some(r) => format!(
                    "{why}; {} rule {} at {}:{} does not name the path, so it may not allow it",
                    r.layer.as_str(),
                    r.describe(),
                    r.file,
                    r.line
                ),
                None => why,
            };
            verdict(
                effect,
                DecisionSource::Default,
                format!("{what}: {why}"),
                None,
                false,
            )
        } else if let Some(why) = self.sandbox_allows(request, risk, opaque, location, confined) {
            // 4b. Mode `auto`: the sandbox confines it to the location.
            verdict(
                Effect::Allow,
                DecisionSource::Sandbox,
                format!("{what}: {why}"),
                None,
                false,
            )
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
            self.apply_approvals(&mut v, request, protected.is_some(), approvals);
        }
        (v, layer)
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
        exact_only: bool,
        approvals: &dyn ApprovalLookup,
    ) {
        if !v.reusable {
            return;
        }
        let found = approval_covering(request, exact_only, approvals);
        if let Some((source, pattern)) = found {
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

    /// Why mode `auto` allows `request` inside the sandbox, or `None` when
    /// it does not: a bash command (or an opaque part of one) at risk
    /// `write` or `execute` — so no network, nothing destructive, no
    /// credential — that is not run as another user, runs in the location,
    /// and belongs to a call that runs confined; or, when `[sandbox]
    /// allow_domains` is set, a package install from a registry
    /// ([`crate::installs`]) at risk `network`, whose network in the sandbox
    /// is the proxy only. What it touches outside the location, protected
    /// paths and unknown write targets are separate requests, judged as in
    /// `default`.
    fn sandbox_allows(
        &self,
        request: &PermissionRequest,
        risk: Risk,
        opaque: bool,
        location: &Location,
        confined: bool,
    ) -> Option<&'static str> {
        let runs_inside = request
            .cwd
            .as_deref()
            .is_none_or(|cwd| location.contains(Path::new(cwd)));
        let common = confined
            && self.auto_confined()
            && request.action == "bash"
            && !runs_as_another_user(request)
            && runs_inside;
        // A package install whose only network is the sandbox's proxy to the
        // registries the person listed.
        if common
            && risk == Risk::Network
            && !opaque
            && !self.sandbox.allow_domains.is_empty()
            && crate::installs::is_registry_install(&request.resource)
        {
            return Some(
                "no rule matched; a package install, which mode auto runs inside the sandbox with no network but the proxy to the registries in [sandbox] allow_domains (every connection recorded in the audit log; other hosts refused)",
            );
        }
        let eligible = common && matches!(risk, Risk::Write | Risk::Execute);
        let proxied = !self.sandbox.allow_domains.is_empty();
        eligible.then_some(match (opaque, proxied) {
            (true, false) => "no rule matched; the command cannot be fully analysed, so mode auto runs it only inside the sandbox (writes confined to the location, protected paths read-only, credentials masked, no network), and no approval for it is saved",
            (true, true) => "no rule matched; the command cannot be fully analysed, so mode auto runs it only inside the sandbox (writes confined to the location, protected paths read-only, credentials masked, no network but the proxy to [sandbox] allow_domains), and no approval for it is saved",
            (false, false) => "no rule matched; mode auto runs it inside the sandbox, which confines its effects to the location (protected paths read-only, credentials masked, no network)",
            (false, true) => "no rule matched; mode auto runs it inside the sandbox, which confines its effects to the location (protected paths read-only, credentials masked, no network but the proxy to [sandbox] allow_domains)",
        })
    }

    /// The default effect for a request no rule matched, and why.
    fn default_for(&self, request: &PermissionRequest, location: &Location) -> (Effect, String) {
        let (effect, why) = self.default_for_risk(request, location);
        // A path outside the location has its risk raised one class: the
        // reason names what the request is, not only the class it counts as.
        let outside = request.kind == ResourceKind::Path
            && Path::new(&request.resource).is_absolute()
            && !location.contains(Path::new(&request.resource));
        let raised_from = match request.risk {
            Risk::Write => Some(("a read", "a write")),
            Risk::Execute => Some(("a write", "running a program")),
            Risk::Network => Some(("running a program", "network access")),
            _ => None,
        };
        match raised_from {
            Some((was, counts_as)) if outside && effect == Effect::Ask => (
                effect,
                format!(
                    "no rule matched; outside the location {was} counts as {counts_as} (its risk raised one class), which is asked by default"
                ),
            ),
            _ => (effect, why),
        }
    }

    /// The default for the request's risk class alone.
    fn default_for_risk(
        &self,
        request: &PermissionRequest,
        location: &Location,
    ) -> (Effect, String) {
        let risk = request.risk;
        match risk {
            Risk::Read => (Effect::Allow, "no rule matched; reads are allowed by default".into()),
            Risk::Write => {
                // Accept-edits: a write whose target is known, inside the
                // location (protected paths and unknown targets never get here).
                let path = Path::new(&request.resource);
                let inside = request.action == crate::actions::EDIT
                    && known_target(path)
                    && location.contains(path);
                if self.mode == Mode::AcceptEdits && inside {
                    (
                        Effect::Allow,
                        "no rule matched; accept-edits mode allows writes inside the location".into(),
                    )
                } else if self.auto_confined() && inside {
                    (
                        Effect::Allow,
                        "no rule matched; mode auto allows writes inside the location, as accept-edits does".into(),
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

/// Whether a write target is a path known now: absolute, without `.` or `..`
/// parts, and with nothing the shell would expand at run time (`$`, a
/// backtick). A redirect target the analyser could not resolve keeps its raw
/// text (`$F`, `` `cmd` ``, a relative path in an unknown directory).
fn known_target(path: &Path) -> bool {
    use std::path::Component;
    path.is_absolute()
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
        && !path
            .as_os_str()
            .as_encoded_bytes()
            .iter()
            .any(|b| matches!(b, b'$' | b'`'))
}

/// The save pattern that matches exactly `path`, or `None` when the pattern
/// syntax cannot say it (a `*` or `?` in the name).
fn exact_pattern(path: &str) -> Option<String> {
    (!path.contains(['*', '?'])).then(|| path.to_string())
}

/// Why a write to `path` is protected, for reasons.
fn protected_reason(path: &str, p: &Protected) -> String {
    format!("{path} is a protected path ({}: {})", p.entry, p.why)
}

/// The default for a write to a protected path or an unknown target.
fn guarded_default(guard: &WriteGuard) -> (Effect, String) {
    match guard {
        WriteGuard::Protected(p) if p.class == ProtectedClass::Toolgate => (
            Effect::Deny,
            "writes to toolgate's own config and data are denied (only a user or managed rule that names the path can allow them)".into(),
        ),
        WriteGuard::Protected(_) => (
            Effect::Ask,
            "a write to a protected path is asked: no mode and no rule that does not name the path allows it".into(),
        ),
        WriteGuard::Unknown => (
            Effect::Ask,
            "the target is only known at run time, so it may be any path: no mode and no rule allows it without asking".into(),
        ),
    }
}

fn effect_verb(effect: Effect) -> &'static str {
    match effect {
        Effect::Allow => "allow",
        Effect::Ask => "ask for",
        Effect::Deny => "deny",
    }
}

/// How permissive a mode is: plan < default < accept-edits < auto.
fn mode_rank(mode: Mode) -> u8 {
    match mode {
        Mode::Plan => 0,
        Mode::Default => 1,
        Mode::AcceptEdits => 2,
        Mode::Auto => 3,
    }
}

/// How strict a verdict is: allow < ask < ask! < deny.
fn strictness(v: &Verdict) -> u8 {
    match v.decision.effect {
        Effect::Allow => 0,
        Effect::Ask if v.forced => 2,
        Effect::Ask => 1,
        Effect::Deny => 3,
    }
}

/// An untrusted project file without what it loosens compared with
/// `below` (the policy of the other layers), and the entries removed.
fn tighten_only(mut file: ConfigFile, below: &Policy) -> (ConfigFile, Vec<Ignored>) {
    let mut ignored = Vec::new();
    let at = |line: u32| format!("{}:{line}", file.file);
    let why = |what: String| format!("{UNTRUSTED}: {what}");
    let mut kept = Vec::new();
    let mut remap = Vec::new();
    for rule in std::mem::take(&mut file.rules) {
        if rule.effect == RuleEffect::Allow {
            ignored.push(Ignored {
                rule: at(rule.line),
                why: why(format!("{} would allow without asking", rule.describe())),
            });
            remap.push(None);
        } else {
            remap.push(Some(kept.len()));
            kept.push(rule);
        }
    }
    file.rules = kept;
    file.examples = std::mem::take(&mut file.examples)
        .into_iter()
        .filter_map(|(idx, text, must)| Some((remap.get(idx).copied().flatten()?, text, must)))
        .collect();
    if let Some(mode) = file
        .mode
        .filter(|m| mode_rank(*m) > mode_rank(below.mode()))
    {
        ignored.push(Ignored {
            rule: at(file.lines.mode),
            why: why(format!(
                "mode = \"{mode}\" allows more than mode \"{}\" of the other layers",
                below.mode()
            )),
        });
        file.mode = None;
    }
    if let Some(t) = file.ask_timeout.filter(|t| *t > below.ask_timeout()) {
        ignored.push(Ignored {
            rule: at(file.lines.timeout),
            why: why(format!(
                "timeout = {} waits longer for an answer than {} s",
                t.as_secs_f64(),
                below.ask_timeout().as_secs_f64()
            )),
        });
        file.ask_timeout = None;
    }
    if let Some(t) = file.tool_output.as_mut() {
        let lines = below
            .tool_output()
            .max_lines
            .unwrap_or(toolgate_core::bound::DEFAULT_MAX_LINES);
        let bytes = below
            .tool_output()
            .max_bytes
            .unwrap_or(toolgate_core::bound::DEFAULT_MAX_BYTES);
        if t.max_lines.is_some_and(|n| n > lines) || t.max_bytes.is_some_and(|n| n > bytes) {
            ignored.push(Ignored {
                rule: at(file.lines.tool_output),
                why: why(format!(
                    "[tool_output] shows the model more than {lines} lines / {bytes} bytes"
                )),
            });
            t.max_lines = t.max_lines.filter(|n| *n <= lines);
            t.max_bytes = t.max_bytes.filter(|n| *n <= bytes);
        }
        // Turning an output check off loosens what reaches the model.
        let below_checks = below.tool_output().checks();
        for (name, value, on_below) in [
            (
                "redact_secrets",
                &mut t.redact_secrets,
                below_checks.redact_secrets,
            ),
            (
                "flag_injection",
                &mut t.flag_injection,
                below_checks.flag_injection,
            ),
        ] {
            if *value == Some(false) && on_below {
                ignored.push(Ignored {
                    rule: at(file.lines.tool_output),
                    why: why(format!(
                        "[tool_output] {name} = false turns an output check off"
                    )),
                });
                *value = None;
            }
        }
    }
    if let Some(a) = file.approvals.as_mut() {
        let channels = below.approval_channels(None);
        // Fewer: a channel of the other layers is missing. Later: one of them
        // comes after where the other layers put it (channels ask in order,
        // the first alone until `escalate_after`; questions go one channel
        // at a time), or the next channel waits longer.
        let fewer = a
            .channels
            .as_ref()
            .is_some_and(|c| !channels.iter().all(|have| c.contains(have)));
        let reordered = a.channels.as_ref().is_some_and(|c| {
            channels
                .iter()
                .enumerate()
                .any(|(at, have)| c.iter().position(|x| x == have).is_some_and(|p| p > at))
        });
        let fewer = fewer || reordered;
        let later = a.escalate_after.is_some_and(|e| e > below.escalate_after());
        if fewer || later {
            ignored.push(Ignored {
                rule: at(file.lines.approvals),
                why: why(
                    "[approvals] would ask fewer people, or ask them later, than the other layers"
                        .into(),
                ),
            });
            if fewer {
                a.channels = None;
            }
            if later {
                a.escalate_after = None;
            }
        }
    }
    (file, ignored)
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

fn describe_request(request: &PermissionRequest, risk: Risk, raised: Option<&str>) -> String {
    use std::fmt::Write;
    let raised_len = raised.map_or(0, |r| r.len() + 2);
    let mut s =
        String::with_capacity(request.action.len() + request.resource.len() + raised_len + 48);
    s.push_str(&request.action);
    s.push(' ');
    push_quoted(&mut s, &request.resource);
    let _ = write!(s, " ({risk})");
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

/// `WHAT: RULE VERB`, the reason of a decision a rule made, built in one
/// string (a decision makes one per request).
fn rule_reason(what: &str, rule: &Rule, effect: Effect, opaque: bool, managed: bool) -> String {
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
        what.len()
            + rule.action.len()
            + rule.resource.text.len()
            + rule.file.len()
            + verb.len()
            + 64,
    );
    s.push_str(what);
    s.push_str(": ");
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
