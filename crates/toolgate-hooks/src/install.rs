//! toolgate's hook entry in each agent's settings: where it goes, adding it
//! (idempotent, the person's other entries and the file's key order kept),
//! removing it, and what would make the agent skip it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

use crate::Agent;
use crate::ordered::Json;

/// toolgate's time budget for one answer, which every agent's hook timeout
/// must exceed (the `toolgate hook` default).
pub const BUDGET_MS: u64 = 5_000;
/// The hook timeout toolgate installs, in seconds.
pub const INSTALL_TIMEOUT_S: u64 = 30;

/// Whose settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The project's (checked in or local to the repository).
    Project,
    /// The person's, for every project.
    User,
}

/// What can go wrong editing an agent's settings.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The settings file is not valid JSON.
    #[error("{path} is not valid JSON: {source}")]
    Json {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The settings file is not valid TOML.
    #[error("{path} is not valid TOML: {source}")]
    Toml {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: toml_edit::TomlError,
    },
    /// The settings have a shape toolgate will not guess at.
    #[error("{path}: `{key}` is not {what}; fix it by hand, then install again")]
    Shape {
        /// The file.
        path: String,
        /// The key.
        key: String,
        /// What it should be.
        what: &'static str,
    },
    /// toolgate does not install into this agent.
    #[error("toolgate cannot install its hook into {0} yet")]
    Unsupported(Agent),
}

/// The file toolgate's entry goes in.
pub fn settings_path(
    agent: Agent,
    scope: Scope,
    project: &Path,
    home: &Path,
    codex_home: Option<&Path>,
) -> Result<PathBuf, InstallError> {
    let base = match scope {
        Scope::Project => project.to_path_buf(),
        Scope::User => home.to_path_buf(),
    };
    Ok(match (agent, scope) {
        (Agent::ClaudeCode, _) => base.join(".claude/settings.json"),
        (Agent::Codex, Scope::Project) => base.join(".codex/config.toml"),
        (Agent::Codex, Scope::User) => codex_home
            .map(Path::to_path_buf)
            .unwrap_or_else(|| home.join(".codex"))
            .join("config.toml"),
        (Agent::Gemini, _) => base.join(".gemini/settings.json"),
        (Agent::Cursor, _) => base.join(".cursor/hooks.json"),
        (Agent::Copilot, Scope::Project) => base.join(".github/hooks/toolgate.json"),
        (Agent::Copilot, Scope::User) => home.join(".copilot/hooks/toolgate.json"),
        (Agent::OpenCode, Scope::Project) => base.join(".opencode/plugin/toolgate.js"),
        (Agent::OpenCode, Scope::User) => home.join(".config/opencode/plugin/toolgate.js"),
        (Agent::Agy, _) => return Err(InstallError::Unsupported(agent)),
    })
}

/// The guard after the hook command for the agents whose shell runs it and
/// for which exit 2 blocks: a toolgate that cannot start (exit 127) or dies
/// blocks the call instead of letting it run.
pub const GUARD: &str = " || exit 2";

/// The file name of the program that only answers hooks (`toolgate-hook
/// AGENT`), installed beside `toolgate`.
pub const HOOK_PROGRAM: &str = "toolgate-hook";

/// The hook command toolgate installs for `agent`: `PROGRAM AGENT` when
/// `program` is [`HOOK_PROGRAM`], else `PROGRAM hook AGENT` (`toolgate`).
pub fn hook_command(program: &Path, agent: Agent) -> String {
    let quoted = crate::shell_quote(&program.display().to_string());
    let command = if program.file_name().is_some_and(|n| n == HOOK_PROGRAM) {
        format!("{quoted} {}", agent.name())
    } else {
        format!("{quoted} hook {}", agent.name())
    };
    if agent.protocol().exit2_blocks && agent != Agent::OpenCode {
        format!("{command}{GUARD}")
    } else {
        command
    }
}

/// Whether `command` is toolgate's hook for `agent`, in either form of
/// [`hook_command`].
fn is_ours(command: &str, agent: Agent) -> bool {
    let bare = command.trim_end().trim_end_matches(GUARD).trim_end();
    let Some(program) = bare.strip_suffix(agent.name()) else {
        return false;
    };
    if !program.ends_with(char::is_whitespace) {
        return false;
    }
    let program = program.trim_end();
    (command.contains("toolgate") && program.ends_with(" hook"))
        || program.trim_end_matches('\'').ends_with(HOOK_PROGRAM)
}

