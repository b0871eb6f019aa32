//! `toolgate check`, `toolgate policy explain|test` and `toolgate approvals
//! list|revoke`: thin wrappers over `toolgate_policy::check` and the approvals
//! store. Exit status: 0 when every call was evaluated, 2 on a usage or config
//! error (returned as `Err`, which `main` maps to 2).

use std::cell::OnceCell;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use serde_json::Value;
use toolgate_core::{
    CallError, DecisionSource, Location, PermissionRequest, Registration, Registry, ToolSet,
};
use toolgate_policy::approvals::{ApprovalStore, SavedApproval};
use toolgate_policy::check::{CheckOutcome, explain, judge_call, outcome_for, run_batch};
use toolgate_policy::config::{Mode, SandboxMode};
use toolgate_policy::policy::{ApprovalLookup, Policy, approval_covers};
use toolgate_store::SqliteApprovals;
use toolgate_tools::BuiltinConfig;

use crate::data_dir::DataDir;

/// Where the policy comes from: `--root`, `--config`, `--mode`.
#[derive(Debug, Clone, Args)]
pub struct PolicyArgs {
    /// The location root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// A session config file, applied after the user and project layers
    /// (repeatable). The managed layer still wins.
    #[arg(long, value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// The mode: default, accept-edits, auto or plan.
    #[arg(long, value_name = "M", value_parser = parse_mode)]
    pub mode: Option<Mode>,
}

/// Parses `--mode`.
pub fn parse_mode(text: &str) -> Result<Mode, String> {
    text.parse()
}

/// `toolgate check TOOL JSON [--json]` or `toolgate check --batch FILE|-`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// The tool to check (`bash`, `read`, `edit`, …).
    #[arg(required_unless_present = "batch", conflicts_with = "batch")]
    pub tool: Option<String>,
    /// The tool's input as a JSON object, e.g. '{"command":"ls"}'.
    #[arg(value_name = "JSON", required_unless_present = "batch")]
    pub input: Option<String>,
    /// Check JSONL calls from FILE (`-` for stdin), one answer line per call.
    #[arg(long, value_name = "FILE|-")]
    pub batch: Option<String>,
    /// Print the answer as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

/// `toolgate policy explain TOOL JSON`.
#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// The tool.
    pub tool: String,
    /// Its input as a JSON object.
    #[arg(value_name = "JSON")]
    pub input: String,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

/// `toolgate policy test`: load every layer and check every rule's examples.
#[derive(Debug, Clone, Args)]
pub struct PolicyTestArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
}

/// `toolgate approvals list`.
#[derive(Debug, Clone, Args)]
pub struct ApprovalsListArgs {
    /// Only the approvals of this project root.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print JSON lines.
    #[arg(long)]
    pub json: bool,
}

/// `toolgate approvals revoke ID`.
#[derive(Debug, Clone, Args)]
pub struct ApprovalsRevokeArgs {
    /// The id shown by `toolgate approvals list`.
    pub id: i64,
}

/// The built-in tools, registered as for a real call. Registering builds no
/// JSON Schema (a tool's spec is made on first use), so a check pays only for
/// the intent it computes.
struct BuiltinTools {
    set: ToolSet,
    _registrations: Vec<Registration>,
}

impl BuiltinTools {
    fn new(config: &BuiltinConfig) -> Result<BuiltinTools> {
        let registry = Registry::new();
        let registrations = toolgate_tools::register_builtins(&registry, config)
            .context("cannot register the built-in tools")?;
        Ok(BuiltinTools {
            set: ToolSet::new(Registry::new(), registry),
            _registrations: registrations,
        })
    }
}

/// The base requests of a call, without running anything: the registered
/// tool's own decoding, input checks and intent, exactly as a call prepares
/// it, so an input the tool would refuse is refused here with the same error.
fn requests(
    tool: &str,
    input: &Value,
    location: &Location,
    tools: &BuiltinTools,
) -> Result<Vec<PermissionRequest>, String> {
    let Some(active) = tools.set.active(tool) else {
        return Err(format!(
            "unknown tool {tool:?}; the built-in tools are: {}",
            toolgate_tools::BUILTIN_TOOL_NAMES.join(", ")
        ));
    };
    match active.handler.prepare(input, location) {
        Ok(prepared) => Ok(prepared.requests),
        Err(e) => Err(CallError::from_prepare(tool, e).to_string()),
    }
}

fn location(root: Option<&Path>) -> Result<Location> {
    crate::runtime::location(root)
}

