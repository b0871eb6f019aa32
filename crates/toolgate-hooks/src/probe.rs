//! A hook call to what toolgate judges: calls of its built-in tools (whose
//! intents compute the requests exactly as for toolgate's own tools) and
//! plain requests.

use std::path::Path;

use serde_json::{Map as JsonMap, Value, json};
use toolgate_core::{PermissionRequest, Risk};

use crate::HookCall;
use crate::mcp::{self, Found, McpName};
use crate::rewrite::ShellField;
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

/// Every present, non-null field of `names`. An agent's tool reads the one
/// name it knows, and a payload may carry several of the names the table
/// lists (the model writes the input): each is judged, so a harmless first
/// one never hides the one the agent uses.
fn fields(input: &Value, names: Fields) -> Vec<(&'static str, &Value)> {
    names
        .iter()
        .filter_map(|n| input.get(*n).filter(|v| !v.is_null()).map(|v| (*n, v)))
        .collect()
}

/// The texts of every present field of `names`, without repeats: empty
/// when none is present, `None` when one is present but not a non-empty
/// string (the call cannot be judged).
fn text_fields(input: &Value, names: Fields) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for (_, v) in fields(input, names) {
        let text = v.as_str().filter(|s| !s.is_empty())?;
        if !out.iter().any(|o| o == text) {
            out.push(text.to_string());
        }
    }
    Some(out)
}

