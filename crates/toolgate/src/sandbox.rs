//! The sandbox wired in: the adapter through which `bash` runs confined, the
//! line `call`, `mcp` and `serve` print at start, and `toolgate sandbox`.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use toolgate_policy::config::SandboxMode;
use toolgate_policy::policy::Policy;
use toolgate_sandbox::{SandboxSpec, Support};
use toolgate_tools::process_tools::{CommandSandbox, ConfineRequest, ConfinedCommand};

use crate::cmd_policy::PolicyArgs;

/// What the sandbox refuses, for the results of failed confined commands.
const REFUSES: &str = "lets a command write only inside the location (protected paths such as .git/config, .git/hooks and .toolgate read-only), a private /tmp and [sandbox] writable paths; masks credential files (~/.ssh, ~/.aws, .env, …); has no network unless the call's network request was allowed; and refuses ptrace, mount and new namespaces";

/// Confines bash commands as `[sandbox]` says.
#[derive(Debug)]
pub struct SandboxAdapter {
    support: Support,
    mode: SandboxMode,
    writable: Vec<PathBuf>,
}

impl SandboxAdapter {
    /// The adapter for a policy, on this machine.
    pub fn new(policy: &Policy) -> Self {
        let sb = policy.sandbox();
        SandboxAdapter {
            support: toolgate_sandbox::detect(),
            mode: sb.mode.unwrap_or_default(),
            writable: sb.writable.clone(),
        }
    }

    /// Whether this machine confines commands (whatever `[sandbox] mode`
    /// says: the policy combines the two).
    pub fn available(&self) -> bool {
        self.support.available
    }

    /// The one line to print at start when commands will not run confined.
    pub fn startup_line(&self) -> Option<String> {
        match self.mode {
            SandboxMode::Off => Some(
                "toolgate: [sandbox] mode = \"off\": bash commands run unconfined, with your full authority".into(),
            ),
            _ if self.support.available => None,
            SandboxMode::Required => Some(format!(
                "toolgate: [sandbox] mode = \"required\" but this machine cannot sandbox ({}): bash will refuse to run",
                self.support.reasons.join("; ")
            )),
            SandboxMode::Auto => Some(format!(
                "toolgate: this machine cannot sandbox commands ({}): bash commands run unconfined",
                self.support.reasons.join("; ")
            )),
        }
    }

    /// The spec for commands in these roots.
    fn spec(&self, roots: Vec<PathBuf>, cwd: PathBuf, network: bool) -> SandboxSpec {
        let mut spec = SandboxSpec::for_location(roots, None);
        spec.writable = self.writable.clone();
        spec.network = network;
        spec.cwd = cwd;
        spec
    }
}

impl CommandSandbox for SandboxAdapter {
    fn confine(&self, request: &ConfineRequest<'_>) -> Result<Option<ConfinedCommand>, String> {
        match self.mode {
            SandboxMode::Off => return Ok(None),
            SandboxMode::Auto if !self.support.available => return Ok(None),
            SandboxMode::Required if !self.support.available => {
                return Err(format!(
                    "[sandbox] mode = \"required\" and this machine cannot sandbox: {}",
                    self.support.reasons.join("; ")
                ));
            }
            _ => {}
        }
        let roots = request.location.roots().map(PathBuf::from).collect();
        let spec = self.spec(roots, request.workdir.to_path_buf(), request.network);
        let confined = spec
            .command(&self.support, request.program, request.args)
            .map_err(|e| e.to_string())?;
        Ok(Some(into_port(confined)))
    }
}

fn into_port(mut confined: toolgate_sandbox::Confined) -> ConfinedCommand {
    let command = std::mem::replace(&mut confined.command, std::process::Command::new("false"));
    ConfinedCommand {
        command,
        guard: Box::new(confined),
        refuses: REFUSES.into(),
    }
}

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
pub fn run(command: SandboxCommand) -> Result<i32> {
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
        SandboxCommand::Exec(args) => exec(args),
    }
}

fn exec(args: ExecArgs) -> Result<i32> {
    let location = crate::runtime::location(args.policy.root.as_deref())?;
    // Trust records decide what the project's config may loosen, as for `call`.
    let data = crate::data_dir::DataDir::locate(None).ok();
    let sources = crate::runtime::policy_sources(
        &location,
        &args.policy.config,
        args.policy.mode,
        data.as_ref(),
    );
    let policy = Policy::load(&sources).map_err(|e| anyhow::anyhow!("{e}"))?;
    let adapter = SandboxAdapter::new(&policy);
    if !adapter.support.available {
        anyhow::bail!(
            "this machine cannot sandbox: {}",
            adapter.support.reasons.join("; ")
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
    let roots = location.roots().map(PathBuf::from).collect();
    let spec = adapter.spec(roots, cwd, args.network);
    let mut confined = spec.command(&adapter.support, program, rest)?;
    let status = confined.command.status()?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}
