//! An ask the agent cannot put to a person, put to toolgate's own channels
//! instead (see [`crate::handover`]): posted to the data directory's queue
//! and waited for, within the agent's hook timeout. With no channel
//! running, nothing is waited for: the ask stays an ask, which the agent's
//! answer turns into a deny saying how to approve.

use std::time::{Duration, Instant};

use toolgate_core::{Effect, Preview, PreviewBody, Risk};
use toolgate_hooks::{Agent, HookCall, Verdict};
use toolgate_policy::approvals::{Answer, AskItem, AskPrompt};
use toolgate_store::AskQueue;

use super::watchdog;
use crate::handover::{channel_running, queue_path};
use crate::{CheckOutcome, DataDir};

/// How long a hook waits for a person by default: the hook timeout `hook
/// install` writes (or the agent's own default, when shorter), less this
/// margin for recording the answer.
const MARGIN: Duration = Duration::from_secs(5);

/// How often the queue is read for the answer.
const POLL: Duration = Duration::from_millis(50);

/// How often the hook checks that a channel is still running.
const RECHECK: Duration = Duration::from_millis(500);

/// The variable that sets the wait, in milliseconds (0: never wait).
pub const WAIT_VAR: &str = "TOOLGATE_HOOK_ASK_WAIT_MS";

/// The variable that sends asks to toolgate's channels even for an agent
/// that can ask (`toolgate`): for Cursor or Copilot set up to ignore a
/// hook's ask.
pub const ASKS_VAR: &str = "TOOLGATE_HOOK_ASKS";

/// Whether an ask of `agent` goes to toolgate's channels: the agent cannot
/// put it to a person, or [`ASKS_VAR`] says to.
pub fn through_toolgate(agent: Agent) -> bool {
    !agent.protocol().can_ask || std::env::var(ASKS_VAR).is_ok_and(|v| v.trim() == "toolgate")
}

/// How long the hook waits for an answer.
fn wait_limit(agent: Agent) -> Duration {
    if let Some(ms) = std::env::var(WAIT_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        return Duration::from_millis(ms);
    }
    let installed = toolgate_hooks::install::INSTALL_TIMEOUT_S.saturating_mul(1000);
    let timeout = installed.min(agent.protocol().default_timeout_ms);
    Duration::from_millis(timeout).saturating_sub(MARGIN)
}

/// What the person is shown: each request that asks, or the call itself
/// when the ask came from the mapping (an unknown tool) or the sandbox.
fn prompt(
    call: &HookCall,
    outcome: Option<&CheckOutcome>,
    verdict: &Verdict,
    wait: Duration,
) -> AskPrompt {
    let mut items: Vec<AskItem> = outcome
        .map(|o| o.requests.as_slice())
        .unwrap_or_default()
        .iter()
        .filter(|r| r.decision == Effect::Ask)
        .map(|r| AskItem {
            action: r.action.clone(),
            resource: r.resource.clone(),
            risk: r.risk,
            reason: verdict.reason.clone(),
            save_pattern: None,
        })
        .collect();
    if items.is_empty() {
        items.push(AskItem {
            action: format!("{}:{}", call.agent, call.tool),
            resource: call.tool.clone(),
            risk: outcome.map_or(Risk::Execute, |o| o.risk),
            reason: verdict.reason.clone(),
            save_pattern: None,
        });
    }
    let input = serde_json::to_string_pretty(&call.input).unwrap_or_default();
    AskPrompt {
        session_id: format!(
            "{}:{}",
            call.agent,
            call.session_id.as_deref().unwrap_or("unknown")
        ),
        call_id: call.call_id.clone().unwrap_or_default(),
        tool: format!("{} ({})", call.tool, call.agent),
        items,
        // Nothing is saved from a hook's ask: each call is its own process,
        // with no session to keep an approval in, and "always" belongs to
        // the asks that the gate itself puts (a rule does it here).
        offer_session: false,
        offer_always: false,
        timeout_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        preview: Some(Preview {
            title: format!("{} input", call.tool),
            fields: call
                .cwd
                .iter()
                .map(|d| toolgate_core::PreviewField {
                    label: "in".into(),
                    value: d.display().to_string(),
                })
                .collect(),
            body: Some(PreviewBody::Text(input)),
        }),
    }
}