/// Loads the policy; a broken project config is reported on stderr (once per
/// root) and ignored.
fn load_policy(location: &Location, args: &PolicyArgs, data: Option<&DataDir>) -> Result<Policy> {
    let sources = crate::runtime::policy_sources(location, &args.config, args.mode, data);
    let mut policy = Policy::load(&sources)?;
    if let Some(e) = policy.project_error() {
        eprintln!("toolgate: project config ignored: {e}");
    }
    // Only mode `auto` depends on the sandbox: detect it only then, from the
    // data directory's cache, so that `check` spawns nothing.
    if policy.mode() == Mode::Auto && policy.sandbox().mode != Some(SandboxMode::Off) {
        let support = match data {
            Some(d) => toolgate_sandbox::detect_cached(&d.sandbox_cache()),
            None => toolgate_sandbox::detect(),
        };
        policy.set_sandbox_available(support.available);
    }
    Ok(policy)
}

/// The JSON input (as `call` reads it, `-` for stdin), which must be an object.
fn parse_input(text: &str) -> Result<Value> {
    let v = crate::cmd_call::parse_input(text)?;
    if !v.is_object() {
        bail!("the tool input must be a JSON object, like '{{\"command\":\"ls\"}}'");
    }
    Ok(v)
}

/// Saved approvals, read-only: consulted when the data directory already holds
/// them, never created by a check. Read on the first ask that an approval could
/// answer, so a call that is allowed or denied outright never opens SQLite.
struct Saved<'d> {
    data: Option<&'d DataDir>,
    project: PathBuf,
    rows: OnceCell<Vec<SavedApproval>>,
}

impl<'d> Saved<'d> {
    fn new(data: Option<&'d DataDir>, project: &Path) -> Saved<'d> {
        Saved {
            data,
            project: project.to_path_buf(),
            rows: OnceCell::new(),
        }
    }

    fn rows(&self) -> &[SavedApproval] {
        self.rows.get_or_init(|| {
            let Some(db) = self.data.map(DataDir::state_db).filter(|p| p.exists()) else {
                return Vec::new();
            };
            let rows = SqliteApprovals::open_read_only(&db)
                .map_err(|e| e.to_string())
                .and_then(|s| {
                    s.list_project(&self.project.display().to_string())
                        .map_err(|e| e.to_string())
                });
            rows.unwrap_or_else(|e| {
                tracing::warn!("cannot read saved approvals from {}: {e}", db.display());
                Vec::new()
            })
        })
    }
}

impl ApprovalLookup for Saved<'_> {
    fn covering(&self, action: &str, resource: &str) -> Option<(DecisionSource, String)> {
        self.rows()
            .iter()
            .find(|a| a.action == action && approval_covers(action, &a.pattern, resource))
            .map(|a| (DecisionSource::Saved, a.pattern.clone()))
    }
}

/// `toolgate check`.
pub fn run_check(args: CheckArgs, data: Option<&DataDir>) -> Result<i32> {
    if let Some(batch) = &args.batch {
        return run_check_batch(batch, &args.policy, data);
    }
    let (Some(tool), Some(input)) = (&args.tool, &args.input) else {
        bail!("usage: toolgate check TOOL JSON, or toolgate check --batch FILE|-");
    };
    let input = parse_input(input)?;
    let location = location(args.policy.root.as_deref())?;
    let policy = load_policy(&location, &args.policy, data)?;
    let tools = BuiltinTools::new(&crate::runtime::tools_config(&policy, &location, data))?;
    let requests = requests(tool, &input, &location, &tools).map_err(|e| anyhow!(e))?;
    let saved = Saved::new(data, location.root());
    let answer = outcome_for(&policy, &judge_call(&policy, requests, &location, &saved));
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&answer)?)?;
    } else {
        write_human(&mut out, &answer)?;
    }
    out.flush()?;
    Ok(0)
}

fn write_human(out: &mut impl Write, answer: &CheckOutcome) -> std::io::Result<()> {
    writeln!(
        out,
        "{} ({}): {}",
        answer.decision, answer.risk, answer.reason
    )?;
    for r in &answer.requests {
        writeln!(
            out,
            "  {:<5} {:<11} {:<18} {}{}",
            r.decision.as_str(),
            r.risk.as_str(),
            r.action,
            r.resource,
            r.rule
                .as_ref()
                .map(|l| format!("  [{l}]"))
                .unwrap_or_default()
        )?;
    }
    for i in &answer.ignored {
        writeln!(out, "  ignored: {} ({})", i.why, i.rule)?;
    }
    Ok(())
}

