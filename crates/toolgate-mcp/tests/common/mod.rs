//! The engine of the MCP tests, wired like `toolgate mcp`: the real policy gate
//! (asking through MCP elicitation), the SQLite audit log and approvals, the
//! spill store and every built-in tool, plus four small test tools whose
//! timing and outcome the tests control: echo (read-only: the plain echo of
//! toolgate-core's test-util), slow (progress, cancellable), guarded (a
//! write: asked) and forbidden (network: asked).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_core::test_util::Echo;
use toolgate_core::{
    Engine, Location, PermissionRequest, Progress, Registration, Registry, Risk, Tool, ToolContext,
    ToolError, ToolSet, ToolTraits,
};
use toolgate_mcp::{ElicitationChannel, ToolgateServer};
use toolgate_policy::gate::PolicyGate;
use toolgate_policy::policy::{Policy, PolicySources};
use toolgate_store::{Durability, EventFilter, EventLog, EventReader, SpillStore, SqliteApprovals};
use toolgate_tools::BuiltinConfig;

/// A read of the workspace root: the default policy allows it.
fn workspace_read(loc: &Location) -> PermissionRequest {
    PermissionRequest::new("read", loc.root().display().to_string(), Risk::Read)
}

/// Works in steps, reporting progress, until done or cancelled.
pub struct Slow;
#[derive(Deserialize, JsonSchema)]
pub struct SlowIn {
    steps: u32,
    step_ms: u64,
}
#[derive(Serialize, JsonSchema)]
pub struct SlowOut {
    steps_done: u32,
}

impl Tool for Slow {
    type Input = SlowIn;
    type Output = SlowOut;
    fn description(&self) -> String {
        "Works in steps and reports progress.".into()
    }
    fn traits(&self) -> ToolTraits {
        ToolTraits {
            read_only: false,
            concurrency_safe: true,
            destructive: false,
            open_world: false,
        }
    }
    fn intent(&self, _: &SlowIn, loc: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![workspace_read(loc)])
    }
    async fn execute(&self, i: SlowIn, ctx: ToolContext) -> Result<SlowOut, ToolError> {
        for step in 1..=i.steps {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(i.step_ms)) => {}
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            }
            ctx.report(Progress {
                message: format!("step {step}"),
                progress: f64::from(step),
                total: Some(f64::from(i.steps)),
            });
        }
        Ok(SlowOut {
            steps_done: i.steps,
        })
    }
}

/// Writes a marker file; the test gate asks a person first.
pub struct Guarded;
#[derive(Deserialize, JsonSchema)]
pub struct GuardedIn {
    target: String,
}
#[derive(Serialize, JsonSchema)]
pub struct GuardedOut {
    written: String,
}

impl Tool for Guarded {
    type Input = GuardedIn;
    type Output = GuardedOut;
    fn description(&self) -> String {
        "Writes a marker file (asks first).".into()
    }
    fn traits(&self) -> ToolTraits {
        ToolTraits {
            read_only: false,
            concurrency_safe: false,
            destructive: true,
            open_world: false,
        }
    }
    fn intent(&self, i: &GuardedIn, loc: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        let path = loc.resolve(&i.target)?;
        Ok(vec![PermissionRequest::new(
            "guarded",
            path.path.display().to_string(),
            Risk::Write,
        )])
    }
    async fn execute(&self, i: GuardedIn, ctx: ToolContext) -> Result<GuardedOut, ToolError> {
        let path = ctx.location.resolve(&i.target)?.path;
        std::fs::write(&path, "marker").map_err(|e| ToolError::io("writing the marker", e))?;
        Ok(GuardedOut {
            written: path.display().to_string(),
        })
    }
}

/// Would fetch a URL; the test gate denies it.
pub struct Forbidden;
#[derive(Deserialize, JsonSchema)]
pub struct ForbiddenIn {
    url: String,
}
#[derive(Serialize, JsonSchema)]
pub struct ForbiddenOut {
    body: String,
}

impl Tool for Forbidden {
    type Input = ForbiddenIn;
    type Output = ForbiddenOut;
    fn description(&self) -> String {
        "Fetches a URL (denied by the test policy).".into()
    }
    fn intent(&self, i: &ForbiddenIn, _: &Location) -> Result<Vec<PermissionRequest>, ToolError> {
        Ok(vec![PermissionRequest::new(
            "forbidden",
            i.url.clone(),
            Risk::Network,
        )])
    }
    async fn execute(&self, _: ForbiddenIn, _: ToolContext) -> Result<ForbiddenOut, ToolError> {
        Err(ToolError::Failed("must never run".into()))
    }
}

/// The project policy of the test workspace.
pub const POLICY: &str = r#"
[permission]
webfetch = "deny"

[permission.read]
"secret/**" = "deny"
"#;

/// Where a test server keeps its state: the workspace `root` and the data
/// directory `data` (audit log, approvals, spilled output, policy file).
pub struct Paths {
    pub root: PathBuf,
    pub data: PathBuf,
}

impl Paths {
    pub fn audit_db(&self) -> PathBuf {
        self.data.join("audit.db")
    }
}

/// Keeps what the server needs alive.
pub struct TestServer {
    pub server: ToolgateServer,
    pub log: Arc<EventLog>,
    _registrations: Vec<Registration>,
}

/// The test server: real gate, store and tools, over `paths`.
pub fn test_server(paths: &Paths) -> TestServer {
    let config = paths.data.join("policy.toml");
    std::fs::write(&config, POLICY).unwrap();
    let mut sources = PolicySources::bare(&paths.root, &paths.data);
    sources.session_files = vec![config];
    let policy = Policy::load(&sources).expect("test policy loads");
    let channel = ElicitationChannel::new();
    let approvals = SqliteApprovals::open(paths.data.join("state.db")).unwrap();
    let gate = PolicyGate::new(policy, Arc::new(approvals), Arc::new(channel.clone()))
        .with_timeout(Duration::from_secs(30));
    let log = Arc::new(EventLog::open(paths.audit_db(), Durability::Normal).unwrap());
    let spill = Arc::new(SpillStore::new(&paths.data));
    let tools = Registry::new();
    let mut builtin = BuiltinConfig::default();
    builtin.set_data_dir(&paths.data);
    let mut registrations = toolgate_tools::register_builtins(&tools, &builtin).unwrap();
    registrations.push(tools.register("echo", Echo::plain()).unwrap());
    registrations.push(tools.register("slow", Slow).unwrap());
    registrations.push(tools.register("guarded", Guarded).unwrap());
    registrations.push(tools.register("forbidden", Forbidden).unwrap());
    let engine = Engine::new(
        ToolSet::new(Registry::new(), tools),
        Arc::new(gate),
        log.clone(),
        spill,
    );
    let location = Arc::new(Location::new(&paths.root).unwrap());
    TestServer {
        server: ToolgateServer::with_elicitation(engine, location, channel),
        log,
        _registrations: registrations,
    }
}

/// The events logged so far, as JSON (`kind`, `session_id`, `payload`, …).
pub fn read_events(audit_db: &Path) -> Vec<Value> {
    if !audit_db.exists() {
        return Vec::new();
    }
    let reader = EventReader::open(audit_db).expect("open the audit log");
    reader
        .query(&EventFilter::default())
        .expect("query the audit log")
        .into_iter()
        .map(|e| serde_json::to_value(&e.event).expect("event is JSON"))
        .collect()
}
