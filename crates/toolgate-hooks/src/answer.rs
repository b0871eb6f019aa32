//! toolgate's decision in each agent's answer format, and each agent's
//! blocking form.

use serde_json::{Value, json};
use toolgate_core::Effect;

use crate::Agent;

/// What toolgate decided for a hook call, ready to be answered.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Allow, ask or deny.
    pub effect: Effect,
    /// Why (shown to the model or the person, as the agent does).
    pub reason: String,
    /// The tool input to run instead (an allow whose command was rewritten
    /// to run inside the sandbox); only for agents that accept it.
    pub updated_input: Option<Value>,
}

/// An answer to an agent: what to print and the exit status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// Printed on stdout (JSON, or nothing).
    pub stdout: String,
    /// Printed on stderr.
    pub stderr: String,
    /// The exit status.
    pub exit: u8,
}

/// Where an agent that cannot ask is told how to approve: toolgate's own
/// channels, a rule, or toolgate as the agent's MCP server.
pub const HOW_TO_APPROVE: &str = "to allow it, keep `toolgate approvals watch` running in a \
terminal (or toolgate's approval page open: `toolgate serve`) and the call is asked there, \
add a rule to .toolgate/config.toml (see `toolgate policy explain`), or run the agent with \
toolgate as its MCP server";

/// The reason as the agent shows it, hidden characters escaped: it quotes
/// the command or path the model chose, and the agent may print it to a
/// terminal as it is (a command's escape sequences would rewrite the screen).
fn prefixed(reason: &str) -> String {
    format!(
        "toolgate: {}",
        toolgate_core::visible::escape_hidden(reason, &[])
    )
}

/// The blocking form of `agent`, saying `reason`: exit 2 with the reason on
/// stderr where exit 2 blocks, else a deny answer on stdout. Every failure
/// of the hook (bad payload, internal error, panic, time budget) answers
/// with it.
pub fn block(agent: Agent, reason: &str) -> Reply {
    let reason = prefixed(reason);
    Reply {
        // A JSON deny as well, for an agent that reads stdout anyway (and
        // the only blocking form of one that exit 2 does not block).
        stdout: deny_json(agent, &reason)
            .map(|v| v.to_string())
            .unwrap_or_default(),
        stderr: reason,
        exit: if agent.protocol().exit2_blocks { 2 } else { 0 },
    }
}

/// A deny in the agent's JSON, for agents whose answer JSON is read even
/// with exit 2, or that block only through JSON.
fn deny_json(agent: Agent, reason: &str) -> Option<Value> {
    match agent {
        Agent::Copilot => Some(json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        })),
        Agent::Cursor => Some(json!({
            "permission": "deny",
            "user_message": reason,
            "agent_message": reason,
        })),
        Agent::OpenCode | Agent::Gemini | Agent::Agy => {
            Some(json!({ "decision": "deny", "reason": reason }))
        }
        // Claude Code and Codex read stdout only on exit 0.
        Agent::ClaudeCode | Agent::Codex => None,
    }
}

/// `verdict` as `agent`'s answer. An ask the agent cannot put to a person
/// is a deny that says how to approve; a rewritten input the agent cannot
/// take never reaches here (the caller asks instead).
pub fn reply(agent: Agent, verdict: &Verdict) -> Reply {
    let protocol = agent.protocol();
    let mut effect = verdict.effect;
    let mut reason = verdict.reason.clone();
    if effect == Effect::Ask && !protocol.can_ask {
        effect = Effect::Deny;
        reason = format!("{reason} ({HOW_TO_APPROVE})");
    }
    if effect == Effect::Deny {
        return block(agent, &reason);
    }
    let reason = prefixed(&reason);
    let updated = verdict.updated_input.clone().filter(|_| protocol.rewrites);
    let decision = effect.as_str();
    let body = match agent {
        Agent::ClaudeCode | Agent::Codex => {
            // Codex enforces only deny, or allow with `updatedInput`: a
            // plain allow leaves the call to its own approval policy.
            if agent == Agent::Codex && updated.is_none() {
                return Reply {
                    stdout: String::new(),
                    stderr: String::new(),
                    exit: 0,
                };
            }
            let mut out = json!({
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            });
            if let Some(input) = updated {
                out["updatedInput"] = input;
            }
            json!({ "hookSpecificOutput": out })
        }
        Agent::Gemini | Agent::Agy => json!({ "decision": decision, "reason": reason }),
        Agent::Cursor => {
            let mut out = json!({
                "permission": decision,
                "user_message": reason,
                "agent_message": reason,
            });
            if let Some(input) = updated {
                out["updated_input"] = input;
            }
            out
        }
        Agent::Copilot => {
            let mut out = json!({
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            });
            if let Some(input) = updated {
                out["modifiedArgs"] = input;
            }
            out
        }
        Agent::OpenCode => {
            let mut out = json!({ "decision": decision, "reason": reason });
            if let Some(input) = updated {
                out["args"] = input;
            }
            out
        }
    };
    Reply {
        stdout: body.to_string(),
        stderr: String::new(),
        exit: 0,
    }
}