fn run_check_batch(path: &str, args: &PolicyArgs, data: Option<&DataDir>) -> Result<i32> {
    let default_location = location(args.root.as_deref())?;
    // A bad config for the batch's own root is a usage error, before any line.
    let default_policy = load_policy(&default_location, args, data)?;
    let mut policies: HashMap<PathBuf, (Location, Policy, Saved, BuiltinTools)> = HashMap::new();
    let saved = Saved::new(data, default_location.root());
    let tools = BuiltinTools::new(&crate::runtime::tools_config(
        &default_policy,
        &default_location,
        data,
    ))?;
    policies.insert(
        default_location.root().to_path_buf(),
        (default_location.clone(), default_policy, saved, tools),
    );
    let reader: Box<dyn BufRead> = if path == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        Box::new(BufReader::new(
            std::fs::File::open(path)
                .with_context(|| format!("cannot open the batch file {path}"))?,
        ))
    };
    let out = std::io::BufWriter::new(std::io::stdout().lock());
    let default_root = default_location.root().to_path_buf();
    run_batch(reader, out, |line| {
        let key = match &line.root {
            Some(r) => {
                let loc = Location::new(r).map_err(|e| format!("bad root {r}: {e}"))?;
                let key = loc.root().to_path_buf();
                if !policies.contains_key(&key) {
                    let policy = load_policy(&loc, args, data).map_err(|e| e.to_string())?;
                    let saved = Saved::new(data, loc.root());
                    let config = crate::runtime::tools_config(&policy, &loc, data);
                    let tools = BuiltinTools::new(&config).map_err(|e| format!("{e:#}"))?;
                    policies.insert(key.clone(), (loc, policy, saved, tools));
                }
                key
            }
            None => default_root.clone(),
        };
        let (loc, policy, saved, tools) = policies.get(&key).ok_or("policy cache miss")?;
        let requests = requests(&line.tool, &line.input, loc, tools)?;
        Ok(outcome_for(
            policy,
            &judge_call(policy, requests, loc, saved),
        ))
    })
    .context("cannot run the batch")?;
    Ok(0)
}

/// `toolgate policy explain TOOL JSON`.
pub fn run_explain(args: ExplainArgs, data: Option<&DataDir>) -> Result<i32> {
    let input = parse_input(&args.input)?;
    let location = location(args.policy.root.as_deref())?;
    let policy = load_policy(&location, &args.policy, data)?;
    let tools = BuiltinTools::new(&crate::runtime::tools_config(&policy, &location, data))?;
    let requests = requests(&args.tool, &input, &location, &tools).map_err(|e| anyhow!(e))?;
    let saved = Saved::new(data, location.root());
    let judged = judge_call(&policy, requests, &location, &saved);
    print!("{}", explain(&policy, &args.tool, &input, &judged));
    Ok(0)
}

/// `toolgate policy test`: every layer loads (examples are checked while
/// loading) and every example still holds.
pub fn run_policy_test(args: PolicyTestArgs, data: Option<&DataDir>) -> Result<i32> {
    let location = location(args.policy.root.as_deref())?;
    let policy = load_policy(&location, &args.policy, data)?;
    let failures = policy.test_examples();
    for f in &failures {
        eprintln!("{f}");
    }
    if !failures.is_empty() {
        bail!("{} rule example(s) failed", failures.len());
    }
    let rules = policy.rules().len() + policy.managed_rules().len();
    println!(
        "ok: {} example(s) of {} rule(s) pass; files: {}",
        policy.examples().len(),
        rules,
        if policy.files().is_empty() {
            "none".to_string()
        } else {
            policy.files().join(", ")
        }
    );
    Ok(0)
}

fn open_store(data: &DataDir) -> Result<SqliteApprovals> {
    SqliteApprovals::open(data.state_db())
        .with_context(|| format!("cannot open {}", data.state_db().display()))
}

/// `toolgate approvals list`.
pub fn run_approvals_list(args: ApprovalsListArgs, data: &DataDir) -> Result<i32> {
    let store = open_store(data)?;
    let rows = match &args.root {
        Some(r) => {
            let loc = location(Some(r))?;
            store.list_project(&loc.root().display().to_string())
        }
        None => store.list_all(),
    }?;
    let mut out = std::io::stdout().lock();
    if args.json {
        for r in &rows {
            writeln!(out, "{}", serde_json::to_string(r)?)?;
        }
    } else if rows.is_empty() {
        writeln!(out, "no saved approvals")?;
    } else {
        writeln!(
            out,
            "{:>5}  {:<18} {:<30} project",
            "id", "action", "pattern"
        )?;
        for r in &rows {
            writeln!(
                out,
                "{:>5}  {:<18} {:<30} {}",
                r.id, r.action, r.pattern, r.project
            )?;
        }
    }
    Ok(0)
}

/// `toolgate approvals revoke ID`.
pub fn run_approvals_revoke(args: ApprovalsRevokeArgs, data: &DataDir) -> Result<i32> {
    let store = open_store(data)?;
    let gone = store.revoke(args.id)?;
    println!(
        "revoked {}: {} `{}` for {}",
        gone.id, gone.action, gone.pattern, gone.project
    );
    Ok(0)
}
