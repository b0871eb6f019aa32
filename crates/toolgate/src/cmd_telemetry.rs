//! `toolgate telemetry export`: the spans of the calls agents' hooks
//! answered, read back from the audit log and sent to the OTLP collector
//! (see `toolgate::telemetry::hook_export`). Hooks start it themselves when
//! `[telemetry]` is configured; by hand it sends what is pending and exits.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use toolgate::telemetry::Telemetry;
use toolgate::telemetry::hook_export::{ExportRun, export_hook_calls};
use toolgate::{DataDir, StoreChoice, TeamConfig};
use toolgate_core::event_query::EventQuery;
use toolgate_policy::policy::PolicySources;

/// `toolgate telemetry …`.
#[derive(Debug, Subcommand)]
pub enum TelemetryCommand {
    /// Send the spans of the calls agents' hooks answered (hooks start this
    /// themselves when `[telemetry]` is set).
    Export(ExportArgs),
}

/// `toolgate telemetry export`.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// Keep reading until the log has been quiet this many seconds (a hook
    /// starts the exporter this way); without it, send what the log holds
    /// now. Either way, calls whose outcome the agent has not reported are
    /// then sent as not reported.
    #[arg(long, value_name = "SECS")]
    pub until_idle: Option<u64>,
    /// A config file read beside the user and managed config (for
    /// `[telemetry]` and `[store]`); may be given more than once.
    #[arg(long, value_name = "FILE")]
    pub config: Vec<PathBuf>,
}

/// Runs `toolgate telemetry …`; returns the exit status.
pub fn run(command: TelemetryCommand, data: &DataDir) -> Result<i32> {
    let TelemetryCommand::Export(args) = command;
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let mut sources = PolicySources::standard(cwd);
    sources.session_files = args.config.clone();
    let team = TeamConfig::load(&sources)?;
    let Some(settings) = &team.telemetry else {
        bail!(
            "no [telemetry] is configured (or it has enabled = false): there is no collector to send spans to"
        );
    };
    let telemetry = Telemetry::global(settings, Some(data.root()))
        .map_err(|e| anyhow::anyhow!("[telemetry]: {e}"))?;
    let (log, machine): (Box<dyn EventQuery>, Option<&str>) = match &team.store {
        StoreChoice::Local => (
            Box::new(toolgate_store::LogQuery::new(data.audit_db())),
            None,
        ),
        // The team's database holds every machine's calls: each machine's
        // exporter sends its own.
        StoreChoice::Postgres { config, .. } => (
            Box::new(
                toolgate_store::PgEventLog::open((**config).clone())
                    .with_context(|| format!("cannot open the audit log in {}", config.target()))?,
            ),
            Some(team.identity.machine.as_str()),
        ),
    };
    let idle = args.until_idle.map(Duration::from_secs);
    let run = export_hook_calls(data, log.as_ref(), machine, &telemetry, idle)
        .context("exporting the hook calls' spans")?;
    match run {
        ExportRun::AlreadyRunning => {
            println!(
                "an exporter is already running for {}",
                data.root().display()
            );
        }
        ExportRun::Done { cursor, spans } => {
            println!("sent {spans} spans of hook calls (the audit log read up to seq {cursor})");
        }
    }
    Ok(0)
}
