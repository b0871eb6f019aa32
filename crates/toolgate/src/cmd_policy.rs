//! `toolgate check`, `toolgate policy explain|test` and `toolgate approvals
//! list|revoke`: thin wrappers over [`toolgate::Toolgate::check`] (an engine
//! built and never started) and the approvals store. Exit status: 0 when every call was evaluated, 2 on a usage or config
//! error (returned as `Err`, which `main` maps to 2).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use serde_json::Value;
use toolgate::{CheckOutcome, DataDir, Durability, Toolgate};
use toolgate_core::Location;
use toolgate_policy::approvals::ApprovalStore;
use toolgate_policy::check::run_batch;
use toolgate_policy::config::Mode;
use toolgate_store::SqliteApprovals;

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

/// The engine of a check: built for the policy flags, never started (a check
/// opens no store and spawns nothing). A broken project config is reported on
/// stderr (once per root) and ignored.
fn checker(args: &PolicyArgs, root: Option<&std::path::Path>, data: &DataDir) -> Result<Toolgate> {
    let builder = crate::cli_builder::builder(
        root.or(args.root.as_deref()),
        &args.config,
        args.mode,
        data,
        Durability::default(),
    )?;
    let toolgate = crate::cli_builder::build(builder)?;
    if toolgate.project_config_broken() {
        if let Some(notice) = toolgate.project_notice() {
            eprintln!("toolgate: {notice}");
        }
    }
    Ok(toolgate)
}

/// The JSON input (as `call` reads it, `-` for stdin), which must be an object.
fn parse_input(text: &str) -> Result<Value> {
    let v = crate::cmd_call::parse_input(text)?;
    if !v.is_object() {
        bail!("the tool input must be a JSON object, like '{{\"command\":\"ls\"}}'");
    }
    Ok(v)
}

/// `toolgate check`.
pub fn run_check(args: CheckArgs, data: &DataDir) -> Result<i32> {
    if let Some(batch) = &args.batch {
        return run_check_batch(batch, &args.policy, data);
    }
    let (Some(tool), Some(input)) = (&args.tool, &args.input) else {
        bail!("usage: toolgate check TOOL JSON, or toolgate check --batch FILE|-");
    };
    let input = parse_input(input)?;
    let toolgate = checker(&args.policy, None, data)?;
    let answer = toolgate
        .check(tool, &input)
        .map_err(|e| anyhow!(e.to_string()))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&answer)?)?;
    } else {
        write_human(&mut out, &answer)?;
    }
    out.flush()?;
    // The process ends now and the engine holds no store, thread or file
    // (it was never started): dropping its policy and tools would only free
    // memory, about 3 % of the instructions of a whole `check`.
    std::mem::forget(toolgate);
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

fn run_check_batch(path: &str, args: &PolicyArgs, data: &DataDir) -> Result<i32> {
    // A bad config for the batch's own root is a usage error, before any line.
    let default = checker(args, None, data)?;
    let default_root = default.location().root().to_path_buf();
    let mut checkers: HashMap<PathBuf, Toolgate> = HashMap::new();
    checkers.insert(default_root.clone(), default);
    let reader: Box<dyn BufRead> = if path == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        Box::new(BufReader::new(
            std::fs::File::open(path)
                .with_context(|| format!("cannot open the batch file {path}"))?,
        ))
    };
    let out = std::io::BufWriter::new(std::io::stdout().lock());
    run_batch(reader, out, |line| {
        let key = match &line.root {
            Some(r) => {
                let loc = Location::new(r).map_err(|e| format!("bad root {r}: {e}"))?;
                let key = loc.root().to_path_buf();
                if !checkers.contains_key(&key) {
                    let toolgate =
                        checker(args, Some(loc.root()), data).map_err(|e| e.to_string())?;
                    checkers.insert(key.clone(), toolgate);
                }
                key
            }
            None => default_root.clone(),
        };
        let toolgate = checkers.get(&key).ok_or("policy cache miss")?;
        toolgate
            .check(&line.tool, &line.input)
            .map_err(|e| e.to_string())
    })
    .context("cannot run the batch")?;
    Ok(0)
}

/// `toolgate policy explain TOOL JSON`.
pub fn run_explain(args: ExplainArgs, data: &DataDir) -> Result<i32> {
    let input = parse_input(&args.input)?;
    let toolgate = checker(&args.policy, None, data)?;
    let explained = toolgate
        .explain(&args.tool, &input)
        .map_err(|e| anyhow!(e.to_string()))?;
    print!("{explained}");
    Ok(0)
}

/// `toolgate policy test`: every layer loads (examples are checked while
/// loading) and every example still holds.
pub fn run_policy_test(args: PolicyTestArgs, data: &DataDir) -> Result<i32> {
    let policy = checker(&args.policy, None, data)?.policy()?;
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

/// The saved approvals `[store]` chooses (user and managed config): the
/// data directory's, or the team's database.
fn open_store(data: &DataDir) -> Result<std::sync::Arc<dyn ApprovalStore>> {
    let team = toolgate::TeamConfig::load_standard()?;
    match &team.store {
        toolgate::StoreChoice::Local => Ok(std::sync::Arc::new(
            SqliteApprovals::open(data.state_db())
                .with_context(|| format!("cannot open {}", data.state_db().display()))?,
        )),
        toolgate::StoreChoice::Postgres { .. } => Ok(team.open_approvals(data)?),
    }
}

/// `toolgate approvals list`.
pub fn run_approvals_list(args: ApprovalsListArgs, data: &DataDir) -> Result<i32> {
    let store = open_store(data)?;
    let rows = match &args.root {
        Some(r) => {
            let loc = crate::cli_builder::location(Some(r))?;
            store.list_project(&toolgate_policy::project_key::project_key(loc.root()))
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
            "{:>5}  {:<18} {:<30} {:<24} project",
            "id", "action", "pattern", "approved by (machine)"
        )?;
        for r in &rows {
            let who = match (&r.approved_by, &r.machine) {
                (Some(p), Some(m)) => format!("{p} ({m})"),
                (Some(p), None) => p.clone(),
                _ => "-".into(),
            };
            writeln!(
                out,
                "{:>5}  {:<18} {:<30} {:<24} {}",
                r.id, r.action, r.pattern, who, r.project
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
