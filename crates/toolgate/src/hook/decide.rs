//! The decision for one payload: the agent's call mapped to toolgate's
//! requests, judged by the engine, confined where it may only run in the
//! sandbox, and recorded before the answer.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use serde_json::Value;
use toolgate_core::{Effect, PermissionRequest};
use toolgate_hooks::{
    Agent, HookCall, HookEvent, Probe, Reply, Verdict, acknowledge, parse, probes, reply,
    sandbox_rewrite,
};

use super::{Options, ask, record};
use crate::{
    BuildError, Builder, CheckError, CheckOutcome, DataDir, Durability, TeamConfig, Toolgate,
};
use toolgate_policy::policy::PolicySources;

/// The engine for the project at `root`, with the flags' config and mode.
fn engine(
    root: &Path,
    options: &Options,
    data: &DataDir,
    durability: Durability,
) -> Result<Toolgate> {
    let mut builder = Builder::new()
        .location(root)
        .located_data_dir(data.clone())
        .durability(durability);
    for file in &options.config {
        builder = builder.config_file(file);
    }
    if let Some(mode) = options.mode {
        builder = builder.mode(mode);
    }
    builder.build().map_err(|e| match e {
        BuildError::Location { path, source } => {
            anyhow::Error::new(source).context(format!("bad project root {}", path.display()))
        }
        other => anyhow::Error::new(other),
    })
}

