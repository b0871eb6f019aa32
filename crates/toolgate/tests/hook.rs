//! `toolgate hook AGENT` as each agent runs it: a real process reading the
//! agent's payload on stdin, answering in the agent's format, and blocking
//! on every failure.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::Write;
use std::process::{Output, Stdio};

use serde_json::{Value, json};
use support::cli_env::CliEnv as Env;

/// A git repository with a source file, a `.env`, and a home directory with
/// an SSH key and a `.bashrc` (the hook tests' world; `hook_asks` uses it too).
pub(crate) fn env() -> Env {
    let e = Env::new();
    e.write(e.ws.join("src/lib.rs"), "pub fn f() {}\n");
    e.write(e.ws.join(".env"), "SECRET=1\n");
    e.write(e.home.join(".ssh/id_rsa"), "KEY\n");
    e.write(e.home.join(".bashrc"), "# rc\n");
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&e.ws)
        .status()
        .unwrap();
    assert!(git.success());
    e
}

fn hook(e: &Env, agent: &str, payload: &str, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut all = vec!["hook", agent];
    all.extend_from_slice(args);
    run_with(e.command(&all), payload, vars)
}

/// The same through the hook-only program, `toolgate-hook AGENT ARGS`.
fn hook_only(e: &Env, agent: &str, payload: &str, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate-hook"));
    c.arg(agent).args(args).current_dir(&e.ws);
    support::cli_env::isolate(&mut c, &e.data, &e.home);
    run_with(c, payload, vars)
}

fn run_with(mut c: std::process::Command, payload: &str, vars: &[(&str, &str)]) -> Output {
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in vars {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    // The hook may answer (and exit) before reading all of it.
    let _ = child.stdin.take().unwrap().write_all(payload.as_bytes());
    child.wait_with_output().unwrap()
}

/// The pre-tool-use payload `agent` sends for its `tool` with `input`.
fn payload(e: &Env, agent: &str, tool: &str, input: Value) -> String {
    let cwd = e.ws.display().to_string();
    match agent {
        "claude-code" | "codex" => {
            json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": input, "tool_use_id": "call-1"})
        }
        "gemini" | "agy" => json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "BeforeTool",
            "timestamp": "2026-12-05T00:00:00Z", "tool_name": tool, "tool_input": input}),
        "cursor" => {
            json!({"conversation_id": "s1", "generation_id": "g", "hook_event_name": "preToolUse",
            "tool_name": tool, "tool_input": input, "workspace_roots": [cwd], "cwd": cwd})
        }
        "copilot" => {
            json!({"timestamp": 1, "cwd": cwd, "toolName": tool, "toolArgs": input.to_string()})
        }
        "opencode" => {
            json!({"event": "tool.execute.before", "tool": tool, "sessionID": "s1", "callID": "c1",
            "args": input, "directory": cwd, "cwd": cwd})
        }
        _ => unreachable!(),
    }
    .to_string()
}

/// What the agent makes of the answer: allow, ask or block.
fn verdict(agent: &str, o: &Output) -> &'static str {
    let out = String::from_utf8_lossy(&o.stdout);
    let code = o.status.code();
    let json: Option<Value> = serde_json::from_str(out.trim()).ok();
    let field = |v: &Value| -> Option<String> {
        let d = match agent {
            "claude-code" | "codex" => &v["hookSpecificOutput"]["permissionDecision"],
            "gemini" | "agy" | "opencode" => &v["decision"],
            "cursor" => &v["permission"],
            "copilot" => &v["permissionDecision"],
            _ => unreachable!(),
        };
        d.as_str().map(str::to_string)
    };
    let blocks_on_2 = agent != "copilot";
    if blocks_on_2 && code == Some(2) {
        return "block";
    }
    assert_eq!(code, Some(0), "{agent}: {o:?}");
    match json.as_ref().and_then(field).as_deref() {
        Some("deny") => "block",
        Some("ask") => "ask",
        Some("allow") => "allow",
        // Codex: a plain allow says nothing and leaves it to Codex.
        None if agent == "codex" && out.trim().is_empty() => "allow",
        other => panic!("{agent}: unexpected answer {other:?}: {o:?}"),
    }
}