/// The answer to a post-tool-use event (nothing to decide: the outcome was
/// recorded).
pub fn acknowledge(agent: Agent) -> Reply {
    let _ = agent;
    Reply {
        stdout: String::new(),
        stderr: String::new(),
        exit: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(effect: Effect) -> Verdict {
        Verdict {
            effect,
            reason: "because".into(),
            updated_input: None,
        }
    }

    fn json_of(reply: &Reply) -> Value {
        serde_json::from_str(&reply.stdout).unwrap()
    }

    #[test]
    fn claude_code_answers() {
        let allow = reply(Agent::ClaudeCode, &verdict(Effect::Allow));
        assert_eq!(allow.exit, 0);
        assert_eq!(
            json_of(&allow)["hookSpecificOutput"]["permissionDecision"],
            "allow"
        );
        let ask = reply(Agent::ClaudeCode, &verdict(Effect::Ask));
        assert_eq!(
            json_of(&ask)["hookSpecificOutput"]["permissionDecision"],
            "ask"
        );
        assert_eq!(
            json_of(&ask)["hookSpecificOutput"]["permissionDecisionReason"],
            "toolgate: because"
        );
        let deny = reply(Agent::ClaudeCode, &verdict(Effect::Deny));
        assert_eq!((deny.exit, deny.stdout.as_str()), (2, ""));
        assert_eq!(deny.stderr, "toolgate: because");
    }

    #[test]
    fn rewrites_go_where_each_agent_reads_them() {
        let mut v = verdict(Effect::Allow);
        v.updated_input = Some(json!({"command": "x"}));
        let c = json_of(&reply(Agent::ClaudeCode, &v));
        assert_eq!(c["hookSpecificOutput"]["updatedInput"]["command"], "x");
        let x = json_of(&reply(Agent::Codex, &v));
        assert_eq!(x["hookSpecificOutput"]["updatedInput"]["command"], "x");
        assert_eq!(
            json_of(&reply(Agent::Cursor, &v))["updated_input"]["command"],
            "x"
        );
        assert_eq!(
            json_of(&reply(Agent::Copilot, &v))["modifiedArgs"]["command"],
            "x"
        );
        assert_eq!(json_of(&reply(Agent::OpenCode, &v))["args"]["command"], "x");
        // Gemini cannot take it.
        assert!(
            json_of(&reply(Agent::Gemini, &v))
                .get("tool_input")
                .is_none()
        );
    }

    #[test]
    fn agents_that_cannot_ask_get_a_deny_saying_how_to_approve() {
        for agent in [Agent::Codex, Agent::Gemini, Agent::OpenCode] {
            let r = reply(agent, &verdict(Effect::Ask));
            assert_eq!(r.exit, 2, "{agent}");
            assert!(r.stderr.contains("to allow it"), "{agent}");
        }
    }

    #[test]
    fn codex_plain_allow_says_nothing() {
        let r = reply(Agent::Codex, &verdict(Effect::Allow));
        assert_eq!((r.stdout.as_str(), r.exit), ("", 0));
    }

    #[test]
    fn blocking_forms() {
        for agent in Agent::ALL {
            let b = block(agent, "broken");
            if agent == Agent::Copilot {
                assert_eq!(b.exit, 0);
                assert_eq!(json_of(&b)["permissionDecision"], "deny");
            } else {
                assert_eq!(b.exit, 2, "{agent}");
                assert!(b.stderr.contains("broken"));
            }
        }
        assert_eq!(json_of(&block(Agent::Cursor, "x"))["permission"], "deny");
    }

    #[test]
    fn gemini_and_cursor_and_copilot_allow() {
        assert_eq!(
            json_of(&reply(Agent::Gemini, &verdict(Effect::Allow)))["decision"],
            "allow"
        );
        assert_eq!(
            json_of(&reply(Agent::Agy, &verdict(Effect::Ask)))["decision"],
            "ask"
        );
        assert_eq!(
            json_of(&reply(Agent::Cursor, &verdict(Effect::Ask)))["permission"],
            "ask"
        );
        assert_eq!(
            json_of(&reply(Agent::Copilot, &verdict(Effect::Allow)))["permissionDecision"],
            "allow"
        );
    }

    /// A denied command holding terminal escapes, quoted in the reason, went
    /// to the agent's stderr and JSON as it was: an agent printing it let
    /// the escapes erase or rewrite what the person saw.
    #[test]
    fn a_reason_quoting_a_command_with_escapes_reaches_the_agent_escaped() {
        let verdict = Verdict {
            effect: Effect::Deny,
            reason: "`curl x | sh \u{1b}[2K\u{1b}[1A` is denied \u{202e}".into(),
            updated_input: None,
        };
        for agent in [Agent::ClaudeCode, Agent::Gemini, Agent::Cursor] {
            let r = reply(agent, &verdict);
            for text in [&r.stderr, &r.stdout] {
                assert!(
                    !text.contains('\u{1b}') && !text.contains('\u{202e}'),
                    "{text:?}"
                );
            }
            assert!(r.stderr.contains("sh \\u{001B}[2K"), "{}", r.stderr);
        }
    }
}
