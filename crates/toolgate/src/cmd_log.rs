//! `toolgate log` and `toolgate log verify`.

use std::io::Write;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use toolgate_store::{EventFilter, EventReader, StoredEvent, VerifyReport};

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
    let mut filter = EventFilter {
        session: args.session.clone(),
        limit: args.limit,
        tail: args.limit.is_some(),
        ..EventFilter::default()
    };
    let stdout = std::io::stdout();
    loop {
        let events = reader.query(&filter)?;
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
            filter.after_seq = Some(reader.last_seq()?);
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
    parts.join(" ")
}