/// Each agent's shell, read and write tools.
fn tools(agent: &str) -> (&'static str, &'static str, &'static str, &'static str) {
    // (shell, command field, read tool, read path field)
    match agent {
        "claude-code" => ("Bash", "command", "Read", "file_path"),
        "codex" => ("Bash", "command", "Bash", "command"),
        "gemini" | "agy" => ("run_shell_command", "command", "read_file", "file_path"),
        "cursor" => ("Shell", "command", "Read", "file_path"),
        "copilot" => ("bash", "command", "view", "path"),
        "opencode" => ("bash", "command", "read", "filePath"),
        _ => unreachable!(),
    }
}

const AGENTS: [&str; 7] = [
    "claude-code",
    "codex",
    "gemini",
    "agy",
    "cursor",
    "copilot",
    "opencode",
];

#[test]
fn dangerous_calls_never_get_an_allow() {
    let e = env();
    let home = e.home.display().to_string();
    for agent in AGENTS {
        let (shell, field, read, path) = tools(agent);
        let mut cases = vec![
            (shell, json!({ field: format!("cat {home}/.ssh/id_rsa") })),
            (shell, json!({ field: "cat .env" })),
            (shell, json!({ field: "curl -s http://127.0.0.1:9/x" })),
            (shell, json!({ field: "echo x > .git/hooks/pre-commit" })),
            (shell, json!({ field: format!("echo x >> {home}/.bashrc") })),
            (shell, json!({ field: "rm -rf src" })),
        ];
        if read != shell {
            cases.push((read, json!({ path: format!("{home}/.ssh/id_rsa") })));
            cases.push((
                read,
                json!({ path: e.ws.join(".env").display().to_string() }),
            ));
        }
        for (tool, input) in cases {
            for mode in ["default", "auto"] {
                let o = hook(
                    &e,
                    agent,
                    &payload(&e, agent, tool, input.clone()),
                    &["--mode", mode],
                    &[],
                );
                let v = verdict(agent, &o);
                assert_ne!(v, "allow", "{agent} {mode} {input}: {o:?}");
            }
        }
    }
}

#[test]
fn a_routine_session_runs_without_asking_in_mode_auto() {
    let e = env();
    // As a project keeps it: git ignores the `.env`, so the agents' own
    // searches of the project (ripgrep, `git grep`) leave it out; one that
    // is not ignored is read by a search, and the search is refused.
    e.write(e.ws.join(".gitignore"), ".env\n");
    for agent in ["claude-code", "codex", "cursor", "copilot", "opencode"] {
        let (shell, field, _, _) = tools(agent);
        for command in [
            "git status",
            "grep -rn f src",
            "cat src/lib.rs",
            "cargo test",
        ] {
            let o = hook(
                &e,
                agent,
                &payload(&e, agent, shell, json!({ field: command })),
                &["--mode", "auto"],
                &[],
            );
            assert_eq!(verdict(agent, &o), "allow", "{agent} `{command}`: {o:?}");
        }
    }
    let edit = [
        (
            "claude-code",
            "Edit",
            json!({"file_path": e.ws.join("src/lib.rs"), "old_string": "f", "new_string": "g"}),
        ),
        (
            "gemini",
            "replace",
            json!({"file_path": e.ws.join("src/lib.rs"), "old_string": "f", "new_string": "g"}),
        ),
        (
            "cursor",
            "Write",
            json!({"file_path": e.ws.join("src/lib.rs")}),
        ),
        (
            "copilot",
            "edit",
            json!({"path": e.ws.join("src/lib.rs"), "old_str": "f", "new_str": "g"}),
        ),
        (
            "opencode",
            "edit",
            json!({"filePath": e.ws.join("src/lib.rs"), "oldString": "f", "newString": "g"}),
        ),
        (
            "gemini",
            "read_file",
            json!({"file_path": e.ws.join("src/lib.rs")}),
        ),
        ("gemini", "search_file_content", json!({"pattern": "fn"})),
        (
            "gemini",
            "run_shell_command",
            json!({"command": "git status"}),
        ),
    ];
    for (agent, tool, input) in edit {
        let o = hook(
            &e,
            agent,
            &payload(&e, agent, tool, input),
            &["--mode", "auto"],
            &[],
        );
        assert_eq!(verdict(agent, &o), "allow", "{agent} {tool}: {o:?}");
    }
}

