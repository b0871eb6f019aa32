//! An agent's permission rules as toolgate rules, keeping each agent's
//! precedence: toolgate's last matching rule wins, so rules are written in
//! the order that makes the agent's winner come last — Claude Code
//! `permissions` (deny > ask > allow), Codex `.rules` prefix rules
//! (strictest wins), Gemini CLI policy TOML (higher priority wins), OpenCode
//! `permission` (last match wins). What has no toolgate equivalent is listed,
//! never guessed.

use serde_json::Value;

use crate::Agent;
use crate::ordered::Json;

/// One translated rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// toolgate's action (`bash`, `read`, `edit`, `webfetch`, `server__tool`…).
    pub action: String,
    /// The resource pattern.
    pub resource: String,
    /// `allow`, `ask` or `deny`.
    pub effect: &'static str,
    /// The agent's entry it came from.
    pub from: String,
}

/// The result of an import.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Imported {
    /// The rules, in the order toolgate reads them (last match wins).
    pub rules: Vec<Rule>,
    /// Entries not translated, each with why.
    pub skipped: Vec<(String, String)>,
}

/// What can go wrong reading an agent's rules.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file does not parse.
    #[error("cannot read the {agent} rules: {why}")]
    Parse {
        /// The agent.
        agent: Agent,
        /// Why.
        why: String,
    },
    /// toolgate does not import this agent's rules.
    #[error("toolgate cannot import rules from {0}")]
    Unsupported(Agent),
}

impl Imported {
    /// The rules as toolgate config (`[[rules]]` tables), with what was not
    /// translated as comments.
    pub fn to_toml(&self, agent: Agent) -> String {
        let mut out = format!("# Imported from {agent}'s rules by `toolgate import {agent}`.\n");
        out.push_str(
            "# toolgate applies the last matching rule; a configured deny beats everything.\n",
        );
        for (entry, why) in &self.skipped {
            out.push_str(&format!("# not translated: {entry}: {why}\n"));
        }
        for r in &self.rules {
            out.push_str(&format!(
                "\n[[rules]]  # {}\naction = {}\nresource = {}\neffect = \"{}\"\n",
                r.from.replace('\n', " "),
                toml_str(&r.action),
                toml_str(&r.resource),
                r.effect
            ));
        }
        out
    }
}

fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Imports `text`, a file of `agent`'s rules.
pub fn import(agent: Agent, text: &str) -> Result<Imported, ImportError> {
    let parse_err = |why: String| ImportError::Parse { agent, why };
    match agent {
        Agent::ClaudeCode => {
            let v: Value = serde_json::from_str(text).map_err(|e| parse_err(e.to_string()))?;
            Ok(claude(&v))
        }
        Agent::OpenCode => {
            // Key order matters (the last match wins): read it as written.
            let v: Json = serde_json::from_str(text).map_err(|e| parse_err(e.to_string()))?;
            Ok(opencode(&v))
        }
        Agent::Codex => codex(text).map_err(parse_err),
        Agent::Gemini | Agent::Agy => gemini(text).map_err(parse_err),
        Agent::Cursor | Agent::Copilot => Err(ImportError::Unsupported(agent)),
    }
}

/// A command prefix as toolgate bash patterns: the prefix alone and with
/// anything after it.
fn prefix_patterns(prefix: &str) -> Vec<String> {
    let p = prefix.trim();
    if p.is_empty() || p == "*" {
        return vec!["*".into()];
    }
    vec![p.to_string(), format!("{p} *")]
}

/// A Claude Code path rule's pattern as a toolgate path pattern.
fn claude_path(p: &str) -> String {
    if let Some(abs) = p.strip_prefix("//") {
        format!("/{abs}")
    } else if p.starts_with("~/") {
        p.to_string()
    } else {
        p.trim_start_matches("./")
            .trim_start_matches('/')
            .to_string()
    }
}

