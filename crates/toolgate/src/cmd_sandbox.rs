//! `toolgate sandbox status` and `toolgate sandbox exec`: what this machine
//! confines, and a command run confined exactly as the bash tool would run it.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use toolgate::{DataDir, Durability, SandboxAdapter};

use crate::cmd_policy::PolicyArgs;

/// `toolgate sandbox …`.
#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// What this machine can confine.
    Status(StatusArgs),
    /// Run a command confined exactly as the bash tool would.
    Exec(ExecArgs),
}

/// `toolgate sandbox status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// `toolgate sandbox exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Keep the network (as when the call's network request was allowed).
    #[arg(long)]
    pub network: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Runs `toolgate sandbox …`.
pub fn run(command: SandboxCommand, data: &DataDir, durability: Durability) -> Result<i32> {
    match command {
        SandboxCommand::Status(args) => {
            let s = toolgate_sandbox::detect();
            if args.json {
                println!("{}", serde_json::to_string(&s)?);
            } else {
                println!("available:  {}", s.available);
                println!("mechanism:  {}", s.mechanism);
                println!("filesystem: {}", s.filesystem);
                println!("network:    {}", s.network);
                for r in &s.reasons {
                    println!("note:       {r}");
                }
            }
            Ok(if s.available { 0 } else { 1 })
        }
        SandboxCommand::Exec(args) => exec(args, data, durability),
    }
}

fn exec(args: ExecArgs, data: &DataDir, durability: Durability) -> Result<i32> {
    // The policy of `call`: trust records decide what the project's config
    // may loosen.
    let builder = crate::cli_builder::builder(
        args.policy.root.as_deref(),
        &args.policy.config,
        args.policy.mode,
        data,
        durability,
    )?;
    let toolgate = crate::cli_builder::build(builder)?;
    let location = toolgate.location();
    let mut adapter = SandboxAdapter::new(&*toolgate.policy()?, Some(data));
    if !adapter.support().available {
        anyhow::bail!(
            "this machine cannot sandbox: {}",
            adapter.support().reasons.join("; ")
        );
    }
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("no command given after --"))?;
    // The proxy's connections go to the audit log, as for the bash tool;
    // the log is only opened when there is a proxy.
    let _log = if adapter.uses_proxy(args.network) {
        let log = Arc::new(
            toolgate_store::EventLog::open(data.audit_db(), durability).with_context(|| {
                format!("cannot open the audit log {}", data.audit_db().display())
            })?,
        );
        adapter = adapter.with_events(log.clone());
        Some(log)
    } else {
        None
    };
    let cwd = std::env::current_dir()
        .ok()
        .and_then(|d| d.canonicalize().ok())
        .filter(|d| location.contains(d))
        .unwrap_or_else(|| location.root().to_path_buf());
    let roots = location.roots().map(PathBuf::from).collect();
    let mut spec = adapter.spec(roots, cwd, args.network);
    let session = toolgate::new_id("sandbox-exec");
    let proxy = adapter.proxy_for(args.network, &session, "exec")?;
    spec.proxy = proxy.as_ref().map(|p| p.socket().to_path_buf());
    let mut confined = spec.command(adapter.support(), program, rest)?;
    let status = confined.command.status()?;
    drop(proxy);
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}
