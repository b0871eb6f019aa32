//! `toolgate sandbox status` and `toolgate sandbox exec`: what this machine
//! confines, and a command run confined exactly as the bash tool would run it.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use toolgate::{DataDir, Durability, SandboxAdapter};
use toolgate_tools::process_tools::{CommandSandbox, ConfineRequest, StagedRun};

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
    /// A host the command may reach through the sandbox's proxy (as when a
    /// call's allowed network request named it); repeatable. Without any,
    /// the command has no network but `[sandbox] allow_domains`.
    #[arg(long = "host", value_name = "HOST")]
    pub hosts: Vec<String>,
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
                println!("staging:    {}", s.staging);
                println!("mechanism:  {}", s.mechanism);
                println!("filesystem: {}", s.filesystem);
                if s.available {
                    println!("system:     {}", toolgate_sandbox::system_view_status());
                }
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
    let location = Arc::clone(toolgate.location());
    let policy = toolgate.policy()?;
    let mut adapter = SandboxAdapter::new(&policy, Some(data)).with_exit_report();
    // The proxy's connections go to the audit log, as for the bash tool;
    // the log is opened only when there is a proxy (it costs milliseconds).
    if adapter.uses_proxy(&args.hosts) {
        let team = toolgate.team_config()?;
        let log = team
            .open_audit_log(data, durability, Some("sandbox"))
            .with_context(|| format!("cannot open the audit log {}", team.describe_log(data)))?;
        adapter = adapter.with_events(log);
    }
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
    let cwd = std::env::current_dir()
        .ok()
        .and_then(|d| d.canonicalize().ok())
        .filter(|d| location.contains(d))
        .unwrap_or_else(|| location.root().to_path_buf());
    let session = toolgate::new_id("sandbox-exec");
    let call_id = toolgate::new_id("exec");
    let request = ConfineRequest {
        program,
        args: rest,
        location: &location,
        workdir: &cwd,
        network: false,
        hosts: &args.hosts,
        session_id: &session,
        call_id: &call_id,
    };
    let Some(mut confined) = adapter.confine(&request)? else {
        anyhow::bail!("[sandbox] mode = \"off\": `sandbox exec` runs nothing unconfined");
    };
    // The environment a confined bash command gets: the allowlist only.
    confined.command.env_clear();
    let extra = confined.env_allowlist.clone().unwrap_or_default();
    let patterns = toolgate_tools::process_tools::DEFAULT_SECRET_ENV_PATTERNS
        .iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>();
    confined
        .command
        .envs(toolgate_tools::process_tools::confined_env(
            &patterns, &extra,
        ));
    let mut child = confined.command.spawn().map_err(|e| {
        anyhow::anyhow!(
            "cannot start the confined command (bubblewrap, after entering a namespace of its own to mount the staging overlays): {e}"
        )
    })?;
    // Bubblewrap reports the exit code once the sandbox is empty, before
    // its own exit unmounts the staging overlays: the writes are settled
    // meanwhile, and bubblewrap reaped after.
    let reported =
        toolgate::take_exit_report(confined.guard.as_mut()).and_then(|mut r| r.exit_code());
    let code = match reported {
        Some(code) => code,
        None => exit_code(child.wait()?),
    };
    if let Some(staged) = confined.staged.as_mut() {
        settle(staged.as_mut(), &toolgate)?;
    }
    child.wait()?;
    drop(confined);
    Ok(code)
}

/// A process's exit code, or 128 + the signal that ended it (as a shell
/// reports it).
fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// Lands what the command changed that the gate accepts unasked, and says
/// on stderr what did not land and why.
fn settle(staged: &mut dyn StagedRun, toolgate: &toolgate::Toolgate) -> Result<()> {
    let changes = staged.changes()?;
    if changes.is_empty() {
        return Ok(());
    }
    // Each change's path, then the paths it writes without naming them;
    // a change lands only when all of them may.
    let mut paths: Vec<(PathBuf, bool)> = Vec::new();
    let mut owner: Vec<usize> = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        paths.push((c.path.clone(), c.certificates_only));
        owner.push(i);
        for p in &c.also {
            paths.push((p.clone(), false));
            owner.push(i);
        }
    }
    let judged = toolgate.judge_staged_unasked(&paths)?;
    let mut verdicts: Vec<Option<toolgate_core::StagedVerdict>> = vec![None; changes.len()];
    for (v, &i) in judged.into_iter().zip(&owner) {
        match &mut verdicts[i] {
            slot @ None => *slot = Some(v),
            Some(kept) if kept.land && !v.land => *kept = v,
            Some(_) => {}
        }
    }
    let verdicts: Vec<toolgate_core::StagedVerdict> = verdicts
        .into_iter()
        .map(|v| {
            v.unwrap_or(toolgate_core::StagedVerdict {
                land: false,
                reason: "not judged".into(),
            })
        })
        .collect();
    let mut accepted = Vec::new();
    for (c, v) in changes.iter().zip(&verdicts) {
        if c.changed_outside {
            eprintln!(
                "toolgate: not landed: {} ({}): changed by someone else while the command ran; that version is kept",
                c.path.display(),
                c.kind.as_str(),
            );
        } else if v.land {
            accepted.push(c.path.clone());
        } else {
            eprintln!(
                "toolgate: not landed: {} ({}): {}",
                c.path.display(),
                c.kind.as_str(),
                v.reason
            );
        }
    }
    if !accepted.is_empty() {
        if let Some(id) = staged.land(&accepted)? {
            tracing::info!(checkpoint = %id, paths = accepted.len(), "landed");
        }
    }
    Ok(())
}