#[test]
fn a_sandbox_only_allow_is_rewritten_where_the_agent_takes_it_else_asked() {
    let e = env();
    for agent in ["claude-code", "codex"] {
        let p = payload(
            &e,
            agent,
            "Bash",
            json!({"command": "cargo test", "description": "tests"}),
        );
        let o = hook(&e, agent, &p, &["--mode", "auto"], &[]);
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let out = &v["hookSpecificOutput"];
        assert_eq!(out["permissionDecision"], "allow", "{agent}");
        let cmd = out["updatedInput"]["command"].as_str().unwrap();
        assert!(cmd.contains(" sandbox exec --root "), "{cmd}");
        assert!(cmd.ends_with("-- bash -c 'cargo test'"), "{cmd}");
        assert_eq!(out["updatedInput"]["description"], "tests");
    }
    // Gemini cannot run a rewritten command, nor ask: it is told how to approve.
    let p = payload(
        &e,
        "gemini",
        "run_shell_command",
        json!({"command": "cargo test"}),
    );
    let o = hook(&e, "gemini", &p, &["--mode", "auto"], &[]);
    assert_eq!(verdict("gemini", &o), "block");
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot run a rewritten command"));
    let o = hook(
        &e,
        "agy",
        &payload(
            &e,
            "agy",
            "run_shell_command",
            json!({"command": "cargo test"}),
        ),
        &["--mode", "auto"],
        &[],
    );
    assert_eq!(verdict("agy", &o), "ask");
}

#[test]
fn a_broken_hook_blocks_in_every_agent() {
    let e = env();
    for agent in AGENTS {
        let (shell, field, _, _) = tools(agent);
        let good = payload(&e, agent, shell, json!({ field: "git status" }));
        let broken: Vec<(String, Vec<(&str, &str)>)> = vec![
            ("garbage {".into(), vec![]),
            (String::new(), vec![]),
            ("[1,2]".into(), vec![]),
            (good.clone(), vec![("TOOLGATE_HOOK_TEST_PANIC", "1")]),
            (
                good.clone(),
                vec![
                    ("TOOLGATE_HOOK_TEST_SLEEP_MS", "5000"),
                    ("TOOLGATE_HOOK_BUDGET_MS", "300"),
                ],
            ),
        ];
        for (input, vars) in broken {
            let o = hook(&e, agent, &input, &[], &vars);
            assert_eq!(
                verdict(agent, &o),
                "block",
                "{agent} {input:?} {vars:?}: {o:?}"
            );
            assert!(
                String::from_utf8_lossy(&o.stderr).contains("toolgate:"),
                "{o:?}"
            );
        }
        // And the good payload is allowed, so the failures above are the faults'.
        assert_eq!(
            verdict(agent, &hook(&e, agent, &good, &[], &[])),
            "allow",
            "{agent}"
        );
    }
}

#[test]
fn no_data_directory_blocks() {
    let e = env();
    for agent in AGENTS {
        let (shell, field, _, _) = tools(agent);
        let good = payload(&e, agent, shell, json!({ field: "git status" }));
        let mut c = e.command(&["hook", agent]);
        c.env_remove("TOOLGATE_DATA_DIR")
            .env_remove("HOME")
            .env_remove("XDG_DATA_HOME");
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let _ = child.stdin.take().unwrap().write_all(good.as_bytes());
        let o = child.wait_with_output().unwrap();
        assert_eq!(verdict(agent, &o), "block", "{agent}: {o:?}");
    }
}

