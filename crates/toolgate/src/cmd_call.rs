//! `toolgate call TOOL JSON`: one call through the whole pipeline, asking on the
//! terminal.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Value, json};
use toolgate::terminal::TerminalChannel;
use toolgate::{
    CallError, CallIdentity, CallRequest, CancellationToken, Content, DataDir, Durability, Mode,
    SettleError, new_id,
};
use toolgate_policy::people::Asking;

/// `toolgate call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool's name (read, write, edit, apply_patch, bash, glob, grep, list,
    /// webfetch, websearch, todowrite, question, skill).
    pub tool: String,
    /// The tool's input as a JSON object, or `-` to read it from stdin.
    pub input: String,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Extra config files, applied after the project's (repeatable).
    #[arg(long, value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// default, accept-edits, auto or plan.
    #[arg(long, value_name = "MODE", value_parser = crate::cmd_policy::parse_mode)]
    pub mode: Option<Mode>,
    /// Print the whole result (content, structured output, decisions) as JSON.
    #[arg(long)]
    pub json: bool,
    /// The session id to record (default: a new one).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
}

/// Reads the JSON input argument.
pub fn parse_input(text: &str) -> Result<Value> {
    let text = if text == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read the input from stdin")?
    } else {
        text.to_string()
    };
    serde_json::from_str(&text).context("the input is not valid JSON")
}

/// Runs `toolgate call`; returns the exit status (0 ok, 1 the call failed).
pub async fn run(args: CallArgs, data: DataDir, durability: Durability) -> Result<i32> {
    let mode = args.mode;
    let input = parse_input(&args.input)?;
    let builder =
        crate::cli_builder::builder(args.root.as_deref(), &args.config, mode, &data, durability)?
            .asking(Asking::One(Arc::new(TerminalChannel)))
            .agent("toolgate-call");
    let toolgate = crate::cli_builder::build(builder)?;
    let started = crate::cli_builder::start_noting(&toolgate)?;
    let catalogue = started.engine().materialize();
    let session_id = args.session.clone().unwrap_or_else(|| new_id("cli"));
    let call = CallRequest {
        name: args.tool.clone(),
        input,
        identity: CallIdentity {
            session_id,
            call_id: new_id("call"),
            ..CallIdentity::default()
        },
    };
    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    let result = toolgate.settle_call(&catalogue, call, cancel).await;
    let status = match result {
        Ok(out) => {
            if args.json {
                let v = json!({
                    "content": out.content,
                    "structured": out.structured,
                    "spill_path": out.spill_path,
                    "decisions": out.decisions,
                });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                for c in &out.content {
                    match c {
                        Content::Text { text } => println!("{text}"),
                        Content::Image { mime_type, data } => {
                            println!("[{mime_type} image, {} base64 bytes]", data.len());
                        }
                    }
                }
            }
            0
        }
        Err(SettleError::Call(err)) => {
            report_error(&err, args.json);
            1
        }
        Err(SettleError::Start(err)) => return Err(err.into()),
    };
    started
        .audit_log()
        .flush()
        .context("cannot flush the audit log")?;
    Ok(status)
}

fn report_error(err: &CallError, json: bool) {
    if json {
        println!(
            "{}",
            json!({"error": err.to_string(), "reason": err.reason_code()})
        );
    }
    eprintln!("toolgate: call failed ({}): {err}", err.reason_code());
}
