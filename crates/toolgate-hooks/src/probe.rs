//! A hook call to what toolgate judges: calls of its built-in tools (whose
//! intents compute the requests exactly as for toolgate's own tools) and
//! plain requests.

use std::path::Path;

use serde_json::{Map as JsonMap, Value, json};
use toolgate_core::{PermissionRequest, Risk};

use crate::HookCall;
use crate::mcp::{self, Found, McpName};
use crate::rewrite::{ShellField, shell_quote};
use crate::table::{Fields, Map, lookup};

/// One thing the gate judges for a hook call.
#[derive(Clone, Debug, PartialEq)]
pub enum Probe {
    /// Judge as toolgate's built-in `tool` called with `input`.
    Tool {
        /// The built-in tool (`bash`, `read`, `write`, …).
        tool: &'static str,
        /// Its input, in toolgate's field names.
        input: Value,
    },
    /// Judge this request as it is.
    Request(PermissionRequest),
    /// Nothing toolgate can judge: ask, saying why.
    Ask(String),
}

/// What a hook call maps to.
#[derive(Clone, Debug, PartialEq)]
pub struct Mapped {
    /// What to judge; the call's decision is the strictest of them. Empty
    /// for a tool that acts only inside the agent.
    pub probes: Vec<Probe>,
    /// The shell command and the input field it came from, when the call
    /// runs one (for the sandbox rewrite).
    pub shell: Option<ShellField>,
    /// The MCP tool, when the call is one.
    pub mcp: Option<McpName>,
}

fn field(input: &Value, names: Fields) -> Option<(&'static str, &Value)> {
    names
        .iter()
        .find_map(|n| input.get(*n).filter(|v| !v.is_null()).map(|v| (*n, v)))
}