/// The events toolgate's entry is installed for: the pre-tool-use ones it
/// decides, and the post-tool-use ones whose outcome it records.
fn events(agent: Agent) -> &'static [&'static str] {
    match agent {
        Agent::ClaudeCode | Agent::Codex => &["PreToolUse", "PostToolUse"],
        Agent::Gemini | Agent::Agy => &["BeforeTool", "AfterTool"],
        Agent::Cursor => &[
            "preToolUse",
            "beforeShellExecution",
            "beforeReadFile",
            "beforeMCPExecution",
            "postToolUse",
        ],
        Agent::Copilot => &["preToolUse", "postToolUse"],
        Agent::OpenCode => &[],
    }
}

/// The OpenCode plugin that calls `toolgate hook opencode` before each tool
/// (and after, to record the outcome); `TOOLGATE` is the command.
pub fn opencode_plugin(toolgate: &Path) -> String {
    let exe = serde_json::to_string(&toolgate.display().to_string()).unwrap_or_default();
    include_str!("opencode_plugin.js").replace("\"__TOOLGATE__\"", &exe)
}

fn parse_json(path: &str, text: Option<&str>) -> Result<Json, InstallError> {
    match text.map(str::trim) {
        None | Some("") => Ok(Json::object()),
        Some(t) => serde_json::from_str(t).map_err(|source| InstallError::Json {
            path: path.into(),
            source,
        }),
    }
}

fn shape(path: &str, key: &str, what: &'static str) -> InstallError {
    InstallError::Shape {
        path: path.into(),
        key: key.into(),
        what,
    }
}

/// An object with its keys in the order given.
fn object(items: &[(&str, Value)]) -> Json {
    Json::Object(
        items
            .iter()
            .map(|(k, v)| ((*k).to_string(), Json::Scalar(v.clone())))
            .collect(),
    )
}

/// One command entry of `agent`'s hook list.
fn entry(agent: Agent, command: &str) -> Json {
    let secs = json!(INSTALL_TIMEOUT_S);
    match agent {
        Agent::ClaudeCode => object(&[
            ("type", json!("command")),
            ("command", json!(command)),
            ("timeout", secs),
        ]),
        Agent::Gemini | Agent::Agy => object(&[
            ("name", json!("toolgate")),
            ("type", json!("command")),
            ("command", json!(command)),
            ("timeout", json!(INSTALL_TIMEOUT_S * 1000)),
        ]),
        Agent::Cursor => object(&[
            ("command", json!(command)),
            ("failClosed", json!(true)),
            ("timeout", secs),
        ]),
        Agent::Copilot => object(&[
            ("type", json!("command")),
            ("bash", json!(command)),
            ("timeoutSec", secs),
        ]),
        Agent::Codex | Agent::OpenCode => Json::Scalar(Value::Null),
    }
}

fn command_of(agent: Agent, hook: &Json) -> Option<&str> {
    let key = if agent == Agent::Copilot {
        "bash"
    } else {
        "command"
    };
    hook.get(key).and_then(Json::as_str)
}

/// Whether the agent nests commands in matcher groups (`{matcher, hooks}`).
fn grouped(agent: Agent) -> bool {
    matches!(agent, Agent::ClaudeCode | Agent::Gemini | Agent::Agy)
}