/// The toolgate rules of one Claude Code rule (`Tool` or `Tool(spec)`).
fn claude_rule(rule: &str) -> Result<Vec<(String, String)>, String> {
    let (tool, spec) = match rule.split_once('(') {
        Some((tool, rest)) => {
            let spec = rest
                .strip_suffix(')')
                .ok_or_else(|| "no closing parenthesis".to_string())?;
            (tool.trim(), Some(spec.trim()))
        }
        None => (rule.trim(), None),
    };
    let spec = spec.filter(|s| !s.is_empty() && *s != "*");
    let one = |action: &str, res: String| vec![(action.to_string(), res)];
    Ok(match (tool, spec) {
        ("Bash", None) => one("bash", "*".into()),
        ("Bash", Some(s)) => {
            let prefix = s.strip_suffix(":*").or_else(|| s.strip_suffix(" *"));
            match prefix {
                Some(p) => prefix_patterns(p)
                    .into_iter()
                    .map(|r| ("bash".to_string(), r))
                    .collect(),
                None => one("bash", s.to_string()),
            }
        }
        ("Read" | "Glob" | "Grep" | "LS" | "NotebookRead", None) => {
            let action = match tool {
                "Glob" => "glob",
                "Grep" => "grep",
                "LS" => "list",
                _ => "read",
            };
            one(action, "*".into())
        }
        ("Read", Some(p)) => one("read", claude_path(p)),
        ("Edit" | "Write" | "MultiEdit" | "NotebookEdit", None) => one("edit", "*".into()),
        ("Edit" | "Write" | "MultiEdit" | "NotebookEdit", Some(p)) => one("edit", claude_path(p)),
        ("WebFetch", None) => one("webfetch", "*".into()),
        ("WebFetch", Some(s)) => match s.strip_prefix("domain:") {
            Some(host) => vec![
                ("webfetch".into(), format!("https://{host}/*")),
                ("webfetch".into(), format!("http://{host}/*")),
            ],
            None => return Err(format!("WebFetch spec `{s}` is not domain:HOST")),
        },
        ("WebSearch", _) => one("websearch", "*".into()),
        (t, None) if t.starts_with("mcp__") => {
            let rest = &t["mcp__".len()..];
            match rest.split_once("__") {
                Some((server, tool)) => one(&format!("{server}__{tool}"), "*".into()),
                None => one(&format!("{rest}__*"), "*".into()),
            }
        }
        _ => return Err("no toolgate equivalent".into()),
    })
}

fn claude(v: &Value) -> Imported {
    let mut out = Imported::default();
    let perms = v.get("permissions").unwrap_or(v);
    // deny > ask > allow: written allow, ask, deny so the strictest is last.
    for (key, effect) in [("allow", "allow"), ("ask", "ask"), ("deny", "deny")] {
        for rule in perms
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(text) = rule.as_str() else {
                out.skipped.push((rule.to_string(), "not a string".into()));
                continue;
            };
            match claude_rule(text) {
                Ok(rules) => out
                    .rules
                    .extend(rules.into_iter().map(|(action, resource)| Rule {
                        action,
                        resource,
                        effect,
                        from: format!("permissions.{key}: {text}"),
                    })),
                Err(why) => out
                    .skipped
                    .push((format!("permissions.{key}: {text}"), why)),
            }
        }
    }
    for key in ["defaultMode", "additionalDirectories"] {
        if let Some(x) = perms.get(key) {
            out.skipped.push((
                format!("permissions.{key} = {x}"),
                "set toolgate's mode or location instead".into(),
            ));
        }
    }
    out
}

fn opencode_effect(v: &Json) -> Option<&'static str> {
    match v.as_str()? {
        "allow" => Some("allow"),
        "ask" => Some("ask"),
        "deny" => Some("deny"),
        _ => None,
    }
}

