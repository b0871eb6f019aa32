//! `toolgate hook AGENT`: answers another agent's pre-tool-use hook with
//! toolgate's decision, and records the outcomes the agent reports.
//!
//! It never fails open: a bad payload, an unknown event, an error, a panic
//! or the time budget running out all answer in the agent's blocking form
//! (`toolgate_hooks::block`). The only lock it takes is SQLite's, for the
//! few milliseconds of appending to the audit log, and the watchdog bounds
//! even that.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use clap::Args;
use serde_json::{Value, json};
use toolgate::{CheckError, CheckOutcome, DataDir, Durability, Toolgate};
use toolgate_core::EventSink;
use toolgate_core::{Effect, Event, EventKind, EventPayload, PermissionRequest};
use toolgate_hooks::{
    Agent, HookCall, HookEvent, Probe, Reply, Verdict, acknowledge, block, parse, probes, reply,
    sandbox_rewrite,
};

use crate::cmd_policy::PolicyArgs;

/// The time a hook answer may take before the blocking form is answered
/// instead (below every agent's own hook timeout).
pub const DEFAULT_BUDGET_MS: u64 = 5_000;

/// `toolgate hook AGENT`, or `toolgate hook install|uninstall|status AGENT`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent (claude-code, codex, gemini, agy, cursor, copilot,
    /// opencode), or `install`, `uninstall`, `status` followed by one.
    #[arg(value_name = "AGENT", num_args = 1..=2, required = true)]
    pub words: Vec<String>,
    /// install/uninstall/status: the project's settings (the default).
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// install/uninstall/status: the user's settings.
    #[arg(long)]
    pub user: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

/// Runs `toolgate hook …`.
pub fn run(args: HookArgs, data: Result<DataDir>, durability: Durability) -> Result<i32> {
    match args.words.as_slice() {
        [agent] => Ok(answer(agent, &args.policy, data, durability)),
        [verb, agent] => crate::cmd_hook_install::run(verb, agent, &args),
        _ => Err(anyhow!(
            "usage: toolgate hook AGENT | toolgate hook install|uninstall|status AGENT"
        )),
    }
}

/// Prints `reply` once: whichever of the answer and the watchdog comes
/// first answers, and the other prints nothing.
fn answer_once(answered: &AtomicBool, reply: &Reply) -> bool {
    if answered.swap(true, Ordering::SeqCst) {
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

/// Answers the hook payload on stdin for `agent_name`; returns the exit
/// status. Never returns an error: every failure is the blocking form.
fn answer(
    agent_name: &str,
    policy: &PolicyArgs,
    data: Result<DataDir>,
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
    // A panic is answered with the blocking form, whose reason names it:
    // the default report (with a backtrace) would go to the model.
    std::panic::set_hook(Box::new(|_| {}));
    let answered = Arc::new(AtomicBool::new(false));
    let limit = budget();
    {
        let watch = Arc::clone(&answered);
        let spawned = std::thread::Builder::new()
            .name("tg-hook-watchdog".into())
            .spawn(move || {
                std::thread::sleep(limit);
                let r = block(
                    agent,
                    &format!(
                        "no decision within toolgate's time budget of {} ms; the call is blocked",
                        limit.as_millis()
                    ),
                );
                if answer_once(&watch, &r) {
                    std::process::exit(i32::from(r.exit));
                }
            });
        if spawned.is_err() {
            let r = block(agent, "cannot start the hook's watchdog thread");
            answer_once(&answered, &r);
            return i32::from(r.exit);
        }
    }
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        decide(agent, policy, &data?, durability)
    }));
    let r = match outcome {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => block(agent, &format!("the hook failed: {}", chain(&e))),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            block(
                agent,
                &format!("the hook panicked ({what}); the call is blocked"),
            )
        }
    };
    if !answer_once(&answered, &r) {
        // The watchdog answered and is exiting.
        std::thread::sleep(Duration::from_secs(1));
    }
    i32::from(r.exit)
}

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

