//! The `toolgate` command: its flags and subcommands over the `toolgate`
//! library, whose `Builder` wires every command's engine.

mod cli_builder;
mod cmd_call;
mod cmd_hook;
mod cmd_hook_install;
mod cmd_import;
mod cmd_log;
mod cmd_mcp;
mod cmd_policy;
mod cmd_sandbox;
mod cmd_telemetry;
mod cmd_trust;
mod cmd_undo;
mod cmd_watch;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};
use toolgate::{DataDir, Durability};

/// toolgate: the tool layer of an AI coding agent — tools, one permission gate,
/// an audit log.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, about, long_about = None)]
struct Cli {
    /// Where the audit log, approvals and spilled outputs live
    /// (default: $XDG_DATA_HOME/toolgate).
    #[arg(long, global = true, env = "TOOLGATE_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// How durable each audit event is before the step goes on: `normal`
    /// survives a killed process; `full` also survives power loss.
    #[arg(
        long,
        global = true,
        env = "TOOLGATE_DURABILITY",
        default_value = "normal"
    )]
    durability: DurabilityArg,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DurabilityArg {
    Normal,
    Full,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one tool call through the whole pipeline; asks on the terminal.
    Call(cmd_call::CallArgs),
    /// Serve every tool over MCP on stdin/stdout.
    Mcp(cmd_mcp::McpArgs),
    /// Serve every tool over MCP streamable HTTP (loopback, bearer token).
    Serve(cmd_mcp::ServeArgs),
    /// Answer allow / ask / deny for a call without running it.
    Check(cmd_policy::CheckArgs),
    /// Explain a decision, or test the config's rule examples.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// List or revoke saved ("always") approvals.
    #[command(subcommand)]
    Approvals(ApprovalsCommand),
    /// Print the audit log, or verify its hash chain (`log verify`).
    Log(cmd_log::LogArgs),
    /// Trust this project's `.toolgate/config.toml` (shows what it loosens and
    /// asks), list trusted configs, or revoke trust.
    Trust(cmd_trust::TrustArgs),
    /// What the sandbox confines here (`status`), or run a command in it (`exec`).
    #[command(subcommand)]
    Sandbox(cmd_sandbox::SandboxCommand),
    /// Answer another agent's pre-tool-use hook (payload on stdin), or
    /// install, uninstall or check toolgate's hook entry in its settings.
    Hook(cmd_hook::HookArgs),
    /// Send the spans of calls answered by agents' hooks to the OTLP
    /// collector (`[telemetry]`).
    #[command(subcommand)]
    Telemetry(cmd_telemetry::TelemetryCommand),
    /// Turn an agent's permission rules into toolgate config (printed).
    Import(cmd_import::ImportArgs),
    /// List the change sets that landed (`--list`), or restore one.
    Undo(cmd_undo::UndoArgs),
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Each request of a call, its risk, and why it is allowed, asked or denied.
    Explain(cmd_policy::ExplainArgs),
    /// Load every config layer and check every rule's `match`/`not_match` examples.
    Test(cmd_policy::PolicyTestArgs),
}

#[derive(Debug, Subcommand)]
enum ApprovalsCommand {
    /// Saved approvals, oldest first.
    List(cmd_policy::ApprovalsListArgs),
    /// Remove one saved approval.
    Revoke(cmd_policy::ApprovalsRevokeArgs),
    /// Answer, on this terminal, the asks that agents' hooks hand over
    /// (agents that cannot ask a person themselves).
    Watch(cmd_watch::WatchArgs),
}

fn main() -> ExitCode {
    // Inside the sandbox this process is the helper that confines itself and
    // runs the command; it never returns then.
    toolgate_sandbox::run_if_requested();
    init_logging();
    let cli = parse_cli();
    match run(cli) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        // Whoever read the output went away (`toolgate check … | head -1`):
        // as for a program that SIGPIPE ends, there is nothing to say.
        Err(e) if output_closed(&e) => ExitCode::from(141),
        Err(e) => {
            eprintln!("toolgate: error: {}", error_line(&e));
            ExitCode::from(2)
        }
    }
}

/// The command line, as `Cli::parse` reads it, but the parser is not
/// dropped: `toolgate` is a short process, and freeing clap's description of
/// every subcommand costs `check` about 2 % of its instructions.
fn parse_cli() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let mut command = std::mem::ManuallyDrop::new(Cli::command());
    let mut matches = command.get_matches_mut();
    Cli::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.format(&mut command).exit())
}