fn shown(v: &Json) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn opencode(v: &Json) -> Imported {
    let mut out = Imported::default();
    let perm = v.get("permission").unwrap_or(v);
    let Json::Object(map) = perm else {
        out.skipped
            .push(("permission".into(), "not an object".into()));
        return out;
    };
    const ACTIONS: &[&str] = &[
        "read",
        "edit",
        "bash",
        "webfetch",
        "websearch",
        "glob",
        "grep",
        "list",
        "external_directory",
        "todowrite",
        "skill",
        "question",
    ];
    for (key, value) in map {
        let action = match key.as_str() {
            "*" => "*",
            "write" | "patch" | "multiedit" => "edit",
            k if ACTIONS.contains(&k) => k,
            _ => {
                out.skipped.push((
                    format!("permission.{key}"),
                    "no toolgate action of that name".into(),
                ));
                continue;
            }
        };
        match value {
            Json::Object(patterns) => {
                for (pattern, effect) in patterns {
                    match opencode_effect(effect) {
                        Some(effect) => out.rules.push(Rule {
                            action: action.into(),
                            resource: pattern.clone(),
                            effect,
                            from: format!("permission.{key}.{pattern}"),
                        }),
                        None => out.skipped.push((
                            format!("permission.{key}.{pattern}"),
                            format!("unknown effect {}", shown(effect)),
                        )),
                    }
                }
            }
            other => match opencode_effect(other) {
                Some(effect) => out.rules.push(Rule {
                    action: action.into(),
                    resource: "*".into(),
                    effect,
                    from: format!("permission.{key}"),
                }),
                None => out.skipped.push((
                    format!("permission.{key}"),
                    format!("unknown effect {}", shown(other)),
                )),
            },
        }
    }
    out
}

/// Reads a Starlark string or list of strings (nested lists are
/// alternatives) starting at `s`; returns the value and the rest.
fn starlark_value(s: &str) -> Option<(Vec<Vec<String>>, &str)> {
    let s = s.trim_start();
    if let Some(rest) = s.strip_prefix('[') {
        let mut items: Vec<Vec<String>> = Vec::new();
        let mut rest = rest;
        loop {
            rest = rest.trim_start().trim_start_matches(',').trim_start();
            if let Some(after) = rest.strip_prefix(']') {
                return Some((items, after));
            }
            let (v, after) = starlark_value(rest)?;
            // A nested list is one position with alternatives.
            items.push(v.into_iter().flatten().collect());
            rest = after;
        }
    }
    let quote = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &s[1..];
    let end = body.find(quote)?;
    Some((vec![vec![body[..end].to_string()]], &body[end + 1..]))
}

fn codex(text: &str) -> Result<Imported, String> {
    let mut out = Imported::default();
    let mut by_effect: [Vec<Rule>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut rest = text;
    while let Some(at) = rest.find("prefix_rule(") {
        let body_start = &rest[at + "prefix_rule(".len()..];
        let end = body_start
            .find("\n)")
            .map(|e| e + 2)
            .or_else(|| body_start.find(')').map(|e| e + 1))
            .ok_or("a prefix_rule( is not closed")?;
        let body = &body_start[..end];
        rest = &body_start[end..];
        let shown = format!(
            "prefix_rule({}",
            body.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        let pattern = body
            .find("pattern")
            .and_then(|p| body[p..].find('=').map(|e| p + e + 1))
            .and_then(|p| starlark_value(&body[p..]))
            .map(|(v, _)| v);
        let decision = body
            .find("decision")
            .and_then(|p| body[p..].find('=').map(|e| p + e + 1))
            .and_then(|p| starlark_value(&body[p..]))
            .and_then(|(v, _)| v.into_iter().flatten().next())
            .unwrap_or_else(|| "allow".into());
        let Some(pattern) = pattern.filter(|p| !p.is_empty()) else {
            out.skipped.push((shown, "no pattern".into()));
            continue;
        };
        let (slot, effect) = match decision.as_str() {
            "allow" => (0, "allow"),
            "prompt" => (1, "ask"),
            "forbidden" => (2, "deny"),
            other => {
                out.skipped
                    .push((shown, format!("unknown decision {other}")));
                continue;
            }
        };
        // Every combination of the alternatives.
        let mut prefixes = vec![String::new()];
        for alts in &pattern {
            prefixes = prefixes
                .iter()
                .flat_map(|p| {
                    alts.iter().map(move |a| {
                        if p.is_empty() {
                            a.clone()
                        } else {
                            format!("{p} {a}")
                        }
                    })
                })
                .collect();
        }
        for prefix in prefixes {
            for resource in prefix_patterns(&prefix) {
                by_effect[slot].push(Rule {
                    action: "bash".into(),
                    resource,
                    effect,
                    from: shown.clone(),
                });
            }
        }
    }
    // Strictest wins: allow, then prompt, then forbidden.
    out.rules = by_effect.into_iter().flatten().collect();
    Ok(out)
}

fn gemini_action(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "run_shell_command" => "bash",
        "read_file" | "read_many_files" => "read",
        "write_file" | "replace" => "edit",
        "glob" => "glob",
        "search_file_content" | "grep_search" => "grep",
        "list_directory" => "list",
        "web_fetch" => "webfetch",
        "google_web_search" => "websearch",
        "*" => "*",
        _ => return None,
    })
}

