//! Wiring: one engine from a root, the config layers, the data directory and an
//! approval channel. `call`, `mcp` and `serve` all build it here.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use toolgate_core::{Engine, Location, OutputBounds, Registration, Registry, ToolSet};
use toolgate_policy::config::Mode;
use toolgate_policy::gate::PolicyGate;
use toolgate_policy::people::Asking;
use toolgate_policy::policy::{Policy, PolicySources};
use toolgate_policy::shared_policy::SharedPolicy;
use toolgate_store::{DEFAULT_RETENTION, Durability, EventLog, SpillStore, SqliteApprovals};
use toolgate_tools::BuiltinConfig;

use crate::data_dir::DataDir;

/// What an engine is built from.
pub struct RuntimeOptions {
    /// The location root (default: the current directory).
    pub root: Option<PathBuf>,
    /// Session config files (`--config`).
    pub config: Vec<PathBuf>,
    /// The mode from the command line.
    pub mode: Option<Mode>,
    /// The data directory.
    pub data: DataDir,
    /// Durability of the audit log.
    pub durability: Durability,
    /// Who answers asks and the `question` tool.
    pub asking: Asking,
}

/// A ready engine and what it holds.
pub struct Runtime {
    /// The engine every call goes through.
    pub engine: Engine,
    /// The workspace.
    pub location: Arc<Location>,
    /// The gate (for reloads and explain).
    pub gate: Arc<PolicyGate>,
    /// The audit log.
    pub log: Arc<EventLog>,
    /// The spilled-output store (for the hourly sweep of servers).
    pub spill: Arc<SpillStore>,
    /// Where the policy came from (for reloads).
    pub sources: PolicySources,
    /// Keeps the built-in tools registered while the runtime lives.
    _registrations: Vec<Registration>,
}

