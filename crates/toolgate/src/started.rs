//! The running engine: the audit log, the saved approvals, the policy gate,
//! the spilled-output store, the sandbox and the built-in tools, wired into one
//! [`toolgate_core::Engine`]. A [`crate::Toolgate`] builds it on first use.

use std::path::Path;
use std::sync::Arc;

use toolgate_core::QuestionChannel;
use toolgate_core::{Engine, Location, OutputBounds, Registration, Registry, ToolSet};
use toolgate_policy::approvals::ApprovalChannel;
use toolgate_policy::gate::PolicyGate;
use toolgate_policy::people::Asking;
use toolgate_policy::policy::{Policy, PolicySources};
use toolgate_policy::shared_policy::SharedPolicy;
use toolgate_store::{DEFAULT_RETENTION, Durability, SpillStore};
use toolgate_tools::BuiltinConfig;
use toolgate_tools::process_tools::CommandSandbox;

use crate::builder::SandboxChoice;
use crate::data_dir::DataDir;
use crate::error::BuildError;
use crate::sandbox::SandboxAdapter;
use crate::team::{AuditLog, TeamConfig};

/// The engine every call goes through, and what it was built from.
pub struct Started {
    engine: Engine,
    gate: Arc<PolicyGate>,
    log: Arc<dyn AuditLog>,
    spill: Arc<SpillStore>,
    team: TeamConfig,
    sources: PolicySources,
    sandbox_notice: Option<String>,
    /// Keeps the built-in tools registered while the engine lives.
    _registrations: Vec<Registration>,
}

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Started")
            .field("engine", &self.engine)
            .field("sandbox_notice", &self.sandbox_notice)
            .finish_non_exhaustive()
    }
}

/// What [`Started::wire`] is given.
pub(crate) struct Parts<'a> {
    pub policy: Policy,
    pub sources: PolicySources,
    pub location: &'a Location,
    pub data: &'a DataDir,
    pub durability: Durability,
    pub approvals: Arc<dyn ApprovalChannel>,
    pub questions: Option<Arc<dyn QuestionChannel>>,
    /// When set, answers both approvals and questions (beats the two above).
    pub asking: Option<Asking>,
    pub sandbox: &'a SandboxChoice,
    /// The agent recorded with each event (`None`: not recorded).
    pub agent: Option<String>,
}