/// Test-only switches, so that tests can break a real hook process: a
/// panic, and a sleep past the time budget. Both can only make the hook
/// block.
fn test_faults() {
    if std::env::var_os("TOOLGATE_HOOK_TEST_PANIC").is_some_and(|v| !v.is_empty()) {
        panic!("forced by TOOLGATE_HOOK_TEST_PANIC");
    }
    if let Some(ms) = std::env::var("TOOLGATE_HOOK_TEST_SLEEP_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

fn read_stdin() -> Result<Vec<u8>> {
    let limit = toolgate_hooks::MAX_PAYLOAD;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(u64::try_from(limit).unwrap_or(u64::MAX) + 1)
        .read_to_end(&mut bytes)
        .context("cannot read the hook payload on stdin")?;
    if bytes.len() > limit {
        return Err(anyhow!("the hook payload is larger than {limit} bytes"));
    }
    Ok(bytes)
}

/// The answer to the payload on stdin, recorded in the audit log.
pub(super) fn decide(
    agent: Agent,
    options: &Options,
    data: &DataDir,
    durability: Durability,
) -> Result<Reply> {
    test_faults();
    let bytes = read_stdin()?;
    let call = parse(agent, &bytes)?;
    match &call.event {
        HookEvent::PreToolUse => {}
        HookEvent::PostToolUse { ok } => {
            // No engine here: the user, `--config` and managed layers only.
            let mut sources = PolicySources::standard(project_root(&call, options));
            sources.session_files = options.config.clone();
            let team = TeamConfig::load(&sources)?;
            record::outcome(&call, *ok, &team, data, durability)?;
            wake_exporter(&team, data, options);
            return Ok(acknowledge(agent));
        }
        HookEvent::Other(name) => {
            return Err(anyhow!(
                "{agent} sent the event `{name}`, which toolgate does not answer (install it for tool events only)"
            ));
        }
    }
    let root = project_root(&call, options);
    let toolgate = engine(&root, options, data, durability)?;
    let mapped = probes(&call);
    let mut asks = Vec::new();
    let mut calls: Vec<(&str, &Value)> = Vec::new();
    let mut extra: Vec<PermissionRequest> = Vec::new();
    for probe in &mapped.probes {
        match probe {
            Probe::Tool { tool, input } => calls.push((tool, input)),
            Probe::Request(r) => extra.push(r.clone()),
            Probe::Ask(why) => asks.push(why.clone()),
        }
    }
    let judged = if calls.is_empty() && extra.is_empty() {
        None
    } else {
        Some(judge(&toolgate, &calls, extra)?)
    };
    let mut verdict = match &judged {
        Some(Judged::Outcome(o)) => Verdict {
            effect: o.decision,
            reason: o.reason.clone(),
            updated_input: None,
        },
        Some(Judged::Refused(why)) => Verdict {
            effect: Effect::Deny,
            reason: why.clone(),
            updated_input: None,
        },
        None => Verdict {
            effect: Effect::Allow,
            reason: format!("`{}` acts only inside {agent}", call.tool),
            updated_input: None,
        },
    };
    if !asks.is_empty() && verdict.effect == Effect::Allow {
        verdict.effect = Effect::Ask;
        verdict.reason = asks.join("; ");
    }
    let sandboxed =
        matches!(&judged, Some(Judged::Outcome(o)) if o.decision == Effect::Allow && o.sandbox);
    let mut rewritten = false;
    if sandboxed && verdict.effect == Effect::Allow {
        match confine(agent, &call, &mapped, &toolgate, &root)? {
            Ok(input) => {
                verdict.updated_input = Some(input);
                rewritten = true;
            }
            Err(why) => {
                verdict.effect = Effect::Ask;
                verdict.reason = format!("{}; {why}", verdict.reason);
            }
        }
    }
    let outcome = match &judged {
        Some(Judged::Outcome(o)) => Some(o),
        _ => None,
    };
    if verdict.effect == Effect::Ask && ask::through_toolgate(agent) {
        verdict = ask::ask_person(&call, outcome, &verdict, data);
    }
    // The layers the engine read, so `[store]` follows `--config` as the
    // policy does.
    let team = toolgate.team_config()?;
    record::decision(&call, outcome, &verdict, rewritten, &team, data, durability)?;
    wake_exporter(&team, data, options);
    // The engine holds no store, thread or file: freeing its policy and
    // tables would only cost time.
    std::mem::forget(toolgate);
    Ok(reply(agent, &verdict))
}

/// With `[telemetry]` set, makes sure a span exporter is reading the log
/// (the hook itself sends nothing: it must answer at once).
fn wake_exporter(team: &TeamConfig, data: &DataDir, options: &Options) {
    if team.telemetry.is_some() {
        crate::telemetry::hook_export::wake_exporter(data, &options.config);
    }
}

enum Judged {
    Outcome(CheckOutcome),
    /// A tool would refuse the input (a fetch of a private address…).
    Refused(String),
}

fn judge(
    toolgate: &Toolgate,
    calls: &[(&str, &Value)],
    extra: Vec<PermissionRequest>,
) -> Result<Judged> {
    match toolgate.check_calls(calls, extra) {
        Ok(o) => Ok(Judged::Outcome(o)),
        Err(CheckError::Input(e)) => Ok(Judged::Refused(e.to_string())),
        Err(e) => Err(e.into()),
    }
}

/// The input that runs the call's shell command inside toolgate's sandbox,
/// judged again as rewritten; `Err` says why the call is asked instead.
fn confine(
    agent: Agent,
    call: &HookCall,
    mapped: &toolgate_hooks::Mapped,
    toolgate: &Toolgate,
    root: &Path,
) -> Result<std::result::Result<Value, String>> {
    if !agent.protocol().rewrites {
        return Ok(Err(format!(
            "it is allowed only inside toolgate's sandbox, and {agent} cannot run a rewritten command"
        )));
    }
    let Some(shell) = &mapped.shell else {
        return Ok(Err("it is allowed only inside toolgate's sandbox, and only a shell command can be moved into it".into()));
    };
    let exe = super::toolgate_program().context("cannot find toolgate's own executable")?;
    let Some(rewrite) = sandbox_rewrite(&call.input, shell, &exe, root) else {
        return Ok(Err(
            "the command could not be rewritten to run inside toolgate's sandbox".into(),
        ));
    };
    // Judged again as it will run: what runs inside the sandbox.
    let mut again = serde_json::Map::new();
    again.insert("command".into(), Value::String(rewrite.confined.clone()));
    if let Some(dir) = &shell.workdir {
        again.insert("workdir".into(), Value::String(dir.clone()));
    }
    let again = Value::Object(again);
    match judge(toolgate, &[("bash", &again)], Vec::new())? {
        Judged::Outcome(o) if o.decision == Effect::Allow => Ok(Ok(rewrite.input)),
        Judged::Outcome(o) => Ok(Err(format!(
            "the rewritten command was judged again and not allowed ({})",
            o.reason
        ))),
        Judged::Refused(why) => Ok(Err(format!("the rewritten command was refused: {why}"))),
    }
}

/// The workspace root: `--root`, else the project the agent names, else
/// the agent's project-directory variable, else its working directory.
fn project_root(call: &HookCall, options: &Options) -> PathBuf {
    if let Some(root) = &options.root {
        return root.clone();
    }
    if let Some(dir) = &call.project_dir {
        return dir.clone();
    }
    let var = match call.agent {
        Agent::ClaudeCode => Some("CLAUDE_PROJECT_DIR"),
        Agent::Gemini | Agent::Agy => Some("GEMINI_PROJECT_DIR"),
        Agent::Cursor => Some("CURSOR_PROJECT_DIR"),
        _ => None,
    };
    if let Some(dir) = var.and_then(std::env::var_os).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    call.cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."))
}
