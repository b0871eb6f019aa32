//! MCP tools seen through an agent's hook: their names, and the paths, URLs
//! and commands found in their arguments.

use serde_json::Value;

use crate::Agent;

/// An MCP tool's server and tool name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpName {
    /// The configured server name.
    pub server: String,
    /// The tool's own name.
    pub tool: String,
}

impl McpName {
    /// The action rules name it by: `SERVER__TOOL`, as for the tools
    /// toolgate proxies from MCP servers, whatever the agent calls it, so
    /// one rule (`[permission] "github__*" = "allow"`) covers the tool in
    /// every agent.
    pub fn action(&self) -> String {
        format!("{}__{}", self.server, self.tool)
    }
}

/// The server and tool of `tool` when it names an MCP tool in `agent`'s
/// naming: `mcp__server__tool` (Claude Code, Codex, Gemini CLI),
/// `mcp_server_tool` (older Gemini CLI), `server_tool` (OpenCode); `server`
/// is what the agent said (Gemini's `mcp_context`, Cursor's MCP event).
pub fn mcp_name(agent: Agent, tool: &str, server: Option<&str>) -> Option<McpName> {
    if let Some(server) = server {
        let own = tool
            .strip_prefix("mcp__")
            .and_then(|rest| rest.strip_prefix(server))
            .and_then(|rest| rest.strip_prefix("__"))
            .or_else(|| {
                tool.strip_prefix("mcp_")
                    .and_then(|rest| rest.strip_prefix(server))
                    .and_then(|rest| rest.strip_prefix('_'))
            })
            .unwrap_or(tool);
        return Some(McpName {
            server: server.to_string(),
            tool: own.to_string(),
        });
    }
    if let Some(rest) = tool.strip_prefix("mcp__") {
        let (server, own) = rest.split_once("__")?;
        if server.is_empty() || own.is_empty() {
            return None;
        }
        return Some(McpName {
            server: server.into(),
            tool: own.into(),
        });
    }
    let split = match agent {
        Agent::Gemini | Agent::Agy => tool.strip_prefix("mcp_").and_then(|r| r.split_once('_')),
        Agent::OpenCode => tool.split_once('_'),
        _ => None,
    };
    let (server, own) = split?;
    (!server.is_empty() && !own.is_empty()).then(|| McpName {
        server: server.into(),
        tool: own.into(),
    })
}

/// What an argument of an MCP tool holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// A filesystem path.
    Path(String),
    /// A URL.
    Url(String),
    /// A shell command.
    Command(String),
    /// A `file:` URL that names no local path: asked.
    Unjudgeable(String),
}

/// Argument names whose value is a shell command.
const COMMAND_KEYS: &[&str] = &["command", "cmd", "script", "shell", "commandline"];
/// Argument names whose value is a path, whatever it looks like.
const PATH_KEYS: &[&str] = &[
    "path",
    "paths",
    "file",
    "files",
    "filename",
    "file_path",
    "filepath",
    "dir",
    "directory",
    "dir_path",
    "source",
    "destination",
    "dest",
    "target",
    "cwd",
    "root",
    "output",
    "output_path",
];
/// How deep and how many values are looked at (a bigger input is asked).
const MAX_DEPTH: usize = 16;
const MAX_VALUES: usize = 4096;

/// The paths, URLs and commands in `args`, found by argument name and by
/// what a string looks like. `None` when the input is too large or deep to
/// look through whole.
pub fn scan(args: &Value) -> Option<Vec<Found>> {
    let mut found = Vec::new();
    let mut seen = 0;
    walk(args, None, 0, &mut seen, &mut found).then_some(found)
}

fn walk(
    value: &Value,
    key: Option<&str>,
    depth: usize,
    seen: &mut usize,
    found: &mut Vec<Found>,
) -> bool {
    *seen += 1;
    if depth > MAX_DEPTH || *seen > MAX_VALUES {
        return false;
    }
    match value {
        Value::String(s) => {
            classify(s, key, found);
            true
        }
        Value::Array(items) => items.iter().all(|v| walk(v, key, depth + 1, seen, found)),
        // A key is judged by its shape alone, as a value under no key is
        // (`{"files": {"/home/u/.ssh/id_rsa": "r"}}`).
        Value::Object(map) => map.iter().all(|(k, v)| {
            classify(k, None, found);
            walk(v, Some(k.as_str()), depth + 1, seen, found)
        }),
        _ => true,
    }
}