/// `text` (the settings file, or `None` when there is none) with toolgate's
/// entry for `agent` running `command`: added once, or brought up to date.
pub fn install_text(
    agent: Agent,
    path: &str,
    text: Option<&str>,
    command: &str,
    toolgate: &Path,
) -> Result<String, InstallError> {
    match agent {
        Agent::Codex => return install_toml(path, text, command),
        Agent::OpenCode => return Ok(opencode_plugin(toolgate)),
        Agent::Agy => return Err(InstallError::Unsupported(agent)),
        _ => {}
    }
    let mut root = parse_json(path, text)?;
    if matches!(agent, Agent::Cursor | Agent::Copilot) {
        root.entry("version", Json::Scalar(json!(1)))
            .ok_or_else(|| shape(path, "(top level)", "an object"))?;
    }
    let hooks = root
        .entry("hooks", Json::object())
        .ok_or_else(|| shape(path, "(top level)", "an object"))?;
    for event in events(agent) {
        let list = hooks
            .entry(event, Json::Array(Vec::new()))
            .ok_or_else(|| shape(path, "hooks", "an object"))?;
        let Json::Array(items) = list else {
            return Err(shape(path, &format!("hooks.{event}"), "an array"));
        };
        let mut found = false;
        for item in items.iter_mut() {
            let inner: Vec<&mut Json> = if grouped(agent) {
                match item.entry("hooks", Json::Array(Vec::new())) {
                    Some(Json::Array(hs)) => hs.iter_mut().collect(),
                    _ => Vec::new(),
                }
            } else {
                vec![item]
            };
            for hook in inner {
                if command_of(agent, hook).is_some_and(|c| is_ours(c, agent)) {
                    *hook = entry(agent, command);
                    found = true;
                }
            }
        }
        if !found {
            let new = entry(agent, command);
            items.push(if grouped(agent) {
                let matcher = if agent == Agent::ClaudeCode {
                    "*"
                } else {
                    ".*"
                };
                Json::Object(vec![
                    ("matcher".into(), Json::Scalar(json!(matcher))),
                    ("hooks".into(), Json::Array(vec![new])),
                ])
            } else {
                new
            });
        }
    }
    Ok(root.to_pretty())
}

/// `text` without toolgate's entries for `agent`; `None` when nothing else
/// is left (the file can go).
pub fn uninstall_text(
    agent: Agent,
    path: &str,
    text: &str,
) -> Result<Option<String>, InstallError> {
    match agent {
        Agent::Codex => return uninstall_toml(path, text),
        Agent::OpenCode => return Ok(None),
        Agent::Agy => return Err(InstallError::Unsupported(agent)),
        _ => {}
    }
    let mut root = parse_json(path, Some(text))?;
    if let Some(hooks) = root.entry("hooks", Json::object()) {
        if let Json::Object(events_map) = hooks {
            for (_, list) in events_map.iter_mut() {
                let Json::Array(items) = list else { continue };
                if grouped(agent) {
                    for item in items.iter_mut() {
                        if let Some(Json::Array(hs)) = item.entry("hooks", Json::Array(Vec::new()))
                        {
                            hs.retain(|h| !command_of(agent, h).is_some_and(|c| is_ours(c, agent)));
                        }
                    }
                    items.retain(|item| !item.get("hooks").is_some_and(Json::is_empty));
                } else {
                    items.retain(|h| !command_of(agent, h).is_some_and(|c| is_ours(c, agent)));
                }
            }
            events_map.retain(|(_, list)| !list.is_empty());
        }
        if hooks.is_empty() {
            root.remove("hooks");
        }
    }
    if matches!(agent, Agent::Copilot | Agent::Cursor) && root.get("hooks").is_none() {
        root.remove("version");
    }
    Ok((!root.is_empty()).then(|| root.to_pretty()))
}

fn parse_toml(path: &str, text: Option<&str>) -> Result<DocumentMut, InstallError> {
    text.unwrap_or("")
        .parse::<DocumentMut>()
        .map_err(|source| InstallError::Toml {
            path: path.into(),
            source,
        })
}

fn install_toml(path: &str, text: Option<&str>, command: &str) -> Result<String, InstallError> {
    let mut doc = parse_toml(path, text)?;
    let hooks = doc
        .entry("hooks")
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_mut()
        .ok_or_else(|| shape(path, "hooks", "a table"))?;
    for event in events(Agent::Codex) {
        let groups = hooks
            .entry(event)
            .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()))
            .as_array_of_tables_mut()
            .ok_or_else(|| shape(path, &format!("hooks.{event}"), "an array of tables"))?;
        let mut found = false;
        for group in groups.iter_mut() {
            if let Some(inner) = group
                .get_mut("hooks")
                .and_then(Item::as_array_of_tables_mut)
            {
                for hook in inner.iter_mut() {
                    let ours = hook
                        .get("command")
                        .and_then(Item::as_str)
                        .is_some_and(|c| is_ours(c, Agent::Codex));
                    if ours {
                        hook["command"] = value(command);
                        found = true;
                    }
                }
            }
        }
        if !found {
            let mut hook = Table::new();
            hook["type"] = value("command");
            hook["command"] = value(command);
            hook["timeout"] = value(i64::try_from(INSTALL_TIMEOUT_S).unwrap_or(30));
            let mut inner = ArrayOfTables::new();
            inner.push(hook);
            let mut group = Table::new();
            group["hooks"] = Item::ArrayOfTables(inner);
            groups.push(group);
        }
    }
    Ok(doc.to_string())
}