fn text_field(input: &Value, names: Fields) -> Option<String> {
    field(input, names)
        .and_then(|(_, v)| v.as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A path as the agent meant it: relative paths are relative to the
/// agent's working directory.
fn agent_path(call: &HookCall, path: &str) -> String {
    match &call.cwd {
        Some(cwd) if !Path::new(path).is_absolute() && !path.starts_with('~') => {
            cwd.join(path).display().to_string()
        }
        _ => path.to_string(),
    }
}

fn tool(tool: &'static str, input: Value) -> Probe {
    Probe::Tool { tool, input }
}

fn read(path: String) -> Probe {
    tool("read", json!({ "path": path }))
}

fn write(path: String) -> Probe {
    tool("write", json!({ "path": path, "content": "" }))
}

/// Maps `call` through its agent's table; a tool not in it is judged as an
/// MCP tool by its arguments when it names one, else asked.
pub fn probes(call: &HookCall) -> Mapped {
    let mut mapped = Mapped {
        probes: Vec::new(),
        shell: None,
        mcp: None,
    };
    if let Some(row) = lookup(call.agent, &call.tool) {
        map_row(call, row.map, &mut mapped);
        return mapped;
    }
    match mcp::mcp_name(call.agent, &call.tool, call.mcp_server.as_deref()) {
        Some(name) => {
            map_mcp(call, &name, &mut mapped.probes);
            mapped.mcp = Some(name);
        }
        None => mapped.probes.push(Probe::Ask(format!(
            "toolgate does not know {}'s tool `{}`",
            call.agent, call.tool
        ))),
    }
    mapped
}

fn missing(call: &HookCall, what: &str) -> Probe {
    Probe::Ask(format!(
        "{}'s `{}` call has no {what} toolgate can read",
        call.agent, call.tool
    ))
}

fn map_row(call: &HookCall, map: Map, mapped: &mut Mapped) {
    let input = &call.input;
    let out = &mut mapped.probes;
    match map {
        Map::Shell { command, workdir } => {
            let Some((name, value)) = field(input, command) else {
                out.push(missing(call, "command"));
                return;
            };
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Array(argv) => {
                    let words: Option<Vec<&str>> = argv.iter().map(Value::as_str).collect();
                    match words {
                        Some(words) => words
                            .iter()
                            .map(|w| shell_quote(w))
                            .collect::<Vec<_>>()
                            .join(" "),
                        None => {
                            out.push(missing(call, "command"));
                            return;
                        }
                    }
                }
                _ => {
                    out.push(missing(call, "command"));
                    return;
                }
            };
            let dir = text_field(input, workdir)
                .map(|d| agent_path(call, &d))
                .or_else(|| call.cwd.as_ref().map(|c| c.display().to_string()));
            let mut bash = JsonMap::new();
            bash.insert("command".into(), Value::String(text.clone()));
            if let Some(dir) = &dir {
                bash.insert("workdir".into(), Value::String(dir.clone()));
            }
            out.push(tool("bash", Value::Object(bash)));
            if value.is_string() {
                mapped.shell = Some(ShellField {
                    field: name,
                    command: text,
                    workdir: dir,
                });
            }
        }
        Map::Read { path } => match text_field(input, path) {
            Some(p) => out.push(read(agent_path(call, &p))),
            None => out.push(missing(call, "path")),
        },
        Map::ReadMany { paths } => {
            // Every field, not the first: the agent reads what `paths` and
            // `include` match together.
            let items: Vec<String> = paths
                .iter()
                .filter_map(|n| input.get(*n))
                .flat_map(|v| match v {
                    Value::Array(items) => items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect(),
                    Value::String(s) => vec![s.clone()],
                    _ => Vec::new(),
                })
                .collect();
            if items.is_empty() {
                out.push(missing(call, "paths"));
            }
            let mut files = 0usize;
            for item in items {
                let named = agent_path(call, &item);
                if named.starts_with('~') {
                    out.push(read(named));
                    continue;
                }
                if !Path::new(&named).is_absolute() {
                    out.push(Probe::Ask(format!(
                        "{}'s `{}` call names `{item}` with no directory to find it from",
                        call.agent, call.tool
                    )));
                    continue;
                }
                match crate::files_read::files_read(Path::new("/"), &named) {
                    Ok(found) if found.is_empty() => {
                        // Nothing matches now: judged as the listing it is.
                        if item.contains(['*', '?', '[', '{']) {
                            let mut g = JsonMap::new();
                            g.insert("pattern".into(), Value::String(item));
                            if let Some(cwd) = &call.cwd {
                                g.insert("path".into(), Value::String(cwd.display().to_string()));
                            }
                            out.push(tool("glob", Value::Object(g)));
                        } else {
                            out.push(read(named));
                        }
                    }
                    Ok(found) => {
                        files += found.len();
                        if files > crate::files_read::MAX_FILES {
                            out.push(Probe::Ask(format!(
                                "{}'s `{}` call reads more than {} files",
                                call.agent,
                                call.tool,
                                crate::files_read::MAX_FILES
                            )));
                            break;
                        }
                        out.extend(found.into_iter().map(|f| read(f.display().to_string())));
                    }
                    Err(why) => out.push(Probe::Ask(format!(
                        "{}'s `{}` call reads what `{item}` matches, which toolgate cannot list: {why}",
                        call.agent, call.tool
                    ))),
                }
            }
        }
        Map::Write { path } => match text_field(input, path) {
            Some(p) => out.push(write(agent_path(call, &p))),
            None => out.push(missing(call, "path")),
        },
        Map::List { path } => {
            let dir = text_field(input, path)
                .map(|p| agent_path(call, &p))
                .or_else(|| call.cwd.as_ref().map(|c| c.display().to_string()));
            out.push(tool(
                "list",
                dir.map_or_else(|| json!({}), |d| json!({ "path": d })),
            ));
        }
        Map::Glob { pattern, path } | Map::Grep { pattern, path } => {
            let Some(pat) = text_field(input, pattern) else {
                out.push(missing(call, "pattern"));
                return;
            };
            let mut args = JsonMap::new();
            args.insert("pattern".into(), Value::String(pat));
            let dir = text_field(input, path)
                .map(|p| agent_path(call, &p))
                .or_else(|| call.cwd.as_ref().map(|c| c.display().to_string()));
            if let Some(dir) = dir {
                args.insert("path".into(), Value::String(dir));
            }
            let name = if matches!(map, Map::Glob { .. }) {
                "glob"
            } else {
                "grep"
            };
            out.push(tool(name, Value::Object(args)));
        }
        Map::Fetch { url } => match text_field(input, url) {
            Some(u) => out.push(tool("webfetch", json!({ "url": u }))),
            None => out.push(missing(call, "URL")),
        },
        Map::FetchInPrompt { prompt } => {
            let text = text_field(input, prompt).unwrap_or_default();
            let urls = urls_in(&text);
            if urls.is_empty() {
                out.push(missing(call, "URL"));
            }
            out.extend(
                urls.into_iter()
                    .map(|u| tool("webfetch", json!({ "url": u }))),
            );
        }
        Map::Search { query } => match text_field(input, query) {
            Some(q) => out.push(tool("websearch", json!({ "query": q }))),
            None => out.push(missing(call, "query")),
        },
        Map::Patch { patch } => match text_field(input, patch) {
            Some(p) => out.push(tool("apply_patch", json!({ "patch": p }))),
            None => out.push(missing(call, "patch")),
        },
        Map::Internal => {}
    }
}

/// The `http(s)://` URLs written in `text`.
fn urls_in(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\'' | '`'))
        .filter(|w| {
            let lower = w.to_ascii_lowercase();
            lower.starts_with("http://") || lower.starts_with("https://")
        })
        .map(|w| w.trim_end_matches(['.', ',', ';', ':', ')', ']', '}', '!', '?']))
        .map(str::to_string)
        .collect()
}

fn map_mcp(call: &HookCall, name: &McpName, out: &mut Vec<Probe>) {
    // The server and tool, for rules (`[permission] "github__*" = "allow"`):
    // an MCP tool can do anything its server does, so it is asked unless a
    // rule names it.
    let action = name.action();
    out.push(Probe::Request(PermissionRequest::new(
        action.clone(),
        action,
        Risk::Execute,
    )));
    let Some(found) = mcp::scan(&call.input) else {
        out.push(Probe::Ask(format!(
            "the arguments of `{}` are too large or deep to look through",
            name.action()
        )));
        return;
    };
    let writes = mcp::writes(&name.tool);
    for f in found {
        match f {
            Found::Path(p) => {
                let p = agent_path(call, &p);
                out.push(if writes { write(p) } else { read(p) });
            }
            Found::Url(u) => out.push(tool("webfetch", json!({ "url": u }))),
            Found::Command(c) => {
                let mut bash = JsonMap::new();
                bash.insert("command".into(), Value::String(c));
                if let Some(cwd) = &call.cwd {
                    bash.insert("workdir".into(), Value::String(cwd.display().to_string()));
                }
                out.push(tool("bash", Value::Object(bash)));
            }
        }
    }
}

#[cfg(test)]
mod tests;