impl Started {
    /// Opens the stores and wires the engine.
    pub(crate) fn wire(parts: Parts<'_>) -> Result<Started, BuildError> {
        let Parts {
            mut policy,
            mut sources,
            location,
            data,
            durability,
            approvals,
            questions,
            asking,
            sandbox,
            agent,
        } = parts;
        let output = policy.tool_output();
        let bounds = OutputBounds {
            max_lines: output
                .max_lines
                .unwrap_or(toolgate_core::bound::DEFAULT_MAX_LINES),
            max_bytes: output
                .max_bytes
                .unwrap_or(toolgate_core::bound::DEFAULT_MAX_BYTES),
        };
        // `[store]` chooses the data directory's SQLite files or the team's
        // database; every event carries who, where and which agent.
        let team = TeamConfig::load(&sources)?;
        let log = team.open_audit_log(data, durability, agent.as_deref())?;
        let (sandbox, confines, sandbox_notice): (Arc<dyn CommandSandbox>, bool, Option<String>) =
            match sandbox {
                SandboxChoice::Detect | SandboxChoice::DetectWithHelper(_) => {
                    // The sandbox's proxy records each connection in the audit log.
                    let mut adapter =
                        SandboxAdapter::new(&policy, Some(data)).with_events(log.clone());
                    if let SandboxChoice::DetectWithHelper(helper) = sandbox {
                        adapter = adapter.with_helper(helper.clone());
                    }
                    let notice = adapter.startup_line();
                    let confines = adapter.available();
                    (Arc::new(adapter), confines, notice)
                }
                SandboxChoice::Custom { sandbox, confines } => {
                    (Arc::clone(sandbox), *confines, None)
                }
            };
        // Mode `auto` allows only what runs confined: tell the policy (and its
        // reloads) whether commands do.
        sources.sandbox_available = confines;
        policy.set_sandbox_available(confines);
        // This engine runs the calls it judges: a confined bash command gets
        // only the allowlisted environment.
        sources.runs_commands = true;
        policy.set_runs_commands(true);
        let mut config = tools_config(&policy, location, data);
        // The file tools' change sets are kept for `toolgate undo`; without
        // the store they still work, unrecorded.
        match data.checkpoints() {
            Ok(store) => {
                config.files.checkpoints =
                    Some(Arc::new(crate::checkpoints::CheckpointRecorder(store)));
            }
            Err(e) => {
                tracing::warn!("the checkpoint store cannot open; edits are not undoable: {e}")
            }
        }
        // One policy handle for the gate and the people port: a reload
        // through the gate reorders the channels of the next ask.
        let policy = SharedPolicy::new(policy);
        let (approvals, questions): (Arc<dyn ApprovalChannel>, Option<Arc<dyn QuestionChannel>>) =
            match asking {
                Some(asking) => {
                    let people = asking.under(&policy);
                    (people.clone(), Some(people))
                }
                None => (approvals, questions),
            };
        config.session.question = questions;
        config.process.sandbox = Some(sandbox);
        let saved = team.open_approvals(data)?;
        let gate = Arc::new(PolicyGate::sharing(policy, saved, approvals));
        let spill = Arc::new(SpillStore::new(data.root()));
        match spill.sweep(DEFAULT_RETENTION) {
            Ok(n) if n > 0 => tracing::info!(removed = n, "swept old spilled outputs"),
            Ok(_) => {}
            Err(e) => tracing::warn!("could not sweep spilled outputs: {e}"),
        }
        let tools = Registry::new();
        let registrations =
            toolgate_tools::register_builtins(&tools, &config).map_err(BuildError::Register)?;
        let engine = Engine::new(
            ToolSet::new(Registry::new(), tools),
            gate.clone(),
            log.clone(),
            spill.clone(),
        )
        .with_bounds(bounds)
        .with_output_checks(output.checks());
        Ok(Started {
            engine,
            gate,
            log,
            spill,
            team,
            sources,
            sandbox_notice,
            _registrations: registrations,
        })
    }

    /// The engine every call goes through (for servers, which settle calls
    /// themselves).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The policy gate: its current policy, and reloads.
    pub fn gate(&self) -> &Arc<PolicyGate> {
        &self.gate
    }

    /// The audit log (the data directory's file, or the team's database).
    pub fn audit_log(&self) -> &Arc<dyn AuditLog> {
        &self.log
    }

    /// `[store]` and `[identity]` as the engine read them.
    pub fn team(&self) -> &TeamConfig {
        &self.team
    }

    /// The spilled-output store (for the periodic sweep of servers).
    pub fn spill_store(&self) -> &Arc<SpillStore> {
        &self.spill
    }

    /// Where the policy came from, as the gate should reload it.
    pub fn policy_sources(&self) -> &PolicySources {
        &self.sources
    }

    /// The one line to show at start when bash commands will not run confined
    /// (the sandbox is off, or this machine cannot sandbox).
    pub fn sandbox_notice(&self) -> Option<&str> {
        self.sandbox_notice.as_deref()
    }
}

/// The built-in tools' settings for a policy and a data directory: what the
/// engine runs the tools with, and what `check` computes their intents with
/// (no question channel and no sandbox: those only matter when a tool runs).
pub(crate) fn tools_config(policy: &Policy, location: &Location, data: &DataDir) -> BuiltinConfig {
    let mut config = BuiltinConfig::default();
    config.files.allow_credential_files = reading_credentials_allowed(policy, location);
    config.set_data_dir(data.root());
    config
}

/// Whether the policy lets `read` see `.env` files without asking, so that
/// list/glob/grep may walk into them.
fn reading_credentials_allowed(policy: &Policy, location: &Location) -> bool {
    let probe: &Path = &location.root().join(".env");
    policy
        .deciding_rule(
            "read",
            &probe.to_string_lossy(),
            toolgate_core::Risk::Credential,
        )
        .is_some_and(|(rule, _)| rule.effect.effect() == toolgate_core::Effect::Allow)
}