fn uninstall_toml(path: &str, text: &str) -> Result<Option<String>, InstallError> {
    let mut doc = parse_toml(path, Some(text))?;
    if let Some(hooks) = doc.get_mut("hooks").and_then(Item::as_table_mut) {
        let names: Vec<String> = hooks.iter().map(|(k, _)| k.to_string()).collect();
        for name in names {
            let Some(groups) = hooks.get_mut(&name).and_then(Item::as_array_of_tables_mut) else {
                continue;
            };
            for group in groups.iter_mut() {
                if let Some(inner) = group
                    .get_mut("hooks")
                    .and_then(Item::as_array_of_tables_mut)
                {
                    inner.retain(|h| {
                        !h.get("command")
                            .and_then(Item::as_str)
                            .is_some_and(|c| is_ours(c, Agent::Codex))
                    });
                }
            }
            groups.retain(|g| {
                g.get("hooks")
                    .and_then(Item::as_array_of_tables)
                    .is_none_or(|a| !a.is_empty())
            });
            if groups.is_empty() {
                hooks.remove(&name);
            }
        }
        if hooks.is_empty() {
            doc.remove("hooks");
        }
    }
    let text = doc.to_string();
    Ok((!text.trim().is_empty()).then_some(text))
}

/// What toolgate's entry in a settings file says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// Each event toolgate's entry is installed for.
    pub events: Vec<String>,
    /// The commands of toolgate's entries.
    pub commands: Vec<String>,
    /// Cursor: whether every entry has `failClosed: true`.
    pub fail_closed: Option<bool>,
    /// The shortest hook timeout of the entries, in milliseconds, when set.
    pub timeout_ms: Option<u64>,
    /// A setting of the agent that turns every hook off.
    pub disabled_by: Option<String>,
}

fn timeout_ms(agent: Agent, hook: &Json) -> Option<u64> {
    let (key, scale) = match agent {
        Agent::Gemini | Agent::Agy => ("timeout", 1),
        Agent::Copilot => ("timeoutSec", 1000),
        _ => ("timeout", 1000),
    };
    match hook.get(key) {
        Some(Json::Scalar(v)) => v.as_f64().map(|n| (n * scale as f64) as u64),
        _ => None,
    }
}

