//! The hook's events in the audit log: each request's judgement and the
//! answer given, and the outcomes the agent reports, durable before the
//! answer.

use anyhow::{Context, Result};
use serde_json::{Value, json};
use toolgate_core::{Event, EventKind, EventPayload, EventSink};
use toolgate_hooks::{HookCall, Verdict};

use crate::{CheckOutcome, DataDir, Durability, TeamConfig};

fn ids(call: &HookCall) -> (String, String) {
    let session = match &call.session_id {
        Some(s) => format!("{}:{s}", call.agent),
        None => format!("{}:unknown", call.agent),
    };
    let call_id = call
        .call_id
        .clone()
        .unwrap_or_else(|| crate::new_id("hook-call"));
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
    team: &TeamConfig,
    data: &DataDir,
    durability: Durability,
) -> Result<()> {
    crate::team::stamp_all(&mut events, &team.identity, Some(agent));
    if let crate::StoreChoice::Postgres { config, .. } = &team.store {
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
    // once, without the writer and checkpoint threads of an `EventLog`, and
    // exits after answering, which closes the connection.
    toolgate_store::append_before_exit(data.audit_db(), durability, events).with_context(|| {
        format!(
            "cannot record the hook's decision in the audit log {}",
            data.audit_db().display()
        )
    })?;
    Ok(())
}

/// Each request's judgement and the answer given, durable before the answer,
/// in the store `team` (read from the engine's config layers) chooses.
pub(super) fn decision(
    call: &HookCall,
    outcome: Option<&CheckOutcome>,
    verdict: &Verdict,
    rewritten: bool,
    team: &TeamConfig,
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
    append(events, call.agent.name(), team, data, durability)
}

/// The outcome the agent reports after the tool ran, in the store `team`
/// chooses.
pub(super) fn outcome(
    call: &HookCall,
    ok: bool,
    team: &TeamConfig,
    data: &DataDir,
    durability: Durability,
) -> Result<()> {
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
    append(vec![event], call.agent.name(), team, data, durability)
}