/// Whether `e` comes from writing to a pipe whose reader is gone.
fn output_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its chain of causes on one line, each cause once: most
/// messages already name their cause, and a cause whose text the line shows
/// is not repeated.
fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Logs to stderr at `warn`, or as `TOOLGATE_LOG` says. Parsing a filter
/// compiles regular expressions, which costs a short process like `check`
/// milliseconds, so it only happens when `TOOLGATE_LOG` is set.
fn init_logging() {
    let logs = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    match std::env::var_os("TOOLGATE_LOG").filter(|v| !v.is_empty()) {
        Some(_) => logs
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_from_env("TOOLGATE_LOG")
                    .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
            )
            .init(),
        None => logs
            .with_max_level(tracing_subscriber::filter::LevelFilter::WARN)
            .init(),
    }
}

fn run(cli: Cli) -> Result<i32> {
    let durability = match cli.durability {
        DurabilityArg::Normal => Durability::Normal,
        DurabilityArg::Full => Durability::Full,
    };
    let located = DataDir::locate(cli.data_dir.as_deref()).map(|d| d.with_durability(durability));
    // A hook answers even without a data directory: in the agent's
    // blocking form.
    if let Command::Hook(args) = cli.command {
        return cmd_hook::run(args, located.map_err(anyhow::Error::from), durability);
    }
    let data = located?;
    match cli.command {
        Command::Call(args) => tokio_runtime()?.block_on(cmd_call::run(args, data, durability)),
        // Clients send calls in parallel on the one connection: a decision
        // that can take long runs on the blocking pool meanwhile.
        Command::Mcp(args) => tokio_runtime()?.block_on(cmd_mcp::run_mcp(args, data, durability)),
        Command::Serve(args) => {
            tokio_runtime()?.block_on(cmd_mcp::run_serve(args, data, durability))
        }
        Command::Check(args) => cmd_policy::run_check(args, &data),
        Command::Policy(PolicyCommand::Explain(args)) => cmd_policy::run_explain(args, &data),
        Command::Policy(PolicyCommand::Test(args)) => cmd_policy::run_policy_test(args, &data),
        Command::Approvals(ApprovalsCommand::List(args)) => {
            cmd_policy::run_approvals_list(args, &data)
        }
        Command::Approvals(ApprovalsCommand::Revoke(args)) => {
            cmd_policy::run_approvals_revoke(args, &data)
        }
        Command::Approvals(ApprovalsCommand::Watch(args)) => cmd_watch::run(args, &data),
        Command::Log(args) => cmd_log::run(args, &data),
        Command::Trust(args) => cmd_trust::run(args, &data),
        Command::Sandbox(command) => cmd_sandbox::run(command, &data, durability),
        Command::Hook(_) => unreachable_hook(),
        Command::Telemetry(command) => cmd_telemetry::run(command, &data),
        Command::Import(args) => cmd_import::run(args),
        Command::Undo(args) => cmd_undo::run(args, &data),
    }
}

/// `run` answers `toolgate hook` before it needs the data directory.
fn unreachable_hook() -> Result<i32> {
    Err(anyhow::anyhow!(
        "toolgate hook is answered before the data directory is located"
    ))
}

/// One worker runs the event loop; what can take long runs beside it on the
/// blocking pool (a shell command's analysis, a large file, a search), so
/// calls in flight still proceed in parallel. A second worker was measured to
/// cost more than it gives: each call then wakes both (futex, eventfd and
/// epoll on each side), and in the MCP benchmark one worker spent less CPU
/// per call (read 286 µs against 362) and answered more calls with eight in
/// flight (8,478/s against 5,164). tokio's `TOKIO_WORKER_THREADS` sets
/// another count.
fn tokio_runtime() -> Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(1);
    }
    Ok(builder.enable_all().build()?)
}

#[cfg(test)]
mod tests {
    use super::error_line;
    use toolgate_core::Failure;

    #[test]
    fn the_error_line_shows_each_cause_of_the_chain_once() {
        let io = std::io::Error::other("disk full");
        let plain = anyhow::Error::new(io).context("cannot save the approval");
        assert_eq!(error_line(&plain), "cannot save the approval: disk full");
        // A message that already names its cause does not repeat it.
        let named = Failure::caused("committing 1 event(s) failed", std::io::Error::other("EIO"));
        let wrapped = anyhow::Error::new(named).context("cannot flush the audit log");
        assert_eq!(
            error_line(&wrapped),
            "cannot flush the audit log: committing 1 event(s) failed: EIO"
        );
    }
}