/// The texts of `names` as [`text_fields`] gives them, `None` when there is
/// none to judge (the call is then asked).
fn required_texts(input: &Value, names: Fields) -> Option<Vec<String>> {
    text_fields(input, names).filter(|texts| !texts.is_empty())
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

/// The directories named by `names` (as the agent means them), or the
/// agent's working directory when none is named (`None` inside: not known);
/// `None` when a named one cannot be read.
fn dirs_or_cwd(call: &HookCall, names: Fields) -> Option<Vec<Option<String>>> {
    let named = text_fields(&call.input, names)?;
    if named.is_empty() {
        return Some(vec![call.cwd.as_ref().map(|c| c.display().to_string())]);
    }
    Some(named.iter().map(|d| Some(agent_path(call, d))).collect())
}

fn map_row(call: &HookCall, map: Map, mapped: &mut Mapped) {
    let input = &call.input;
    let out = &mut mapped.probes;
    match map {
        Map::Shell { command, workdir } => {
            let present = fields(input, command);
            let mut commands: Vec<String> = Vec::new();
            for (_, value) in &present {
                let text = match value {
                    Value::String(s) if !s.is_empty() => s.clone(),
                    Value::Array(argv) => {
                        let words: Option<Vec<&str>> = argv.iter().map(Value::as_str).collect();
                        match words {
                            Some(words) if !words.is_empty() => {
                                toolgate_core::shell_text::argv_line(&words)
                            }
                            _ => {
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
                if !commands.contains(&text) {
                    commands.push(text);
                }
            }
            if commands.is_empty() {
                out.push(missing(call, "command"));
                return;
            }
            let Some(named_dirs) = text_fields(input, workdir) else {
                out.push(missing(call, "working directory"));
                return;
            };
            let dirs: Vec<Option<String>> = if named_dirs.is_empty() {
                vec![call.cwd.as_ref().map(|c| c.display().to_string())]
            } else {
                named_dirs
                    .iter()
                    .map(|d| Some(agent_path(call, d)))
                    .collect()
            };
            for text in &commands {
                for dir in &dirs {
                    let mut bash = JsonMap::new();
                    bash.insert("command".into(), Value::String(text.clone()));
                    if let Some(dir) = dir {
                        bash.insert("workdir".into(), Value::String(dir.clone()));
                    }
                    out.push(tool("bash", Value::Object(bash)));
                }
            }
            // Only one command in one directory can be moved into the
            // sandbox as it was judged.
            if let ([(name, Value::String(text))], [dir]) = (present.as_slice(), dirs.as_slice()) {
                mapped.shell = Some(ShellField {
                    field: name,
                    command: text.clone(),
                    workdir: dir.clone(),
                });
            }
        }
        Map::Read { path } => match required_texts(input, path) {
            Some(paths) => out.extend(paths.iter().map(|p| read(agent_path(call, p)))),
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
        Map::Write { path } => match required_texts(input, path) {
            Some(paths) => out.extend(paths.iter().map(|p| write(agent_path(call, p)))),
            None => out.push(missing(call, "path")),
        },
        Map::List { path } => {
            let Some(dirs) = dirs_or_cwd(call, path) else {
                out.push(missing(call, "directory"));
                return;
            };
            for dir in dirs {
                out.push(tool(
                    "list",
                    dir.map_or_else(|| json!({}), |d| json!({ "path": d })),
                ));
            }
        }
        Map::Glob { pattern, path } | Map::Grep { pattern, path } => {
            let Some(patterns) = required_texts(input, pattern) else {
                out.push(missing(call, "pattern"));
                return;
            };
            let Some(dirs) = dirs_or_cwd(call, path) else {
                out.push(missing(call, "directory"));
                return;
            };
            let grep = matches!(map, Map::Grep { .. });
            for dir in &dirs {
                for pat in &patterns {
                    let mut args = JsonMap::new();
                    args.insert("pattern".into(), Value::String(pat.clone()));
                    if let Some(dir) = dir {
                        args.insert("path".into(), Value::String(dir.clone()));
                    }
                    out.push(tool(
                        if grep { "grep" } else { "glob" },
                        Value::Object(args),
                    ));
                }
                // The agent's own search reads every file below the
                // directory, the secrets toolgate's walker skips among them.
                if let (true, Some(dir)) = (grep, dir) {
                    match crate::searched::secrets_below(Path::new(dir)) {
                        Ok(secrets) => out.extend(secrets.into_iter().map(|f| read(f.display().to_string()))),
                        Err(why) => out.push(Probe::Ask(format!(
                            "{}'s `{}` call searches {dir}, which toolgate cannot look through: {why}",
                            call.agent, call.tool
                        ))),
                    }
                }
            }
        }
        Map::Fetch { url } => match required_texts(input, url) {
            Some(urls) => out.extend(
                urls.into_iter()
                    .map(|u| tool("webfetch", json!({ "url": u }))),
            ),
            None => out.push(missing(call, "URL")),
        },
        Map::FetchInPrompt { prompt } => {
            let texts = text_fields(input, prompt).unwrap_or_default();
            let urls: Vec<String> = texts.iter().flat_map(|t| urls_in(t)).collect();
            if urls.is_empty() {
                out.push(missing(call, "URL"));
            }
            out.extend(
                urls.into_iter()
                    .map(|u| tool("webfetch", json!({ "url": u }))),
            );
        }
        Map::Search { query } => match required_texts(input, query) {
            Some(queries) => out.extend(
                queries
                    .into_iter()
                    .map(|q| tool("websearch", json!({ "query": q }))),
            ),
            None => out.push(missing(call, "query")),
        },
        Map::Patch { patch } => match required_texts(input, patch) {
            Some(patches) => out.extend(
                patches
                    .into_iter()
                    .map(|p| tool("apply_patch", json!({ "patch": p }))),
            ),
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
                // Also where a server that folds `.` and `..` by names
                // before opening (Node's `path.resolve`) lands: through a
                // workspace link the two differ.
                let folded = Path::new(&p)
                    .is_absolute()
                    .then(|| toolgate_core::path_text::lexical(Path::new(&p)))
                    .map(|f| f.display().to_string())
                    .filter(|f| *f != p);
                for p in std::iter::once(p).chain(folded) {
                    out.push(if writes { write(p) } else { read(p) });
                }
            }
            Found::Url(u) => out.push(tool("webfetch", json!({ "url": u }))),
            Found::Unjudgeable(u) => out.push(Probe::Ask(format!(
                "`{u}` names no local path toolgate can judge"
            ))),
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
    gateway_requests(call, name, writes, out);
}

/// The requests the gateway finds in the same arguments
/// ([`toolgate_mcp::gateway::intent::requests`]), judged beside this
/// scan's: what the gateway's reviews taught its walker (JSON text inside a
/// string, argv arrays and a program beside its arguments, addresses
/// without a scheme, a URL two parsers read differently, `~user` and folded
/// paths, local and metadata hosts) holds for an agent's own MCP servers
/// too, and the strictest decision wins. The gateway's own `mcp` request is
/// left out: the hook's rules name the tool as `SERVER__TOOL` (above). A
/// walk the gateway refuses is asked, with its reason.
fn gateway_requests(call: &HookCall, name: &McpName, writes: bool, out: &mut Vec<Probe>) {
    let Value::Object(args) = &call.input else {
        return;
    };
    // Relative paths as the agent's own file tools read them: from its
    // working directory.
    let base = call
        .cwd
        .clone()
        .or_else(|| call.project_dir.clone())
        .or_else(|| std::env::current_dir().ok());
    let Some(location) = base.and_then(|b| toolgate_core::Location::new(&b).ok()) else {
        out.push(Probe::Ask(format!(
            "the arguments of `{}` cannot be judged: no working directory to resolve their paths from",
            name.action()
        )));
        return;
    };
    use toolgate_mcp::gateway::intent::{MCP_ACTION, requests};
    match requests(&name.action(), args, &location, !writes) {
        Ok(found) => out.extend(
            found
                .into_iter()
                .filter(|r| r.action != MCP_ACTION)
                .map(Probe::Request),
        ),
        Err(e) => out.push(Probe::Ask(format!(
            "the arguments of `{}`: {e}",
            name.action()
        ))),
    }
}

#[cfg(test)]
mod tests;
