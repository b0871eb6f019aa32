//! An agent's hook payload, read into one shape.

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::{Agent, HookError};

/// The largest payload read (a tool input can carry a whole file).
pub const MAX_PAYLOAD: usize = 32 * 1024 * 1024;

/// Which step of a tool call the payload is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookEvent {
    /// Before the tool runs: toolgate decides.
    PreToolUse,
    /// After the tool ran: toolgate records the outcome the agent reports.
    PostToolUse {
        /// Whether the agent reported success.
        ok: bool,
    },
    /// Any other event: answered in the blocking form (toolgate is only
    /// installed for tool events, so another one means a wrong install).
    Other(String),
}

/// One hook payload, whatever the agent.
#[derive(Clone, Debug, PartialEq)]
pub struct HookCall {
    /// The agent that sent it.
    pub agent: Agent,
    /// The step.
    pub event: HookEvent,
    /// The agent's session (conversation) id.
    pub session_id: Option<String>,
    /// The agent's id of this tool call.
    pub call_id: Option<String>,
    /// The agent's tool name as it sent it (`Bash`, `run_shell_command`,
    /// `mcp__github__create_issue`…).
    pub tool: String,
    /// The tool's input as the agent sent it (an object).
    pub input: Value,
    /// The directory the agent works in.
    pub cwd: Option<PathBuf>,
    /// The project root the agent named, when it names one.
    pub project_dir: Option<PathBuf>,
    /// The MCP server the agent says the tool belongs to, when it says.
    pub mcp_server: Option<String>,
    /// What the tool returned (post-tool-use events).
    pub output: Option<Value>,
}

fn text(obj: &Map<String, Value>, key: &str) -> Option<String> {
    match obj.get(key)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn required(obj: &Map<String, Value>, key: &'static str) -> Result<String, HookError> {
    text(obj, key).ok_or(HookError::Missing {
        field: key,
        what: "non-empty string",
    })
}

/// A tool input: an object, or a string holding one (Copilot's `toolArgs`,
/// Cursor's MCP `tool_input`). Anything else is an error.
fn input_object(value: Option<&Value>, field: &'static str) -> Result<Value, HookError> {
    let missing = HookError::Missing {
        field,
        what: "JSON object",
    };
    match value {
        Some(Value::Object(_)) => Ok(value.cloned().unwrap_or(Value::Null)),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => Ok(v),
            _ => Err(missing),
        },
        Some(Value::Null) | None => Ok(Value::Object(Map::new())),
        _ => Err(missing),
    }
}

/// Reads `bytes` as `agent`'s hook payload.
pub fn parse(agent: Agent, bytes: &[u8]) -> Result<HookCall, HookError> {
    if bytes.len() > MAX_PAYLOAD {
        return Err(HookError::TooLarge(MAX_PAYLOAD));
    }
    let value: Value = serde_json::from_slice(bytes)?;
    let Value::Object(obj) = value else {
        return Err(HookError::NotObject);
    };
    let cwd = text(&obj, "cwd").map(PathBuf::from);
    let mut call = HookCall {
        agent,
        event: HookEvent::PreToolUse,
        session_id: None,
        call_id: None,
        tool: String::new(),
        input: Value::Null,
        cwd,
        project_dir: None,
        mcp_server: None,
        output: None,
    };
    match agent {
        Agent::ClaudeCode | Agent::Codex => {
            call.event = match required(&obj, "hook_event_name")?.as_str() {
                "PreToolUse" => HookEvent::PreToolUse,
                "PostToolUse" => HookEvent::PostToolUse { ok: true },
                "PostToolUseFailure" => HookEvent::PostToolUse { ok: false },
                other => HookEvent::Other(other.to_string()),
            };
            call.session_id = text(&obj, "session_id");
            call.call_id = text(&obj, "tool_use_id");
            call.output = obj.get("tool_response").cloned();
            call.tool = tool_name(&obj, "tool_name", &call.event)?;
            call.input = input_object(obj.get("tool_input"), "tool_input")?;
        }
        Agent::Gemini | Agent::Agy => {
            call.event = match required(&obj, "hook_event_name")?.as_str() {
                "BeforeTool" => HookEvent::PreToolUse,
                "AfterTool" => HookEvent::PostToolUse {
                    ok: obj
                        .get("tool_response")
                        .and_then(|r| r.get("error"))
                        .is_none_or(Value::is_null),
                },
                other => HookEvent::Other(other.to_string()),
            };
            call.session_id = text(&obj, "session_id");
            call.call_id = text(&obj, "tool_call_id").or_else(|| text(&obj, "tool_use_id"));
            call.output = obj.get("tool_response").cloned();
            call.mcp_server = obj
                .get("mcp_context")
                .and_then(|c| c.get("server_name"))
                .and_then(Value::as_str)
                .map(str::to_string);
            call.tool = tool_name(&obj, "tool_name", &call.event)?;
            call.input = input_object(obj.get("tool_input"), "tool_input")?;
        }
        Agent::Cursor => parse_cursor(&obj, &mut call)?,
        Agent::Copilot => {
            // Copilot's payload names no event: a post-tool-use one carries
            // the tool's result.
            call.event = match obj.get("toolResult") {
                Some(result) => HookEvent::PostToolUse {
                    ok: result.get("resultType").and_then(Value::as_str) != Some("failure"),
                },
                None => HookEvent::PreToolUse,
            };
            call.output = obj.get("toolResult").cloned();
            call.session_id = text(&obj, "sessionId");
            call.tool = required(&obj, "toolName")?;
            call.input = input_object(obj.get("toolArgs"), "toolArgs")?;
        }
        Agent::OpenCode => {
            call.event = match required(&obj, "event")?.as_str() {
                "tool.execute.before" => HookEvent::PreToolUse,
                "tool.execute.after" => HookEvent::PostToolUse {
                    ok: obj.get("error").is_none_or(Value::is_null),
                },
                other => HookEvent::Other(other.to_string()),
            };
            call.session_id = text(&obj, "sessionID");
            call.call_id = text(&obj, "callID");
            call.project_dir = text(&obj, "directory").map(PathBuf::from);
            call.output = obj.get("output").cloned();
            call.tool = tool_name(&obj, "tool", &call.event)?;
            call.input = input_object(obj.get("args"), "args")?;
        }
    }
    Ok(call)
}

