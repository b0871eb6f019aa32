//! What `check` needs besides the policy: the built-in tools' intents and the
//! saved approvals, read-only. Nothing here opens the audit log or creates a
//! database: a check runs nothing and records nothing.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;
use toolgate_core::{
    CallError, DecisionSource, Location, PermissionRequest, Registration, Registry, ToolSet,
};
use toolgate_policy::approvals::{ApprovalStore, SavedApproval};
use toolgate_policy::policy::PolicySources;
use toolgate_policy::policy::{ApprovalLookup, approval_covers};
use toolgate_store::SqliteApprovals;
use toolgate_tools::BuiltinConfig;

use crate::data_dir::DataDir;
use crate::error::{BuildError, CheckError};
use crate::team::{StoreChoice, TeamConfig};

/// The built-in tools, registered as for a real call. Registering builds no
/// JSON Schema (a tool's spec is made on first use), so a check pays only for
/// the intent it computes.
pub(crate) struct IntentTools {
    set: ToolSet,
    _registrations: Vec<Registration>,
}

impl IntentTools {
    pub(crate) fn new(config: &BuiltinConfig) -> Result<IntentTools, BuildError> {
        let registry = Registry::new();
        let registrations =
            toolgate_tools::register_builtins(&registry, config).map_err(BuildError::Register)?;
        Ok(IntentTools {
            set: ToolSet::new(Registry::new(), registry),
            _registrations: registrations,
        })
    }

    /// The base requests of a call, without running anything: the registered
    /// tool's own decoding, input checks and intent, exactly as a call
    /// prepares it, so an input the tool would refuse is refused here with the
    /// same error.
    pub(crate) fn requests(
        &self,
        tool: &str,
        input: &Value,
        location: &Location,
    ) -> Result<Vec<PermissionRequest>, CheckError> {
        let Some(active) = self.set.active(tool) else {
            return Err(CheckError::UnknownTool {
                tool: tool.to_string(),
                known: toolgate_tools::BUILTIN_TOOL_NAMES.join(", "),
            });
        };
        match active.handler.prepare(input, location) {
            Ok(prepared) => Ok(prepared.requests),
            Err(e) => Err(CheckError::Input(CallError::from_prepare(tool, e))),
        }
    }
}

/// Saved approvals, read-only: consulted when the data directory already holds
/// them (or in the team's database when `[store]` names one), never created by
/// a check. Read on the first ask that an approval could answer, so a call that
/// is allowed or denied outright never opens a store.
pub(crate) struct SavedApprovals {
    sources: PolicySources,
    data: DataDir,
    project: String,
    /// The location's root, below which relative path patterns are read.
    root: std::path::PathBuf,
    rows: OnceLock<Vec<SavedApproval>>,
}

impl SavedApprovals {
    pub(crate) fn new(sources: &PolicySources, data: &DataDir, project: &Path) -> SavedApprovals {
        SavedApprovals {
            sources: sources.clone(),
            data: data.clone(),
            project: toolgate_policy::project_key::project_key(project),
            root: project.to_path_buf(),
            rows: OnceLock::new(),
        }
    }

    fn rows(&self) -> &[SavedApproval] {
        self.rows.get_or_init(|| {
            let mut rows = self.read();
            for a in &mut rows {
                a.pattern = toolgate_policy::project_key::pattern_from_store(
                    &a.action, &a.pattern, &self.root,
                );
            }
            rows
        })
    }

    /// The saved approvals of the project as stored.
    fn read(&self) -> Vec<SavedApproval> {
        match TeamConfig::load(&self.sources) {
            Ok(team) if matches!(team.store, StoreChoice::Postgres { .. }) => {
                let rows = team
                    .open_approvals(&self.data)
                    .map_err(|e| e.to_string())
                    .and_then(|s| s.list_project(&self.project).map_err(|e| e.to_string()));
                return rows.unwrap_or_else(|e| {
                    tracing::warn!("cannot read saved approvals: {e}");
                    Vec::new()
                });
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("cannot read saved approvals: {e}");
                return Vec::new();
            }
        }
        let db = &self.data.state_db();
        if !db.exists() {
            return Vec::new();
        }
        let rows = SqliteApprovals::open_read_only(db)
            .map_err(|e| e.to_string())
            .and_then(|s| s.list_project(&self.project).map_err(|e| e.to_string()));
        rows.unwrap_or_else(|e| {
            tracing::warn!("cannot read saved approvals from {}: {e}", db.display());
            Vec::new()
        })
    }
}

impl ApprovalLookup for SavedApprovals {
    fn covering(&self, action: &str, resource: &str) -> Option<(DecisionSource, String)> {
        self.rows()
            .iter()
            .find(|a| a.action == action && approval_covers(action, &a.pattern, resource))
            .map(|a| (DecisionSource::Saved, a.pattern.clone()))
    }
}
