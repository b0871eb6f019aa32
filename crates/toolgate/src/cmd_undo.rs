//! `toolgate undo`: list the change sets that landed (from bash's staged
//! writes and the file tools), or restore one.

use anyhow::{Result, bail};
use clap::Args;
use toolgate::DataDir;
use toolgate_checkpoint::{Before, Manifest, State};

/// `toolgate undo [--list] [ID] [--json]`.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// List the checkpoints, newest first, instead of undoing one.
    #[arg(long)]
    pub list: bool,
    /// Print JSON (one object per line with `--list`).
    #[arg(long)]
    pub json: bool,
    /// The checkpoint to restore (default: the newest that landed).
    pub id: Option<String>,
}

/// Paths named per checkpoint in the listing; the rest are counted.
const SHOWN: usize = 5;

/// Runs `toolgate undo`.
pub fn run(args: UndoArgs, data: &DataDir) -> Result<i32> {
    let store = data.checkpoints()?;
    if args.list {
        if args.id.is_some() {
            bail!("--list takes no checkpoint id");
        }
        let listing = store.list()?;
        for m in &listing.checkpoints {
            if args.json {
                println!("{}", serde_json::to_string(m)?);
            } else {
                print_one(m);
            }
        }
        for (id, why) in &listing.unreadable {
            eprintln!("toolgate: checkpoint {id} is unreadable: {why}");
        }
        if listing.checkpoints.is_empty() && !args.json {
            println!("no checkpoints");
        }
        return Ok(0);
    }
    let id = match args.id {
        Some(id) => id,
        None => match store.newest_landed()? {
            Some(id) => id,
            None => bail!("nothing to undo: no change set has landed (see `toolgate undo --list`)"),
        },
    };
    let undone = store.undo(&id)?;
    if args.json {
        println!("{}", serde_json::to_string(&undone)?);
    } else {
        println!(
            "restored {} path(s) of checkpoint {} ({} in call {}):",
            undone.entries.len(),
            undone.id,
            undone.tool,
            undone.call_id
        );
        for e in &undone.entries {
            println!("  {} {}", restored_word(&e.before), e.path.display());
        }
    }
    Ok(0)
}

fn print_one(m: &Manifest) {
    let time = toolgate_core::event::format_utc_ms(i64::try_from(m.time_ms).unwrap_or(i64::MAX));
    let state = match m.state {
        State::Landed => String::new(),
        other => format!(" [{other}]"),
    };
    println!(
        "{}  {time}  {} call {}  {} path(s){state}",
        m.id,
        m.tool,
        m.call_id,
        m.entries.len()
    );
    for e in m.entries.iter().take(SHOWN) {
        println!("    {}", e.path.display());
    }
    if m.entries.len() > SHOWN {
        println!("    … and {} more", m.entries.len() - SHOWN);
    }
}

fn restored_word(before: &Before) -> &'static str {
    match before {
        Before::Absent => "removed ",
        _ => "restored",
    }
}