/// The tool name of a tool event (other events may have none).
fn tool_name(
    obj: &Map<String, Value>,
    key: &'static str,
    event: &HookEvent,
) -> Result<String, HookError> {
    match event {
        HookEvent::Other(_) => Ok(text(obj, key).unwrap_or_default()),
        _ => required(obj, key),
    }
}

fn parse_cursor(obj: &Map<String, Value>, call: &mut HookCall) -> Result<(), HookError> {
    call.session_id = text(obj, "conversation_id");
    call.call_id = text(obj, "tool_use_id").or_else(|| text(obj, "generation_id"));
    call.project_dir = obj
        .get("workspace_roots")
        .and_then(Value::as_array)
        .and_then(|roots| roots.first())
        .and_then(Value::as_str)
        .map(PathBuf::from);
    let event = required(obj, "hook_event_name")?;
    match event.as_str() {
        "preToolUse" => {
            call.tool = required(obj, "tool_name")?;
            call.input = input_object(obj.get("tool_input"), "tool_input")?;
        }
        "beforeShellExecution" => {
            call.tool = "Shell".into();
            let mut input = Map::new();
            input.insert("command".into(), Value::String(required(obj, "command")?));
            if let Some(cwd) = text(obj, "cwd") {
                input.insert("cwd".into(), Value::String(cwd));
            }
            call.input = Value::Object(input);
        }
        "beforeReadFile" => {
            call.tool = "Read".into();
            let mut input = Map::new();
            input.insert(
                "file_path".into(),
                Value::String(required(obj, "file_path")?),
            );
            call.input = Value::Object(input);
        }
        "beforeMCPExecution" => {
            let tool = required(obj, "tool_name")?;
            call.mcp_server = text(obj, "server").or_else(|| Some("cursor".into()));
            call.tool = tool;
            call.input = input_object(obj.get("tool_input"), "tool_input")?;
        }
        "postToolUse" | "afterShellExecution" | "afterMCPExecution" | "afterFileEdit" => {
            call.event = HookEvent::PostToolUse { ok: true };
            call.tool = text(obj, "tool_name").unwrap_or_else(|| event.clone());
            call.input = input_object(obj.get("tool_input"), "tool_input").unwrap_or(Value::Null);
            call.output = obj.get("tool_output").cloned();
        }
        "postToolUseFailure" => {
            call.event = HookEvent::PostToolUse { ok: false };
            call.tool = text(obj, "tool_name").unwrap_or_else(|| event.clone());
            call.input = input_object(obj.get("tool_input"), "tool_input").unwrap_or(Value::Null);
        }
        _ => call.event = HookEvent::Other(event),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(agent: Agent, v: Value) -> HookCall {
        parse(agent, v.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn claude_code_pre_tool_use() {
        let call = parsed(
            Agent::ClaudeCode,
            json!({"session_id":"abc123","transcript_path":"/t.jsonl","cwd":"/ws",
                   "permission_mode":"default","hook_event_name":"PreToolUse",
                   "tool_name":"Bash","tool_input":{"command":"ls","description":"list"},
                   "tool_use_id":"toolu_01"}),
        );
        assert_eq!(call.event, HookEvent::PreToolUse);
        assert_eq!(call.tool, "Bash");
        assert_eq!(call.session_id.as_deref(), Some("abc123"));
        assert_eq!(call.call_id.as_deref(), Some("toolu_01"));
        assert_eq!(call.cwd, Some(PathBuf::from("/ws")));
        assert_eq!(call.input["command"], "ls");
    }

    #[test]
    fn codex_post_tool_use_carries_the_response() {
        let call = parsed(
            Agent::Codex,
            json!({"session_id":"s","turn_id":"t","cwd":"/ws","hook_event_name":"PostToolUse",
                   "tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"c1",
                   "tool_response":"a\nb"}),
        );
        assert_eq!(call.event, HookEvent::PostToolUse { ok: true });
        assert_eq!(call.output, Some(json!("a\nb")));
    }

    #[test]
    fn gemini_before_tool_with_mcp_context() {
        let call = parsed(
            Agent::Gemini,
            json!({"session_id":"g","transcript_path":"","cwd":"/ws","hook_event_name":"BeforeTool",
                   "timestamp":"2026-01-01T00:00:00Z","tool_name":"mcp_fs_read",
                   "tool_input":{"path":"/etc/passwd"},
                   "mcp_context":{"server_name":"fs","tool_name":"read"}}),
        );
        assert_eq!(call.mcp_server.as_deref(), Some("fs"));
        assert_eq!(call.tool, "mcp_fs_read");
    }

    #[test]
    fn copilot_tool_args_come_as_a_json_string() {
        let call = parsed(
            Agent::Copilot,
            json!({"timestamp":1704614600000u64,"cwd":"/ws","toolName":"bash",
                   "toolArgs":"{\"command\":\"npm test\",\"description\":\"test\"}"}),
        );
        assert_eq!(call.event, HookEvent::PreToolUse);
        assert_eq!(call.input["command"], "npm test");
        let post = parsed(
            Agent::Copilot,
            json!({"timestamp":1,"cwd":"/ws","toolName":"bash","toolArgs":"{}",
                   "toolResult":{"resultType":"failure","textResultForLlm":"x"}}),
        );
        assert_eq!(post.event, HookEvent::PostToolUse { ok: false });
    }

    #[test]
    fn cursor_specific_events_become_tool_calls() {
        let shell = parsed(
            Agent::Cursor,
            json!({"conversation_id":"c","generation_id":"g","hook_event_name":"beforeShellExecution",
                   "command":"git status","cwd":"/ws","workspace_roots":["/ws"]}),
        );
        assert_eq!(shell.tool, "Shell");
        assert_eq!(shell.input["command"], "git status");
        assert_eq!(shell.project_dir, Some(PathBuf::from("/ws")));
        let mcp = parsed(
            Agent::Cursor,
            json!({"conversation_id":"c","hook_event_name":"beforeMCPExecution",
                   "tool_name":"read_file","tool_input":"{\"path\":\"/x\"}","command":"npx fs"}),
        );
        assert_eq!(mcp.input["path"], "/x");
        assert!(mcp.mcp_server.is_some());
    }

    #[test]
    fn opencode_plugin_payload() {
        let call = parsed(
            Agent::OpenCode,
            json!({"event":"tool.execute.before","tool":"bash","sessionID":"ses_1",
                   "callID":"call_1","args":{"command":"ls"},"directory":"/ws","cwd":"/ws"}),
        );
        assert_eq!(call.call_id.as_deref(), Some("call_1"));
        assert_eq!(call.project_dir, Some(PathBuf::from("/ws")));
    }

    #[test]
    fn bad_payloads_are_errors() {
        for bad in [
            &b"garbage"[..],
            b"[]",
            b"{}",
            br#"{"hook_event_name":"PreToolUse"}"#,
            br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":7}"#,
        ] {
            assert!(parse(Agent::ClaudeCode, bad).is_err(), "{bad:?}");
        }
        assert!(
            parse(
                Agent::Copilot,
                br#"{"toolName":"bash","toolArgs":"not json"}"#
            )
            .is_err()
        );
    }

    #[test]
    fn unknown_events_are_kept_as_other() {
        let call = parsed(
            Agent::ClaudeCode,
            json!({"hook_event_name":"UserPromptSubmit","prompt":"hi","session_id":"s"}),
        );
        assert_eq!(call.event, HookEvent::Other("UserPromptSubmit".into()));
    }
}