fn gemini(text: &str) -> Result<Imported, String> {
    let doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| e.to_string())?;
    let mut out = Imported::default();
    let mut ranked: Vec<(i64, usize, Rule)> = Vec::new();
    let rules = doc
        .get("rule")
        .and_then(toml_edit::Item::as_array_of_tables)
        .ok_or("no [[rule]] tables")?;
    for (i, rule) in rules.iter().enumerate() {
        let shown = format!("[[rule]] #{}", i + 1);
        let text_of = |k: &str| {
            rule.get(k)
                .and_then(toml_edit::Item::as_str)
                .map(str::to_string)
        };
        let decision = text_of("decision").unwrap_or_default();
        let effect = match decision.as_str() {
            "allow" => "allow",
            "ask_user" => "ask",
            "deny" => "deny",
            other => {
                out.skipped
                    .push((shown, format!("unknown decision `{other}`")));
                continue;
            }
        };
        let priority = rule
            .get("priority")
            .and_then(toml_edit::Item::as_integer)
            .unwrap_or(0);
        for key in ["argsPattern", "commandRegex", "modes"] {
            if rule.get(key).is_some() {
                out.skipped.push((
                    format!("{shown} {key}"),
                    "no toolgate equivalent; the rule is skipped".into(),
                ));
            }
        }
        if ["argsPattern", "commandRegex"]
            .iter()
            .any(|k| rule.get(k).is_some())
        {
            continue;
        }
        let action = match (text_of("toolName"), text_of("mcpName")) {
            (_, Some(server)) => format!("{server}__{}", text_of("toolName").unwrap_or("*".into())),
            (Some(tool), None) => match gemini_action(&tool) {
                Some(a) => a.to_string(),
                None => {
                    out.skipped.push((shown, format!("unknown tool `{tool}`")));
                    continue;
                }
            },
            (None, None) => "*".into(),
        };
        let prefixes: Vec<String> = match rule.get("commandPrefix") {
            Some(item) => match (item.as_str(), item.as_array()) {
                (Some(s), _) => vec![s.to_string()],
                (_, Some(a)) => a
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
                _ => Vec::new(),
            },
            None => Vec::new(),
        };
        let resources: Vec<String> = if prefixes.is_empty() {
            vec!["*".into()]
        } else {
            prefixes.iter().flat_map(|p| prefix_patterns(p)).collect()
        };
        for resource in resources {
            ranked.push((
                priority,
                i,
                Rule {
                    action: action.clone(),
                    resource,
                    effect,
                    from: format!("{shown} priority {priority}"),
                },
            ));
        }
    }
    // Higher priority wins: written last. At equal priority Gemini's
    // strictest decision wins.
    let strict = |e: &str| match e {
        "deny" => 2,
        "ask" => 1,
        _ => 0,
    };
    ranked.sort_by_key(|(p, i, r)| (*p, strict(r.effect), *i));
    out.rules = ranked.into_iter().map(|(_, _, r)| r).collect();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(i: &Imported) -> Vec<(String, String, &'static str)> {
        i.rules
            .iter()
            .map(|r| (r.action.clone(), r.resource.clone(), r.effect))
            .collect()
    }

    #[test]
    fn claude_code_permissions_strictest_last() {
        let i = import(
            Agent::ClaudeCode,
            r#"{"permissions": {
                "deny": ["Read(./.env)", "Bash(curl:*)"],
                "allow": ["Bash(npm run test:*)", "Edit(src/**)", "WebFetch(domain:docs.rs)", "mcp__github"],
                "ask": ["Bash(git push:*)"],
                "defaultMode": "acceptEdits"},
               "model": "x"}"#,
        )
        .unwrap();
        let r = rules(&i);
        assert_eq!(r[0], ("bash".into(), "npm run test".into(), "allow"));
        assert!(r.contains(&("edit".into(), "src/**".into(), "allow")));
        assert!(r.contains(&("webfetch".into(), "https://docs.rs/*".into(), "allow")));
        assert!(r.contains(&("github__*".into(), "*".into(), "allow")));
        let ask = r.iter().position(|x| x.1 == "git push *").unwrap();
        let deny = r.iter().position(|x| x.1 == "curl *").unwrap();
        assert!(ask < deny);
        assert_eq!(r.last().unwrap().2, "deny");
        assert!(i.skipped.iter().any(|(e, _)| e.contains("defaultMode")));
        let toml = i.to_toml(Agent::ClaudeCode);
        assert!(toml.contains("effect = \"deny\""), "{toml}");
    }

    #[test]
    fn codex_prefix_rules_with_alternatives() {
        let i = import(
            Agent::Codex,
            r#"
prefix_rule(
    pattern = ["git", ["push", "fetch"]],
    decision = "prompt",
    justification = "network",
)
prefix_rule(pattern = ["rm"], decision = "forbidden")
prefix_rule(pattern = ["git", "status"])
"#,
        )
        .unwrap();
        let r = rules(&i);
        assert_eq!(r[0], ("bash".into(), "git status".into(), "allow"));
        assert!(r.contains(&("bash".into(), "git fetch *".into(), "ask")));
        assert_eq!(r.last().unwrap(), &("bash".into(), "rm *".into(), "deny"));
    }

    #[test]
    fn gemini_policy_by_priority() {
        let i = import(
            Agent::Gemini,
            r#"
[[rule]]
toolName = "run_shell_command"
commandPrefix = "git push"
decision = "deny"
priority = 200

[[rule]]
toolName = "run_shell_command"
commandPrefix = ["git", "ls"]
decision = "allow"
priority = 100

[[rule]]
toolName = "run_shell_command"
commandRegex = "rm .*"
decision = "deny"
priority = 300
"#,
        )
        .unwrap();
        let r = rules(&i);
        assert_eq!(
            r.last().unwrap(),
            &("bash".into(), "git push *".into(), "deny")
        );
        assert!(r.contains(&("bash".into(), "git *".into(), "allow")));
        assert!(i.skipped.iter().any(|(e, _)| e.contains("commandRegex")));
    }

    #[test]
    fn opencode_permission_in_order() {
        let i = import(
            Agent::OpenCode,
            r#"{"permission": {"edit": "ask", "bash": {"*": "ask", "rm *": "deny", "git status": "allow"}, "lsp": "allow"}}"#,
        )
        .unwrap();
        let r = rules(&i);
        assert_eq!(r[0], ("edit".into(), "*".into(), "ask"));
        // As written, not sorted: the last match wins.
        assert_eq!(
            r.last().unwrap(),
            &("bash".into(), "git status".into(), "allow")
        );
        assert!(i.skipped.iter().any(|(e, _)| e.contains("lsp")));
    }

    #[test]
    fn bad_files_are_errors() {
        assert!(import(Agent::ClaudeCode, "{").is_err());
        assert!(import(Agent::Gemini, "[[rule]\n").is_err());
        assert!(import(Agent::Cursor, "{}").is_err());
    }
}