/// toolgate's entry in `text`, the settings of `agent`.
pub fn inspect(agent: Agent, path: &str, text: &str) -> Result<Entry, InstallError> {
    let mut found = Entry::default();
    if agent == Agent::OpenCode {
        let exe = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("const TOOLGATE = "))
            .and_then(|rest| serde_json::from_str::<String>(rest.trim_end_matches(';')).ok());
        if let Some(exe) = exe.filter(|_| text.contains("\"hook\", \"opencode\"")) {
            found.events.push("tool.execute.before".into());
            found.events.push("tool.execute.after".into());
            found
                .commands
                .push(format!("{} hook opencode", crate::shell_quote(&exe)));
        }
        return Ok(found);
    }
    if agent == Agent::Codex {
        let doc = parse_toml(path, Some(text))?;
        if let Some(hooks) = doc.get("hooks").and_then(Item::as_table) {
            for (event, groups) in hooks.iter() {
                for group in groups
                    .as_array_of_tables()
                    .into_iter()
                    .flat_map(|a| a.iter())
                {
                    for hook in group
                        .get("hooks")
                        .and_then(Item::as_array_of_tables)
                        .into_iter()
                        .flat_map(|a| a.iter())
                    {
                        let Some(c) = hook.get("command").and_then(Item::as_str) else {
                            continue;
                        };
                        if is_ours(c, agent) {
                            found.events.push(event.to_string());
                            found.commands.push(c.to_string());
                            let t = hook.get("timeout").and_then(Item::as_integer);
                            if let Some(t) = t.and_then(|t| u64::try_from(t).ok()) {
                                let ms = t * 1000;
                                found.timeout_ms = Some(found.timeout_ms.map_or(ms, |m| m.min(ms)));
                            }
                        }
                    }
                }
            }
        }
        return Ok(found);
    }
    let root = parse_json(path, Some(text))?;
    if agent == Agent::ClaudeCode
        && root.get("disableAllHooks") == Some(&Json::Scalar(Value::Bool(true)))
    {
        found.disabled_by = Some("\"disableAllHooks\": true".into());
    }
    let Some(Json::Object(events_map)) = root.get("hooks") else {
        return Ok(found);
    };
    for (event, list) in events_map {
        let Json::Array(items) = list else { continue };
        let hooks: Vec<&Json> = if grouped(agent) {
            items
                .iter()
                .filter_map(|g| match g.get("hooks") {
                    Some(Json::Array(hs)) => Some(hs.iter()),
                    _ => None,
                })
                .flatten()
                .collect()
        } else {
            items.iter().collect()
        };
        for hook in hooks {
            let Some(c) = command_of(agent, hook) else {
                continue;
            };
            if !is_ours(c, agent) {
                continue;
            }
            found.events.push(event.clone());
            found.commands.push(c.to_string());
            if agent == Agent::Cursor {
                let closed = hook.get("failClosed") == Some(&Json::Scalar(Value::Bool(true)));
                found.fail_closed = Some(found.fail_closed.unwrap_or(true) && closed);
            }
            if let Some(ms) = timeout_ms(agent, hook) {
                found.timeout_ms = Some(found.timeout_ms.map_or(ms, |m| m.min(ms)));
            }
        }
    }
    Ok(found)
}

/// Why `agent` would skip toolgate's `entry` or let a call through, each in
/// one line. `found_binary` says whether the entry's program runs.
pub fn fail_open_reasons(agent: Agent, entry: &Entry, found_binary: bool) -> Vec<String> {
    let mut why = Vec::new();
    if entry.commands.is_empty() {
        why.push(format!("toolgate's hook is not installed for {agent}"));
        return why;
    }
    let pre = match agent {
        Agent::ClaudeCode | Agent::Codex => "PreToolUse",
        Agent::Gemini | Agent::Agy => "BeforeTool",
        Agent::Cursor | Agent::Copilot => "preToolUse",
        Agent::OpenCode => "tool.execute.before",
    };
    if !entry.events.iter().any(|e| e == pre) {
        why.push(format!("no {pre} entry: calls are not judged"));
    }
    if !found_binary {
        let guarded = entry
            .commands
            .iter()
            .all(|c| c.trim_end().ends_with(GUARD.trim()));
        why.push(if guarded {
            "the hook's program is not found: every call is blocked (the entry's `|| exit 2` turns the failure into a block)".into()
        } else {
            "the hook's program is not found: the agent sees a failed hook (exit 127), which it does not read as a block".into()
        });
    }
    if let Some(setting) = &entry.disabled_by {
        why.push(format!("{setting} turns every hook off"));
    }
    if agent == Agent::Codex {
        why.push("Codex runs a hook that is not managed only after the person trusts it, and skips an untrusted one silently: start codex once and trust it (tests: --dangerously-bypass-hook-trust)".into());
    }
    if agent == Agent::Cursor && entry.fail_closed != Some(true) {
        why.push("an entry lacks \"failClosed\": true: Cursor lets the call run when the hook crashes or times out".into());
    }
    if let Some(ms) = entry.timeout_ms {
        if ms <= BUDGET_MS {
            why.push(format!(
                "the hook timeout ({ms} ms) is not longer than toolgate's budget ({BUDGET_MS} ms): the agent may give up first"
            ));
        }
    }
    if agent == Agent::Copilot {
        why.push("Copilot's coding agent (on GitHub) processes only deny: an ask there is not shown to anyone".into());
    }
    why
}

#[cfg(test)]
mod tests;