/// `verdict` (an ask) answered by a person through toolgate's channels, or
/// a deny when nobody answered in time; unchanged when no channel runs.
pub(super) fn ask_person(
    call: &HookCall,
    outcome: Option<&CheckOutcome>,
    verdict: &Verdict,
    data: &DataDir,
) -> Verdict {
    let deny = |why: String| Verdict {
        effect: Effect::Deny,
        reason: format!("{}; {why}", verdict.reason),
        updated_input: None,
    };
    let wait = wait_limit(call.agent);
    if wait.is_zero() || !channel_running(data) {
        // The agent's answer says how to approve when it cannot ask; one
        // set up to ignore its ask gets the same deny here.
        return if call.agent.protocol().can_ask {
            deny(format!(
                "no toolgate channel is running ({})",
                toolgate_hooks::HOW_TO_APPROVE
            ))
        } else {
            verdict.clone()
        };
    }
    // The answer and its record must come before the timer's block.
    if let Err(e) = watchdog::extend(wait + MARGIN) {
        return deny(format!("cannot wait for a person: {e}"));
    }
    match wait_for(call, outcome, verdict, data, wait) {
        Ok(Some(answer)) => answered(verdict, answer),
        Ok(None) => deny(format!(
            "nobody answered on toolgate's channels within {} s ({})",
            wait.as_secs(),
            toolgate_hooks::HOW_TO_APPROVE
        )),
        Err(e) => deny(format!(
            "the ask could not be handed to toolgate's channels: {e}"
        )),
    }
}

fn wait_for(
    call: &HookCall,
    outcome: Option<&CheckOutcome>,
    verdict: &Verdict,
    data: &DataDir,
    wait: Duration,
) -> Result<Option<toolgate_store::QueuedAnswer>, toolgate_store::StoreError> {
    let start = Instant::now();
    let queue = AskQueue::open(queue_path(data))?;
    let deadline =
        toolgate_core::now_ms().saturating_add(i64::try_from(wait.as_millis()).unwrap_or(i64::MAX));
    let id = queue.post(
        call.agent.name(),
        &prompt(call, outcome, verdict, wait),
        deadline,
    )?;
    let mut checked = Instant::now();
    let got = loop {
        if let Some(answer) = queue.answer_of(id)? {
            break Some(answer);
        }
        if start.elapsed() >= wait {
            break None;
        }
        if checked.elapsed() >= RECHECK {
            // The channel went away: nobody is left to answer.
            if !channel_running(data) {
                break None;
            }
            checked = Instant::now();
        }
        std::thread::sleep(POLL.min(wait.saturating_sub(start.elapsed())));
    };
    if let Err(e) = queue.withdraw(id) {
        tracing::debug!(error = %e, "cannot withdraw the ask; it expires");
    }
    Ok(got)
}

fn answered(verdict: &Verdict, got: toolgate_store::QueuedAnswer) -> Verdict {
    let by = got.answered_by;
    let (effect, how) = match got.answer {
        Answer::Once | Answer::Session | Answer::Always => {
            (Effect::Allow, format!("allowed once by the person ({by})"))
        }
        Answer::Reject { message: Some(m) } => {
            (Effect::Deny, format!("rejected by the person ({by}): {m}"))
        }
        Answer::Reject { message: None } => {
            (Effect::Deny, format!("rejected by the person ({by})"))
        }
        Answer::ClientDeclined { why } => (Effect::Deny, format!("declined ({by}): {why}")),
    };
    Verdict {
        effect,
        reason: format!("{}; {how}", verdict.reason),
        updated_input: None,
    }
}
