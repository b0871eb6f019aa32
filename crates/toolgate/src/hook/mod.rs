//! The hook process: answers another agent's pre-tool-use hook with
//! toolgate's decision, and records the outcomes the agent reports. Both
//! `toolgate hook AGENT` and the small `toolgate-hook AGENT` program (which
//! links and starts only this, for the agents' every call) run [`answer`].
//!
//! It never fails open: a bad payload, an unknown event, an error, a panic
//! or the time budget running out all answer in the agent's blocking form
//! (`toolgate_hooks::block`). The only lock it takes is SQLite's, for the
//! moment of appending to the audit log, and the timer (`watchdog`) bounds
//! even that.

mod args;
mod ask;
pub use ask::through_toolgate as asks_go_to_toolgate;
mod decide;
mod record;
mod watchdog;

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use toolgate_hooks::{Agent, Reply, block};

use crate::{DataDir, Durability, Mode};

pub use args::{ArgsError, Invocation, parse_invocation};
pub use ask::{ASKS_VAR, WAIT_VAR};

pub use toolgate_hooks::install::HOOK_PROGRAM;

/// Whether this process has answered: the answer, the panic hook and the
/// timer each answer only if they are first to set it.
static ANSWERED: AtomicBool = AtomicBool::new(false);

/// The time a hook answer may take before the blocking form is answered
/// instead (below every agent's own hook timeout).
pub const DEFAULT_BUDGET_MS: u64 = 5_000;

/// What decides besides the payload: the flags of `toolgate hook AGENT`.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The location root (`--root`); else the project the agent names.
    pub root: Option<PathBuf>,
    /// Session config files (`--config`), after the user and project layers.
    pub config: Vec<PathBuf>,
    /// The mode (`--mode`).
    pub mode: Option<Mode>,
}

/// Answers the hook payload on stdin for `agent_name` and returns the exit
/// status. Never fails: every failure, `data` missing included, answers in
/// the agent's blocking form on stdout and stderr.
pub fn answer(
    agent_name: &str,
    options: &Options,
    data: anyhow::Result<DataDir>,
    durability: Durability,
) -> i32 {
    let agent = match agent_name.parse::<Agent>() {
        Ok(agent) => agent,
        Err(e) => {
            // Not knowing the agent, exit 2 is the blocking form of most.
            eprintln!("toolgate: {e}");
            return 2;
        }
    };
    // A panic on any thread answers with the blocking form, whose reason
    // names it (the default report, with a backtrace, would go to the model),
    // and ends the process.
    std::panic::set_hook(Box::new(move |info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown".into());
        let r = block(
            agent,
            &format!("the hook panicked ({what}); the call is blocked"),
        );
        if answer_once(&r) {
            std::process::exit(i32::from(r.exit));
        }
    }));
    let limit = budget();
    let on_timeout = block(
        agent,
        &format!(
            "no decision within toolgate's time budget of {} ms; the call is blocked",
            limit.as_millis()
        ),
    );
    if let Err(e) = watchdog::arm(&on_timeout, limit) {
        let r = block(agent, &format!("cannot set the hook's time budget: {e}"));
        answer_once(&r);
        return i32::from(r.exit);
    }
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        decide::decide(agent, options, &data?, durability)
    }));
    let r = match outcome {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => block(agent, &format!("the hook failed: {}", chain(&e))),
        // The panic hook answered and is exiting; this is the fallback.
        Err(_) => block(agent, "the hook panicked; the call is blocked"),
    };
    if !answer_once(&r) {
        // The timer or the panic hook answered and is exiting.
        std::thread::sleep(Duration::from_secs(1));
    }
    i32::from(r.exit)
}

/// Prints `reply` once: whichever of the answer, the panic hook and the
/// timer comes first answers, and the others print nothing.
fn answer_once(reply: &Reply) -> bool {
    if ANSWERED.swap(true, Ordering::SeqCst) {
        return false;
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(reply.stdout.as_bytes());
    if !reply.stdout.is_empty() {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
    if !reply.stderr.is_empty() {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{}", reply.stderr);
        let _ = err.flush();
    }
    true
}

fn budget() -> Duration {
    let ms = std::env::var("TOOLGATE_HOOK_BUDGET_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .unwrap_or(DEFAULT_BUDGET_MS);
    Duration::from_millis(ms)
}

/// The error and its causes on one line, each cause once.
fn chain(e: &anyhow::Error) -> String {
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

/// The `toolgate` program a confined command runs under (`toolgate sandbox
/// exec`): this process's own executable, or the `toolgate` beside it when
/// this is [`HOOK_PROGRAM`].
pub fn toolgate_program() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    if exe.file_name().is_some_and(|n| n == HOOK_PROGRAM) {
        return Ok(exe.with_file_name("toolgate"));
    }
    Ok(exe)
}

/// The whole of `toolgate-hook ARGS…` (`args` without the program name):
/// parses the arguments, locates the data directory and answers. Never
/// fails open: bad arguments for a known agent answer its blocking form.
pub fn run_program(args: impl IntoIterator<Item = std::ffi::OsString>) -> i32 {
    let Invocation {
        agent,
        options,
        data_dir,
        durability,
    } = match parse_invocation(args) {
        Ok(i) => i,
        Err(e) => {
            if let Some(agent) = e.agent.as_deref().and_then(|a| a.parse::<Agent>().ok()) {
                let r = block(agent, &format!("bad arguments: {e}"));
                answer_once(&r);
                return i32::from(r.exit);
            }
            eprintln!(
                "toolgate: {e}; usage: {HOOK_PROGRAM} AGENT [--root DIR] [--config FILE]… \
                 [--mode M] [--data-dir DIR] [--durability normal|full]"
            );
            return 2;
        }
    };
    let data = DataDir::locate(data_dir.as_deref())
        .map(|d| d.with_durability(durability))
        .map_err(anyhow::Error::from);
    answer(&agent, &options, data, durability)
}