fn classify(s: &str, key: Option<&str>, found: &mut Vec<Found>) {
    let key = key.map(str::to_ascii_lowercase);
    let key = key.as_deref().unwrap_or("");
    let trimmed = s.trim();
    if trimmed.is_empty() {
        return;
    }
    if COMMAND_KEYS.contains(&key) {
        found.push(Found::Command(trimmed.to_string()));
        return;
    }
    // A URL as a WHATWG parser reads it (Node's `fetch`): `http:/h`,
    // `http:\\h` and `http:h` are `http://h/` to it. A `file:` URL is the
    // path it names, escapes decoded.
    if trimmed.contains(':')
        && let Ok(url) = url::Url::parse(trimmed)
    {
        match url.scheme() {
            "file" => {
                found.push(
                    match url
                        .to_file_path()
                        .ok()
                        .and_then(|p| p.to_str().map(String::from))
                    {
                        Some(path) => Found::Path(path),
                        None => Found::Unjudgeable(trimmed.to_string()),
                    },
                );
                return;
            }
            "http" | "https" | "ws" | "wss" | "ftp" => {
                found.push(Found::Url(url.to_string()));
                return;
            }
            _ if url.host().is_some() => {
                found.push(Found::Url(url.to_string()));
                return;
            }
            _ => {}
        }
    }
    let looks_like_path = trimmed.starts_with('/')
        || trimmed.starts_with("~/")
        || trimmed == "~"
        || trimmed.starts_with("./")
        || trimmed.starts_with("../")
        || (trimmed.contains('/') && trimmed.split('/').any(|c| c == ".."));
    // A secret file's name is a path under any key (`{"name": ".env"}`).
    let named_path = PATH_KEYS.contains(&key)
        || key.ends_with("_path")
        || key.ends_with("path")
        || toolgate_core::credential::names_credential_file(trimmed);
    if (looks_like_path || named_path) && !trimmed.contains('\n') {
        found.push(Found::Path(trimmed.to_string()));
    }
}

/// Words in an MCP tool's name that say it changes what a path names.
const WRITE_WORDS: &[&str] = &[
    "write", "create", "edit", "delete", "remove", "move", "rename", "save", "put", "upload",
    "download", "mkdir", "patch", "append", "update", "copy", "set", "insert", "replace",
];

/// Whether an MCP tool's name says it writes (its path arguments are then
/// write requests, not reads).
pub fn writes(tool: &str) -> bool {
    let lower = tool.to_ascii_lowercase();
    lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| WRITE_WORDS.iter().any(|w| word.starts_with(w)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_in_each_agents_convention() {
        let n = mcp_name(Agent::ClaudeCode, "mcp__github__create_issue", None).unwrap();
        assert_eq!(
            (n.server.as_str(), n.tool.as_str()),
            ("github", "create_issue")
        );
        assert_eq!(n.action(), "github__create_issue");
        let g = mcp_name(Agent::Gemini, "mcp_fs_read_file", None).unwrap();
        assert_eq!((g.server.as_str(), g.tool.as_str()), ("fs", "read_file"));
        let g2 = mcp_name(Agent::Gemini, "mcp_my_fs_read_file", Some("my_fs")).unwrap();
        assert_eq!(g2.tool, "read_file");
        let o = mcp_name(Agent::OpenCode, "fs_read_file", None).unwrap();
        assert_eq!(o.server, "fs");
        assert_eq!(mcp_name(Agent::ClaudeCode, "Bash", None), None);
        assert_eq!(mcp_name(Agent::ClaudeCode, "mcp__x", None), None);
    }

    #[test]
    fn scan_finds_paths_urls_and_commands() {
        let found = scan(&json!({
            "path": "src/a.rs",
            "nested": {"to": "~/.ssh/id_rsa", "list": ["https://example.com/x"]},
            "command": "rm -rf /",
            "note": "just text",
        }))
        .unwrap();
        assert!(found.contains(&Found::Path("src/a.rs".into())));
        assert!(found.contains(&Found::Path("~/.ssh/id_rsa".into())));
        assert!(found.contains(&Found::Url("https://example.com/x".into())));
        assert!(found.contains(&Found::Command("rm -rf /".into())));
        assert_eq!(found.len(), 4);
    }

    #[test]
    fn scan_gives_up_on_deep_input() {
        let mut v = json!("x");
        for _ in 0..40 {
            v = json!([v]);
        }
        assert_eq!(scan(&v), None);
    }

    #[test]
    fn write_words() {
        assert!(writes("write_file"));
        assert!(writes("download"));
        assert!(writes("createDirectory"));
        assert!(!writes("read_text_file"));
        assert!(!writes("fetch"));
    }
}