fn decide(
    agent: Agent,
    policy: &PolicyArgs,
    data: &DataDir,
    durability: Durability,
) -> Result<Reply> {
    test_faults();
    let bytes = read_stdin()?;
    let call = parse(agent, &bytes)?;
    match &call.event {
        HookEvent::PreToolUse => {}
        HookEvent::PostToolUse { ok } => {
            record_outcome(&call, *ok, data, durability)?;
            return Ok(acknowledge(agent));
        }
        HookEvent::Other(name) => {
            return Err(anyhow!(
                "{agent} sent the event `{name}`, which toolgate does not answer (install it for tool events only)"
            ));
        }
    }
    let root = project_root(&call, policy);
    let toolgate = crate::cli_builder::build(crate::cli_builder::builder(
        Some(&root),
        &policy.config,
        policy.mode,
        data,
        durability,
    )?)?;
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
    record_decision(&call, outcome, &verdict, rewritten, data, durability)?;
    // The engine holds no store, thread or file: freeing its policy and
    // tables would only cost time.
    std::mem::forget(toolgate);
    Ok(reply(agent, &verdict))
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
    let exe = std::env::current_exe().context("cannot find toolgate's own executable")?;
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
fn project_root(call: &HookCall, policy: &PolicyArgs) -> PathBuf {
    if let Some(root) = &policy.root {
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

fn ids(call: &HookCall) -> (String, String) {
    let session = match &call.session_id {
        Some(s) => format!("{}:{s}", call.agent),
        None => format!("{}:unknown", call.agent),
    };
    let call_id = call
        .call_id
        .clone()
        .unwrap_or_else(|| toolgate::new_id("hook-call"));
    (session, call_id)
}

fn extra(call: &HookCall, more: Value) -> Value {
    let mut v = json!({
        "agent": call.agent.name(),
        "hook": true,
        "agent_session_id": call.session_id,
        "agent_call_id": call.call_id,
        "cwd": call.cwd.as_ref().map(|c| c.display().to_string()),
    });
    if let (Some(obj), Value::Object(more)) = (v.as_object_mut(), more) {
        obj.extend(more);
    }
    v
}

fn append(
    mut events: Vec<Event>,
    agent: &str,
    data: &DataDir,
    durability: Durability,
) -> Result<()> {
    let team = toolgate::TeamConfig::load_standard()?;
    toolgate::team::stamp_all(&mut events, &team.identity, Some(agent));
    if let toolgate::StoreChoice::Postgres { config, .. } = &team.store {
        // The team's database: committed (or refused) before the answer.
        let log = toolgate_store::PgEventLog::open((**config).clone())?;
        futures::executor::block_on(log.submit_batch(events)).with_context(|| {
            format!(
                "cannot record the hook's decision in the audit database {}",
                config.target()
            )
        })?;
        log.close()?;
        return Ok(());
    }
    // One transaction on this thread: a hook process records its few events
    // once, without the writer and checkpoint threads of an `EventLog`.
    toolgate_store::append_once(data.audit_db(), durability, events).with_context(|| {
        format!(
            "cannot record the hook's decision in the audit log {}",
            data.audit_db().display()
        )
    })?;
    Ok(())
}

/// Each request's judgement and the answer given, durable before the answer.
fn record_decision(
    call: &HookCall,
    outcome: Option<&CheckOutcome>,
    verdict: &Verdict,
    rewritten: bool,
    data: &DataDir,
    durability: Durability,
) -> Result<()> {
    let (session, call_id) = ids(call);
    let actor = format!("hook:{}", call.agent);
    let mut events = Vec::new();
    let requests = outcome.map(|o| o.requests.as_slice()).unwrap_or_default();
    for (i, r) in requests.iter().enumerate() {
        events.push(Event::now(
            EventKind::PermissionRequested,
            &session,
            &call_id,
            EventPayload {
                tool: Some(call.tool.clone()),
                args: (i == 0).then(|| call.input.clone()),
                tool_call_id: call.call_id.clone(),
                action: Some(r.action.clone()),
                resource: Some(r.resource.clone()),
                risk_at_decision: Some(r.risk),
                suggested_decision: Some(r.decision),
                rule: r.rule.clone(),
                actor: Some(actor.clone()),
                extra: Some(extra(call, json!({}))),
                ..EventPayload::default()
            },
        ));
    }
    // The answer given for the whole call.
    events.push(Event::now(
        EventKind::PermissionResolved,
        &session,
        &call_id,
        EventPayload {
            tool: Some(call.tool.clone()),
            args: requests.is_empty().then(|| call.input.clone()),
            tool_call_id: call.call_id.clone(),
            action: Some(format!("hook:{}", call.tool)),
            resource: outcome
                .and_then(|o| o.requests.first())
                .map(|r| r.resource.clone()),
            risk_at_decision: outcome.map(|o| o.risk),
            sourced_from: outcome.map(|o| o.source),
            decision: Some(verdict.effect),
            reason: Some(verdict.reason.clone()),
            actor: Some(actor),
            extra: Some(extra(
                call,
                json!({ "sandbox_rewrite": rewritten, "updated_input": verdict.updated_input }),
            )),
            ..EventPayload::default()
        },
    ));
    append(events, call.agent.name(), data, durability)
}

/// The outcome the agent reports after the tool ran.
fn record_outcome(call: &HookCall, ok: bool, data: &DataDir, durability: Durability) -> Result<()> {
    let (session, call_id) = ids(call);
    let preview = call.output.as_ref().map(|o| {
        let text = match o {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        text.chars().take(400).collect::<String>()
    });
    let event = Event::now(
        if ok {
            EventKind::ToolCompleted
        } else {
            EventKind::ToolFailed
        },
        &session,
        &call_id,
        EventPayload {
            tool: Some(call.tool.clone()),
            tool_call_id: call.call_id.clone(),
            actor: Some(format!("hook:{}", call.agent)),
            preview,
            extra: Some(extra(call, json!({ "reported_by": "agent" }))),
            ..EventPayload::default()
        },
    );
    append(vec![event], call.agent.name(), data, durability)
}