#[test]
fn unknown_events_and_tools() {
    let e = env();
    let o = hook(
        &e,
        "claude-code",
        r#"{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"x"}"#,
        &[],
        &[],
    );
    assert_eq!(verdict("claude-code", &o), "block");
    let o = hook(
        &e,
        "claude-code",
        &payload(&e, "claude-code", "SlashCommand", json!({"command": "/x"})),
        &[],
        &[],
    );
    assert_eq!(verdict("claude-code", &o), "ask");
    let o = hook(&e, "nope", "{}", &[], &[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn mcp_tools_are_judged_by_their_arguments() {
    let e = env();
    let home = e.home.display().to_string();
    let key = payload(
        &e,
        "claude-code",
        "mcp__filesystem__read_text_file",
        json!({"path": format!("{home}/.ssh/id_rsa")}),
    );
    assert_eq!(
        verdict("claude-code", &hook(&e, "claude-code", &key, &[], &[])),
        "block"
    );
    let fetch = payload(
        &e,
        "claude-code",
        "mcp__fetch__fetch",
        json!({"url": "http://127.0.0.1:9/"}),
    );
    assert_eq!(
        verdict("claude-code", &hook(&e, "claude-code", &fetch, &[], &[])),
        "block"
    );
    let plain = payload(
        &e,
        "claude-code",
        "mcp__github__list_issues",
        json!({"repo": "a/b"}),
    );
    assert_eq!(
        verdict("claude-code", &hook(&e, "claude-code", &plain, &[], &[])),
        "ask"
    );
    // A rule naming the server allows it.
    e.write(
        e.base.join("mcp.toml"),
        "[permission]\n\"github__*\" = \"allow\"\n",
    );
    let cfg = e.base.join("mcp.toml").display().to_string();
    let o = hook(&e, "claude-code", &plain, &["--config", &cfg], &[]);
    assert_eq!(verdict("claude-code", &o), "allow", "{o:?}");
}

/// An agent's own MCP servers, seen through its hook, are judged by the
/// gateway's argument walker too: the hook's older scan read a program
/// apart from its arguments, no address without a scheme and no JSON text
/// inside a string, so with the servers allowed by rule these were allowed.
#[test]
fn mcp_arguments_are_judged_as_the_gateway_judges_them() {
    let e = env();
    e.write(
        e.base.join("mcp.toml"),
        "[permission]\n\"shell__*\" = \"allow\"\n\"fetch__*\" = \"allow\"\n",
    );
    let cfg = e.base.join("mcp.toml").display().to_string();
    for (tool, input) in [
        (
            "mcp__shell__run",
            json!({"command": "find", "args": [".", "-exec", "sh", "-c", "cat ~/.ssh/id_rsa", ";"]}),
        ),
        ("mcp__fetch__fetch", json!({"endpoint": "127.0.0.1:9"})),
        (
            "mcp__fetch__fetch",
            json!({"options": "{\"url\": \"http://127.0.0.1:9/admin\"}"}),
        ),
        // The program under a member no list names as a command.
        (
            "mcp__shell__run",
            json!({"program": "sh", "arguments": ["-c", "cat ~/.ssh/id_rsa"]}),
        ),
        // A secret file named inside code the tool runs.
        (
            "mcp__shell__run",
            json!({"interpreter": "python3", "code": format!("print(open(\"{}/.ssh/id_rsa\").read())", e.home.display())}),
        ),
    ] {
        let call = payload(&e, "claude-code", tool, input.clone());
        let o = hook(&e, "claude-code", &call, &["--config", &cfg], &[]);
        assert_ne!(verdict("claude-code", &o), "allow", "{tool} {input}: {o:?}");
    }
    // What the rule allows and names nothing stays allowed.
    let plain = payload(&e, "claude-code", "mcp__fetch__fetch", json!({"limit": 5}));
    let o = hook(&e, "claude-code", &plain, &["--config", &cfg], &[]);
    assert_eq!(verdict("claude-code", &o), "allow", "{o:?}");
}

#[test]
fn decisions_and_reported_outcomes_are_in_the_audit_log() {
    let e = env();
    let p = payload(&e, "claude-code", "Bash", json!({"command": "git status"}));
    assert_eq!(
        verdict("claude-code", &hook(&e, "claude-code", &p, &[], &[])),
        "allow"
    );
    let post = json!({"session_id": "s1", "cwd": e.ws, "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "git status"}, "tool_use_id": "call-1", "tool_response": {"stdout": "clean"}});
    let o = hook(&e, "claude-code", &post.to_string(), &[], &[]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let log = e.command(&["log", "--json"]).output().unwrap();
    let events: Vec<Value> = String::from_utf8_lossy(&log.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|v| v["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "permission.requested",
            "permission.resolved",
            "tool.completed"
        ],
        "{events:?}"
    );
    for ev in &events {
        assert_eq!(ev["session_id"], "claude-code:s1");
        assert_eq!(ev["call_id"], "call-1");
    }
    let verify = e.command(&["log", "verify"]).output().unwrap();
    assert!(verify.status.success(), "{verify:?}");
}

/// `toolgate import` of each agent's realistic rules, checked against what
/// the agent itself would decide on a table of commands.
#[test]
fn imported_rules_decide_as_the_agent_would() {
    let e = env();
    let files = [
        (
            "claude-code",
            "settings.json",
            r#"{"permissions": {
                "allow": ["Bash(npm run test:*)", "Bash(git push:*)", "Read(./**)", "Edit(./src/**)"],
                "ask": ["Bash(git push:*)"],
                "deny": ["Bash(git push --force:*)", "Bash(curl:*)"]},
               "env": {"X": "1"}}"#,
        ),
        (
            "codex",
            "default.rules",
            "prefix_rule(pattern = [\"npm\", \"run\", \"test\"], decision = \"allow\")\n\
             prefix_rule(pattern = [\"git\", \"push\"], decision = \"allow\")\n\
             prefix_rule(pattern = [\"git\", \"push\"], decision = \"prompt\")\n\
             prefix_rule(pattern = [\"git\", \"push\", \"--force\"], decision = \"forbidden\")\n\
             prefix_rule(pattern = [\"curl\"], decision = \"forbidden\")\n",
        ),
        (
            "gemini",
            "policy.toml",
            "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"npm run test\"\ndecision = \"allow\"\npriority = 100\n\n\
             [[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"git push\"\ndecision = \"ask_user\"\npriority = 200\n\n\
             [[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = [\"git push --force\", \"curl\"]\ndecision = \"deny\"\npriority = 300\n",
        ),
        (
            "opencode",
            "opencode.json",
            r#"{"permission": {"bash": {"*": "ask", "npm run test*": "allow", "git push*": "ask", "git push --force*": "deny", "curl *": "deny"}}}"#,
        ),
    ];
    // (command, what each agent decides with the rules above)
    let table = [
        ("npm run test", "allow"),
        ("npm run test -- --watch=false", "allow"),
        ("git push origin main", "ask"),
        ("git push --force origin main", "deny"),
        ("curl https://example.com", "deny"),
    ];
    for (agent, name, text) in files {
        let file = e.base.join(name);
        e.write(&file, text);
        let o = e
            .command(&["import", agent, file.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{agent}: {o:?}");
        let config = e.base.join(format!("{agent}.toml"));
        std::fs::write(&config, &o.stdout).unwrap();
        for (command, expected) in table {
            let c = e
                .command(&[
                    "check",
                    "--json",
                    "--config",
                    config.to_str().unwrap(),
                    "bash",
                    &json!({"command": command}).to_string(),
                ])
                .output()
                .unwrap();
            let v: Value =
                serde_json::from_slice(&c.stdout).unwrap_or_else(|_| panic!("{agent}: {c:?}"));
            assert_eq!(
                v["decision"],
                expected,
                "{agent} `{command}`: {v}\n{}",
                String::from_utf8_lossy(&o.stdout)
            );
        }
    }
}

/// A payload, the flags and the variables of one hook process.
type Case<'a> = (&'a str, Vec<&'a str>, Vec<(&'a str, &'a str)>);

#[test]
fn the_hook_only_program_answers_as_toolgate_hook_does() {
    let e = env();
    let home = e.home.display().to_string();
    for agent in AGENTS {
        let (shell, field, _, _) = tools(agent);
        let good = payload(&e, agent, shell, json!({ field: "git status" }));
        let key = payload(
            &e,
            agent,
            shell,
            json!({ field: format!("cat {home}/.ssh/id_rsa") }),
        );
        let cases: Vec<Case> = vec![
            (&good, vec![], vec![]),
            (&good, vec!["--mode", "auto"], vec![]),
            (&key, vec![], vec![]),
            ("garbage {", vec![], vec![]),
            (&good, vec![], vec![("TOOLGATE_HOOK_TEST_PANIC", "1")]),
            (
                &good,
                vec![],
                vec![
                    ("TOOLGATE_HOOK_TEST_SLEEP_MS", "5000"),
                    ("TOOLGATE_HOOK_BUDGET_MS", "300"),
                ],
            ),
        ];
        for (input, args, vars) in cases {
            let full = verdict(agent, &hook(&e, agent, input, &args, &vars));
            let only = hook_only(&e, agent, input, &args, &vars);
            assert_eq!(
                verdict(agent, &only),
                full,
                "{agent} {input} {args:?} {vars:?}: {only:?}"
            );
        }
        // Arguments it cannot use block the call.
        for args in [&["--mode", "sideways"][..], &["--bogus"], &["--root"]] {
            let o = hook_only(&e, agent, &good, args, &[]);
            assert_eq!(verdict(agent, &o), "block", "{agent} {args:?}: {o:?}");
            assert!(
                String::from_utf8_lossy(&o.stderr).contains("toolgate:"),
                "{o:?}"
            );
        }
    }
    // No agent named, or one it does not know: exit 2.
    let o = hook_only(&e, "nobody", "{}", &[], &[]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
}

#[test]
fn install_writes_the_hook_only_program_and_status_finds_it() {
    let e = env();
    let install = e
        .command(&["hook", "install", "claude-code"])
        .output()
        .unwrap();
    assert!(install.status.success(), "{install:?}");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(e.ws.join(".claude/settings.json")).unwrap())
            .unwrap();
    let command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let beside =
        std::path::Path::new(env!("CARGO_BIN_EXE_toolgate")).with_file_name("toolgate-hook");
    let beside = std::fs::canonicalize(beside).unwrap();
    assert_eq!(
        command,
        format!("{} claude-code || exit 2", beside.display()),
        "{settings}"
    );
    let status = e
        .command(&["hook", "status", "claude-code", "--project"])
        .output()
        .unwrap();
    assert!(status.status.success(), "{status:?}");
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("fires and blocks on failure"),
        "{status:?}"
    );
    let uninstall = e
        .command(&["hook", "uninstall", "claude-code"])
        .output()
        .unwrap();
    assert!(uninstall.status.success(), "{uninstall:?}");
    assert!(!e.ws.join(".claude/settings.json").exists());
}

#[test]
fn gemini_read_many_files_reaching_a_secret_through_include_a_glob_or_a_directory_is_blocked() {
    // Gemini's `read_many_files` reads the content of every file that
    // `paths` and `include` match, a directory meaning everything below it;
    // judging only the first field, or a glob as a listing, let `.env`
    // through. A routine read of the sources stays allowed.
    let e = env();
    e.write(e.ws.join("config/.env.production"), "SECRET=2\n");
    for input in [
        json!({"paths": ["src/lib.rs"], "include": [".env"]}),
        json!({"paths": ["**/.env"]}),
        json!({"paths": [".en?"]}),
        json!({"paths": ["config/*"]}),
        json!({"paths": ["config"]}),
        json!({"paths": ["src/**"], "include": ["config/**"]}),
    ] {
        let o = hook(
            &e,
            "gemini",
            &payload(&e, "gemini", "read_many_files", input.clone()),
            &[],
            &[],
        );
        assert_ne!(verdict("gemini", &o), "allow", "{input}: {o:?}");
    }
    for input in [
        json!({"paths": ["src/**"]}),
        json!({"paths": ["src"]}),
        json!({"paths": ["src/*.rs"], "include": ["src/lib.rs"]}),
    ] {
        let o = hook(
            &e,
            "gemini",
            &payload(&e, "gemini", "read_many_files", input.clone()),
            &[],
            &[],
        );
        assert_eq!(verdict("gemini", &o), "allow", "{input}: {o:?}");
    }
}
