//! `toolgate log` and `toolgate log verify`.

use std::io::Write;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use toolgate_core::event_query::{EventQuery, QueryError};
use toolgate_store::{EventFilter, EventReader, PgEventLog, StoredEvent, VerifyReport};

use toolgate::DataDir;

/// `toolgate log`.
#[derive(Debug, Args)]
pub struct LogArgs {
    #[command(subcommand)]
    command: Option<LogCommand>,
    /// One JSON object per line.
    #[arg(long)]
    json: bool,
    /// Keep printing new events as they arrive.
    #[arg(long)]
    follow: bool,
    /// Only this session's events.
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Only the last N events.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Only events recorded for this person (`[identity] person`, else user@host).
    #[arg(long, value_name = "PERSON")]
    person: Option<String>,
    /// Only events recorded on this machine.
    #[arg(long, value_name = "MACHINE")]
    machine: Option<String>,
    /// Only events of calls from this agent (a hooked agent such as `claude-code`, an MCP client's name, `toolgate-call`).
    #[arg(long, value_name = "AGENT")]
    agent: Option<String>,
}

#[derive(Debug, Subcommand)]
enum LogCommand {
    /// Walk the hash chain; exit 1 and name the first broken seq if it is broken.
    Verify {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs `toolgate log …`; returns the exit status.
pub fn run(args: LogArgs, data: &DataDir) -> Result<i32> {
    if args.command.is_none() {
        report_undelivered_spans(data);
    }
    let team = toolgate::TeamConfig::load_standard()?;
    if let toolgate::StoreChoice::Postgres { config, .. } = &team.store {
        let log = PgEventLog::open((**config).clone())?;
        return run_on(args, &log, config.target());
    }
    let path = data.audit_db();
    if let Some(LogCommand::Verify { json }) = args.command {
        if !path.exists() {
            anyhow::bail!("no audit log at {}", path.display());
        }
        let report = toolgate_store::verify(&path)
            .with_context(|| format!("cannot verify {}", path.display()))?;
        if json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            println!("{report}");
        }
        return Ok(if matches!(report, VerifyReport::Ok { .. }) {
            0
        } else {
            1
        });
    }
    if !path.exists() {
        if !args.follow {
            eprintln!("no events yet ({} does not exist)", path.display());
            return Ok(0);
        }
        while !path.exists() {
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    let reader =
        EventReader::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
    print_events(&args, |f| Ok(reader.query(f)?), || Ok(reader.last_seq()?))
}

/// Says on stderr how many spans never reached the OTLP collector
/// (`[telemetry]`), when any did not.
fn report_undelivered_spans(data: &DataDir) {
    let stats = toolgate::telemetry::DeliveryStats::read(data.root());
    let lost = stats.undelivered();
    if lost == 0 {
        return;
    }
    let why = stats
        .last_error
        .map(|e| format!(" (the collector's last error: {e})"))
        .unwrap_or_default();
    eprintln!(
        "toolgate: {lost} of {} spans were not delivered to the OTLP collector{why}; the audit log has every call",
        stats.spans
    );
}

/// `toolgate log …` over the team's database.
fn run_on(args: LogArgs, log: &PgEventLog, target: &str) -> Result<i32> {
    if let Some(LogCommand::Verify { json }) = args.command {
        let report = log
            .verify()
            .with_context(|| format!("cannot verify the audit log in {target}"))?;
        if json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            println!("{report}");
        }
        return Ok(if report.is_ok() { 0 } else { 1 });
    }
    match EventQuery::query(log, &EventFilter::default()) {
        Err(QueryError::NoLog(_)) if !args.follow => {
            eprintln!("no events yet ({target} holds no toolgate log)");
            return Ok(0);
        }
        Err(QueryError::NoLog(_)) => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read the audit log in {target}")),
        Ok(_) => {}
    }
    print_events(
        &args,
        |f| match EventQuery::query(log, f) {
            Err(QueryError::NoLog(_)) => Ok(Vec::new()),
            other => Ok(other?),
        },
        || Ok(log.last_seq().unwrap_or(0)),
    )
}

/// Prints the events `args` asks for, and with `--follow` the new ones as
/// they arrive.
fn print_events(
    args: &LogArgs,
    query: impl Fn(&EventFilter) -> Result<Vec<StoredEvent>>,
    last_seq: impl Fn() -> Result<u64>,
) -> Result<i32> {
    let mut filter = EventFilter {
        session: args.session.clone(),
        person: args.person.clone(),
        machine: args.machine.clone(),
        agent: args.agent.clone(),
        limit: args.limit,
        tail: args.limit.is_some(),
        ..EventFilter::default()
    };
    let stdout = std::io::stdout();
    loop {
        let events = query(&filter)?;
        let mut out = stdout.lock();
        for e in &events {
            let line = if args.json {
                serde_json::to_string(e)?
            } else {
                human(e)
            };
            if writeln!(out, "{line}").is_err() {
                return Ok(0); // reader went away (e.g. `| head`)
            }
        }
        out.flush().ok();
        if !args.follow {
            return Ok(0);
        }
        if let Some(last) = events.last() {
            filter.after_seq = Some(last.seq);
        } else if filter.after_seq.is_none() {
            filter.after_seq = Some(last_seq()?);
        }
        filter.limit = None;
        filter.tail = false;
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// One line for a person: seq, time, kind, session/call, and the payload's gist.
fn human(e: &StoredEvent) -> String {
    let p = &e.event.payload;
    let mut parts = vec![
        format!("#{}", e.seq),
        toolgate_core::event::format_utc_ms(e.event.ts_ms),
        e.event.kind.to_string(),
        format!("session={}", e.event.session_id),
    ];
    if !e.event.call_id.is_empty() {
        parts.push(format!("call={}", e.event.call_id));
    }
    if let Some(who) = &p.person {
        parts.push(format!("person={who}"));
    }
    if let Some(m) = &p.machine {
        parts.push(format!("machine={m}"));
    }
    if let Some(a) = &p.agent {
        parts.push(format!("agent={a}"));
    }
    if let Some(t) = &p.tool {
        parts.push(format!("tool={t}"));
    }
    if let (Some(a), Some(r)) = (&p.action, &p.resource) {
        parts.push(format!("{a} {r:?}"));
    }
    if let Some(risk) = p.risk_at_decision {
        parts.push(format!("risk={risk}"));
    }
    if let Some(d) = p.decision.or(p.suggested_decision) {
        parts.push(format!("decision={d}"));
    }
    if let Some(s) = p.sourced_from {
        parts.push(format!("source={s}"));
    }
    if let Some(rule) = &p.rule {
        parts.push(format!("rule={rule}"));
    }
    if let Some(r) = &p.reason {
        parts.push(format!("reason={r:?}"));
    }
    if let Some(ms) = p.duration_ms {
        parts.push(format!("{ms}ms"));
    }
    // Names a client, the model or a command chose (an agent, a tool, a
    // session id) reach the terminal with their escapes made visible.
    toolgate_core::visible::escape_hidden(&parts.join(" "), &[]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An MCP client named with a terminal escape, and a tool name with a
    /// right-to-left override, reached `toolgate log`'s terminal as they
    /// were: the escape could rewrite the lines a person was reading.
    #[test]
    fn terminal_escapes_in_logged_names_are_shown_escaped() {
        let payload = toolgate_core::EventPayload {
            agent: Some("client\u{1b}[2K\u{1b}[1Gok".into()),
            tool: Some("read\u{202e}".into()),
            ..Default::default()
        };
        let e = toolgate_core::test_util::stored_event(
            1,
            toolgate_core::EventKind::ToolStarted,
            "s\u{7}",
            payload,
        );
        let line = human(&e);
        assert!(
            line.chars().all(|c| !toolgate_core::visible::is_hidden(c)),
            "{line:?}"
        );
        assert!(
            line.contains("agent=client\\u{001B}[2K\\u{001B}[1Gok"),
            "{line}"
        );
        assert!(line.contains("session=s\\u{0007}"), "{line}");
    }
}