/// The location root: `--root` or the current directory.
pub fn location(root: Option<&Path>) -> Result<Location> {
    let root = match root {
        Some(r) => r.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    Location::new(&root).with_context(|| format!("bad --root {}", root.display()))
}

/// The policy sources for a root, with the CLI's files and mode, the trust
/// records and the data directory.
pub fn policy_sources(
    location: &Location,
    config: &[PathBuf],
    mode: Option<Mode>,
    data: Option<&DataDir>,
) -> PolicySources {
    let mut sources = PolicySources::standard(location.root());
    sources.session_files = config.to_vec();
    sources.mode = mode;
    sources.trust = data.map(DataDir::trust_file);
    sources.data_dir = data.map(|d| d.root().to_path_buf());
    sources
}

/// Builds the engine.
pub fn build(options: RuntimeOptions) -> Result<Runtime> {
    let location = Arc::new(location(options.root.as_deref())?);
    let mut sources = policy_sources(
        &location,
        &options.config,
        options.mode,
        Some(&options.data),
    );
    let mut policy = Policy::load(&sources)?;
    if let Some(notice) = policy.project_notice() {
        eprintln!("toolgate: {notice}");
    }
    let output = policy.tool_output();
    let bounds = OutputBounds {
        max_lines: output
            .max_lines
            .unwrap_or(toolgate_core::bound::DEFAULT_MAX_LINES),
        max_bytes: output
            .max_bytes
            .unwrap_or(toolgate_core::bound::DEFAULT_MAX_BYTES),
    };
    let log = Arc::new(
        EventLog::open(options.data.audit_db(), options.durability).with_context(|| {
            format!(
                "cannot open the audit log {}",
                options.data.audit_db().display()
            )
        })?,
    );
    // The sandbox's proxy records each connection in the audit log.
    let sandbox =
        crate::sandbox::SandboxAdapter::new(&policy, Some(&options.data)).with_events(log.clone());
    if let Some(line) = sandbox.startup_line() {
        eprintln!("{line}");
    }
    // Mode `auto` allows only what runs confined: tell the policy (and its
    // reloads) whether commands do.
    sources.sandbox_available = sandbox.available();
    policy.set_sandbox_available(sources.sandbox_available);
    let mut config = tools_config(&policy, &location, Some(&options.data));
    let policy = SharedPolicy::new(policy);
    let people = options.asking.under(&policy);
    config.session.question = Some(people.clone());
    config.process.sandbox = Some(Arc::new(sandbox));
    let approvals = SqliteApprovals::open(options.data.state_db())
        .with_context(|| format!("cannot open {}", options.data.state_db().display()))?;
    let gate = Arc::new(PolicyGate::sharing(policy, Arc::new(approvals), people));
    let spill = Arc::new(SpillStore::new(options.data.root()));
    match spill.sweep(DEFAULT_RETENTION) {
        Ok(n) if n > 0 => tracing::info!(removed = n, "swept old spilled outputs"),
        Ok(_) => {}
        Err(e) => tracing::warn!("could not sweep spilled outputs: {e}"),
    }
    let tools = Registry::new();
    let registrations = toolgate_tools::register_builtins(&tools, &config)
        .context("cannot register the built-in tools")?;
    let engine = Engine::new(
        ToolSet::new(Registry::new(), tools),
        gate.clone(),
        log.clone(),
        spill.clone(),
    )
    .with_bounds(bounds);
    Ok(Runtime {
        engine,
        location,
        gate,
        log,
        spill,
        sources,
        _registrations: registrations,
    })
}

/// The built-in tools' settings for a policy and a data directory: what
/// `call`, `mcp` and `serve` run the tools with, and what `check` computes
/// their intents with (no question channel: that is the caller's).
pub fn tools_config(policy: &Policy, location: &Location, data: Option<&DataDir>) -> BuiltinConfig {
    let mut config = BuiltinConfig::default();
    config.files.allow_credential_files = reading_credentials_allowed(policy, location);
    if let Some(data) = data {
        config.set_data_dir(data.root());
    }
    config
}

/// How often a server looks for changed config files.
const RELOAD_POLL: std::time::Duration = std::time::Duration::from_secs(2);

impl Runtime {
    /// Reloads the policy whenever one of its config files changes. A config
    /// that fails to load is reported and the last valid policy stays in force.
    /// Abort the returned handle to stop watching.
    pub fn spawn_policy_reloader(&self) -> tokio::task::JoinHandle<()> {
        let gate = Arc::clone(&self.gate);
        let sources = self.sources.clone();
        tokio::spawn(async move {
            let mut seen = config_stamps(&sources);
            loop {
                tokio::time::sleep(RELOAD_POLL).await;
                let now = config_stamps(&sources);
                if now == seen {
                    continue;
                }
                seen = now;
                match gate.reload(&sources) {
                    Ok(()) => {
                        eprintln!("toolgate: policy reloaded");
                        if let Some(notice) = gate.policy().project_notice() {
                            eprintln!("toolgate: {notice}");
                        }
                    }
                    Err(e) => {
                        eprintln!("toolgate: config error, keeping the last valid policy: {e}")
                    }
                }
            }
        })
    }
}

/// The modification times (and presence) of every config file of `sources`.
fn config_stamps(sources: &PolicySources) -> Vec<Option<std::time::SystemTime>> {
    sources
        .user
        .iter()
        .chain(sources.project.iter())
        .chain(sources.session_files.iter())
        .chain(sources.managed.iter())
        .chain(sources.trust.iter())
        .map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .collect()
}

/// Whether the policy lets `read` see `.env` files without asking, so that
/// list/glob/grep may walk into them.
fn reading_credentials_allowed(policy: &Policy, location: &Location) -> bool {
    let probe = location.root().join(".env");
    policy
        .deciding_rule(
            "read",
            &probe.to_string_lossy(),
            toolgate_core::Risk::Credential,
        )
        .is_some_and(|(rule, _)| rule.effect.effect() == toolgate_core::Effect::Allow)
}
