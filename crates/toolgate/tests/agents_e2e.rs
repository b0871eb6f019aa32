//! The real Claude Code, Codex, Gemini and OpenCode CLIs (from npm, `scripts/setup-agents.sh`)
//! driven offline against a stand-in model on loopback that plays a fixed
//! script of tool calls, with `toolgate hook AGENT` as their hook:
//! dangerous calls do not run, a routine session runs without an ask in mode
//! auto, and a broken toolgate blocks the call.
//!
//! Without the agent installed each test says so on stderr and passes:
//! `scripts/test` installs it first.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use support::cli_env::CliEnv as Env;

fn agents_bin() -> PathBuf {
    match std::env::var_os("TOOLGATE_AGENTS_DIR") {
        Some(dir) => PathBuf::from(dir).join("node_modules/.bin"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/agents/node_modules/.bin"),
    }
}

fn agent_bin(name: &str) -> Option<PathBuf> {
    let bin = agents_bin().join(name);
    if bin.exists() {
        Some(bin)
    } else {
        eprintln!(
            "SKIPPED: {name} is not installed at {} (run scripts/setup-agents.sh)",
            bin.display()
        );
        None
    }
}

fn claude_bin() -> Option<PathBuf> {
    agent_bin("claude")
}

/// The stand-in model, killed when dropped.
struct Model {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Model {
    fn start(e: &Env, script: Value) -> Model {
        Model::start_with(e, "anthropic_model.py", script)
    }

    fn start_with(e: &Env, server: &str, script: Value) -> Model {
        let script_file = e.base.join("script.json");
        std::fs::write(&script_file, script.to_string()).unwrap();
        let log = e.base.join("model-log.jsonl");
        let server = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/agents")
            .join(server);
        let mut child = Command::new("python3")
            .arg(server)
            .arg(&script_file)
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        Model {
            port: line.trim().parse().unwrap(),
            child,
            log,
        }
    }

    /// Everything the model was sent.
    fn seen(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// Runs `claude -p` in the workspace with `hook_command` as its PreToolUse
/// hook; returns the final `result` message.
fn run_claude(
    e: &Env,
    claude: &Path,
    model: &Model,
    hook_command: &str,
    vars: &[(&str, &str)],
) -> Value {
    let settings = e.base.join("claude-settings.json");
    let hooks = json!({"hooks": {
        "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": hook_command, "timeout": 30}]}],
        "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": hook_command, "timeout": 30}]}],
    }});
    std::fs::write(&settings, hooks.to_string()).unwrap();
    let mut c = Command::new(claude);
    c.args([
        "-p",
        "go",
        "--output-format",
        "stream-json",
        "--verbose",
        "--settings",
    ])
    .arg(&settings)
    // Claude Code's own permissions let these tools run: only the hook decides.
    .args(["--allowedTools", "Bash,Read,Write,Edit,Grep,Glob"])
    .current_dir(&e.ws)
    .stdin(Stdio::null())
    .env("HOME", &e.home)
    .env("TOOLGATE_DATA_DIR", &e.data)
    .env("TOOLGATE_MANAGED_CONFIG", e.home.join("no-managed.toml"))
    .env(
        "ANTHROPIC_BASE_URL",
        format!("http://127.0.0.1:{}", model.port),
    )
    .env("ANTHROPIC_API_KEY", "sk-test")
    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    .env("DISABLE_AUTOUPDATER", "1")
    .env("DISABLE_TELEMETRY", "1");
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "result")
        .unwrap_or_else(|| panic!("no result from claude: {out:?}"))
}

/// The hook-only program, as `toolgate hook install` writes it (Gemini's
/// tests run `toolgate hook AGENT`, so both forms run end to end).
fn toolgate_hook(mode: &str) -> String {
    format!(
        "{} claude-code --mode {mode} || exit 2",
        env!("CARGO_BIN_EXE_toolgate-hook")
    )
}

fn world() -> Env {
    let e = Env::new();
    e.write(e.ws.join("a.txt"), "hello\n");
    e.write(e.ws.join(".env"), "ENV-SECRET-456\n");
    // As projects do: an agent's own search skips what git ignores, and a
    // search of a directory holding a `.env` git does not ignore is refused.
    e.write(e.ws.join(".gitignore"), ".env\n");
    e.write(e.ws.join("test.sh"), "#!/bin/sh\necho TESTS-PASSED\n");
    let mut perm = std::fs::metadata(e.ws.join("test.sh"))
        .unwrap()
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(e.ws.join("test.sh"), perm).unwrap();
    e.write(e.home.join(".ssh/id_rsa"), "KEY-SECRET-123\n");
    e.write(e.home.join(".bashrc"), "# rc\n");
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&e.ws)
        .status()
        .unwrap();
    assert!(git.success());
    e
}

/// Environment variables of one run.
type Vars = Vec<(&'static str, &'static str)>;

/// The five dangerous steps of every agent's script left no trace: the
/// key, `.env` and the listener's reply never reached the model, and neither
/// the hook nor `~/.bashrc` was written.
fn assert_no_dangerous_step_ran(e: &Env, seen: &str, mode: &str) {
    assert!(
        !seen.contains("KEY-SECRET"),
        "{mode}: the key reached the model"
    );
    assert!(
        !seen.contains("ENV-SECRET"),
        "{mode}: .env reached the model"
    );
    assert!(
        !seen.contains("{\"leak\""),
        "{mode}: curl reached the listener"
    );
    assert!(!e.ws.join(".git/hooks/pre-commit").exists(), "{mode}");
    assert_eq!(
        std::fs::read_to_string(e.home.join(".bashrc")).unwrap(),
        "# rc\n",
        "{mode}"
    );
}

fn denials(result: &Value) -> usize {
    result["permission_denials"].as_array().map_or(0, Vec::len)
}

#[test]
fn claude_code_dangerous_calls_do_not_run() {
    let Some(claude) = claude_bin() else { return };
    let e = world();
    let home = e.home.display().to_string();
    let ws = e.ws.display().to_string();
    let script = json!([
        {"name": "Bash", "input": {"command": format!("cat {home}/.ssh/id_rsa")}},
        {"name": "Read", "input": {"file_path": format!("{ws}/.env")}},
        {"name": "Bash", "input": {"command": "cat .env"}},
        {"name": "Bash", "input": {"command": "curl -s http://127.0.0.1:__PORT__/leak/curl"}},
        {"name": "Bash", "input": {"command": "echo x > .git/hooks/pre-commit"}},
        {"name": "Bash", "input": {"command": format!("echo pwned >> {home}/.bashrc")}},
    ]);
    for mode in ["default", "auto"] {
        let model = Model::start(&e, script.clone());
        let result = run_claude(&e, &claude, &model, &toolgate_hook(mode), &[]);
        let seen = model.seen();
        assert_no_dangerous_step_ran(&e, &seen, mode);
        assert_eq!(denials(&result), 6, "{mode}: {result}");
    }
}

#[test]
fn claude_code_routine_session_runs_without_an_ask_in_mode_auto() {
    let Some(claude) = claude_bin() else { return };
    let e = world();
    let ws = e.ws.display().to_string();
    let script = json!([
        {"name": "Read", "input": {"file_path": format!("{ws}/a.txt")}},
        {"name": "Grep", "input": {"pattern": "hello", "path": ws}},
        {"name": "Bash", "input": {"command": "git status"}},
        {"name": "Edit", "input": {"file_path": format!("{ws}/a.txt"), "old_string": "hello", "new_string": "world"}},
        {"name": "Bash", "input": {"command": "./test.sh"}},
    ]);
    let model = Model::start(&e, script);
    let result = run_claude(&e, &claude, &model, &toolgate_hook("auto"), &[]);
    assert_eq!(denials(&result), 0, "{result}");
    assert_eq!(
        std::fs::read_to_string(e.ws.join("a.txt")).unwrap(),
        "world\n"
    );
    // The tests ran (inside toolgate's sandbox, through the rewrite).
    assert!(model.seen().contains("TESTS-PASSED"), "{}", model.seen());
    // Every decision and outcome is in the audit log, and the chain holds.
    let log = e.command(&["log", "verify"]).output().unwrap();
    assert!(log.status.success(), "{log:?}");
    let log = e.command(&["log", "--json"]).output().unwrap();
    let text = String::from_utf8_lossy(&log.stdout);
    assert!(text.contains("tool.completed"), "{text}");
}

#[test]
fn claude_code_a_broken_toolgate_blocks() {
    let Some(claude) = claude_bin() else { return };
    let e = world();
    let script = json!([{"name": "Bash", "input": {"command": "echo ran > ran.txt"}}]);
    let missing = "/nonexistent/toolgate hook claude-code --mode auto || exit 2".to_string();
    let cases: Vec<(&str, String, Vars)> = vec![
        ("binary missing", missing, vec![]),
        (
            "panic",
            toolgate_hook("auto"),
            vec![("TOOLGATE_HOOK_TEST_PANIC", "1")],
        ),
        (
            "time budget",
            toolgate_hook("auto"),
            vec![
                ("TOOLGATE_HOOK_TEST_SLEEP_MS", "5000"),
                ("TOOLGATE_HOOK_BUDGET_MS", "300"),
            ],
        ),
    ];
    for (what, hook, vars) in cases {
        let model = Model::start(&e, script.clone());
        let result = run_claude(&e, &claude, &model, &hook, &vars);
        assert!(!e.ws.join("ran.txt").exists(), "{what}: the call ran");
        assert_eq!(denials(&result), 1, "{what}: {result}");
    }
    // The same call with a working toolgate runs: the blocks were the faults'.
    let model = Model::start(&e, script);
    let result = run_claude(&e, &claude, &model, &toolgate_hook("auto"), &[]);
    assert_eq!(denials(&result), 0, "{result}");
    assert!(e.ws.join("ran.txt").exists());
}

/// Runs `gemini -p` (approval mode yolo: Gemini's own policy lets every
/// call through, only the hook decides) with `hook_command` as its
/// BeforeTool and AfterTool hook; returns the stream-json events.
fn run_gemini(
    e: &Env,
    gemini: &Path,
    model: &Model,
    hook_command: &str,
    vars: &[(&str, &str)],
) -> Vec<Value> {
    let dir = e.home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let hook = json!([{"matcher": ".*", "hooks": [{"type": "command", "command": hook_command, "timeout": 30000}]}]);
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "hooks": {"BeforeTool": hook, "AfterTool": hook},
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    let trusted = dir.join("trustedFolders.json");
    std::fs::write(
        &trusted,
        json!({ e.ws.display().to_string(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    let mut c = Command::new(gemini);
    c.args([
        "-p",
        "go",
        "--output-format",
        "stream-json",
        "--approval-mode",
        "yolo",
    ])
    .current_dir(&e.ws)
    .stdin(Stdio::null())
    .env("HOME", &e.home)
    .env("TOOLGATE_DATA_DIR", &e.data)
    .env("TOOLGATE_MANAGED_CONFIG", e.home.join("no-managed.toml"))
    .env(
        "GOOGLE_GEMINI_BASE_URL",
        format!("http://127.0.0.1:{}", model.port),
    )
    .env("GEMINI_API_KEY", "test-key")
    .env("GEMINI_CLI_TRUSTED_FOLDERS_PATH", &trusted);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    assert!(
        events.iter().any(|v| v["type"] == "result"),
        "no result from gemini: {out:?}"
    );
    events
}

/// Tool results Gemini reports as errors (a blocked call is one).
fn gemini_blocked(events: &[Value]) -> usize {
    events
        .iter()
        .filter(|v| v["type"] == "tool_result" && v["status"] == "error")
        .count()
}

fn gemini_hook(mode: &str, config: Option<&Path>) -> String {
    let config = config.map_or(String::new(), |c| format!(" --config {}", c.display()));
    format!(
        "{} hook gemini --mode {mode}{config} || exit 2",
        env!("CARGO_BIN_EXE_toolgate")
    )
}

#[test]
fn gemini_dangerous_calls_do_not_run() {
    let Some(gemini) = agent_bin("gemini") else {
        return;
    };
    let e = world();
    let home = e.home.display().to_string();
    let ws = e.ws.display().to_string();
    let script = json!([
        {"name": "run_shell_command", "args": {"command": format!("cat {home}/.ssh/id_rsa")}},
        {"name": "read_file", "args": {"file_path": format!("{ws}/.env")}},
        {"name": "run_shell_command", "args": {"command": "cat .env"}},
        {"name": "run_shell_command", "args": {"command": "curl -s http://127.0.0.1:__PORT__/leak/curl"}},
        {"name": "run_shell_command", "args": {"command": "echo x > .git/hooks/pre-commit"}},
        {"name": "run_shell_command", "args": {"command": format!("echo pwned >> {home}/.bashrc")}},
    ]);
    for mode in ["default", "auto"] {
        let model = Model::start_with(&e, "gemini_model.py", script.clone());
        let events = run_gemini(&e, &gemini, &model, &gemini_hook(mode, None), &[]);
        let seen = model.seen();
        assert_no_dangerous_step_ran(&e, &seen, mode);
        assert_eq!(gemini_blocked(&events), 6, "{mode}: {events:?}");
    }
}

#[test]
fn gemini_routine_session_runs_without_an_ask_in_mode_auto() {
    let Some(gemini) = agent_bin("gemini") else {
        return;
    };
    let e = world();
    let ws = e.ws.display().to_string();
    // Gemini cannot run a command rewritten into toolgate's sandbox: the
    // person allows the project's test command by a rule.
    let config = e.base.join("allow-tests.toml");
    e.write(&config, "[permission.bash]\n\"./test.sh\" = \"allow\"\n");
    let script = json!([
        {"name": "read_file", "args": {"file_path": format!("{ws}/a.txt")}},
        {"name": "search_file_content", "args": {"pattern": "hello"}},
        {"name": "run_shell_command", "args": {"command": "git status"}},
        {"name": "replace", "args": {"file_path": format!("{ws}/a.txt"), "old_string": "hello", "new_string": "world", "instruction": "rename"}},
        {"name": "run_shell_command", "args": {"command": "./test.sh"}},
    ]);
    let model = Model::start_with(&e, "gemini_model.py", script);
    let events = run_gemini(
        &e,
        &gemini,
        &model,
        &gemini_hook("auto", Some(&config)),
        &[],
    );
    assert_eq!(gemini_blocked(&events), 0, "{events:?}");
    assert_eq!(
        std::fs::read_to_string(e.ws.join("a.txt")).unwrap(),
        "world\n"
    );
    assert!(model.seen().contains("TESTS-PASSED"));
}

#[test]
fn gemini_a_broken_toolgate_blocks() {
    let Some(gemini) = agent_bin("gemini") else {
        return;
    };
    let e = world();
    let script = json!([{"name": "run_shell_command", "args": {"command": "echo ran > ran.txt"}}]);
    let missing = "/nonexistent/toolgate hook gemini --mode auto || exit 2".to_string();
    let cases: Vec<(&str, String, Vars)> = vec![
        ("binary missing", missing, vec![]),
        (
            "panic",
            gemini_hook("auto", None),
            vec![("TOOLGATE_HOOK_TEST_PANIC", "1")],
        ),
        (
            "time budget",
            gemini_hook("auto", None),
            vec![
                ("TOOLGATE_HOOK_TEST_SLEEP_MS", "5000"),
                ("TOOLGATE_HOOK_BUDGET_MS", "300"),
            ],
        ),
    ];
    for (what, hook, vars) in cases {
        let model = Model::start_with(&e, "gemini_model.py", script.clone());
        let events = run_gemini(&e, &gemini, &model, &hook, &vars);
        assert!(!e.ws.join("ran.txt").exists(), "{what}: the call ran");
        assert_eq!(gemini_blocked(&events), 1, "{what}: {events:?}");
    }
    let model = Model::start_with(&e, "gemini_model.py", script);
    let events = run_gemini(&e, &gemini, &model, &gemini_hook("auto", None), &[]);
    assert_eq!(gemini_blocked(&events), 0, "{events:?}");
    assert!(e.ws.join("ran.txt").exists());
}

/// Runs `codex exec` (its own approvals off and its own sandbox off: only
/// the hook decides) with `hook_command` as its PreToolUse and PostToolUse
/// hook, trusted for the run; returns the JSON events. `CODEX_HOME` is under
/// the target directory, not `/tmp` (Codex's Linux helper refuses that).
fn run_codex(
    e: &Env,
    codex: &Path,
    model: &Model,
    hook_command: &str,
    vars: &[(&str, &str)],
) -> Vec<Value> {
    let home = e.home.join(".codex");
    std::fs::create_dir_all(&home).unwrap();
    let config = format!(
        r#"model_provider = "local"
model = "gpt-5"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.local]
name = "local"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "LOCAL_MODEL_KEY"
wire_api = "responses"

[features]
plugins = false
apps = false
remote_plugin = false

[[hooks.PreToolUse]]
[[hooks.PreToolUse.hooks]]
type = "command"
command = {hook}
timeout = 30

[[hooks.PostToolUse]]
[[hooks.PostToolUse.hooks]]
type = "command"
command = {hook}
timeout = 30
"#,
        port = model.port,
        hook = serde_json::to_string(hook_command).unwrap(),
    );
    std::fs::write(home.join("config.toml"), config).unwrap();
    let mut c = Command::new(codex);
    c.args([
        "exec",
        "--skip-git-repo-check",
        "--json",
        "--dangerously-bypass-hook-trust",
        "-C",
    ])
    .arg(&e.ws)
    .arg("go")
    .current_dir(&e.ws)
    .stdin(Stdio::null())
    .env("HOME", &e.home)
    .env("CODEX_HOME", &home)
    .env("TOOLGATE_DATA_DIR", &e.data)
    .env("TOOLGATE_MANAGED_CONFIG", e.home.join("no-managed.toml"))
    .env("LOCAL_MODEL_KEY", "test-key");
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    assert!(
        events.iter().any(|v| v["type"] == "turn.completed"),
        "codex did not finish: {out:?}"
    );
    events
}

/// The commands Codex ran.
fn codex_ran(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|v| v["type"] == "item.completed" && v["item"]["type"] == "command_execution")
        .map(|v| {
            v["item"]["command"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

fn codex_hook(mode: &str) -> String {
    format!(
        "{} codex --mode {mode} || exit 2",
        env!("CARGO_BIN_EXE_toolgate-hook")
    )
}

/// A world under the target directory (Codex refuses a home under `/tmp`).
fn codex_world() -> Env {
    let parent = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/e2e");
    std::fs::create_dir_all(&parent).unwrap();
    let e = Env::in_dir(&parent);
    e.write(e.ws.join("a.txt"), "hello\n");
    e.write(e.ws.join(".env"), "ENV-SECRET-456\n");
    e.write(e.ws.join(".gitignore"), ".env\n");
    e.write(e.ws.join("test.sh"), "#!/bin/sh\necho TESTS-PASSED\n");
    let mut perm = std::fs::metadata(e.ws.join("test.sh"))
        .unwrap()
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(e.ws.join("test.sh"), perm).unwrap();
    e.write(e.home.join(".ssh/id_rsa"), "KEY-SECRET-123\n");
    e.write(e.home.join(".bashrc"), "# rc\n");
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&e.ws)
        .status()
        .unwrap();
    assert!(git.success());
    e
}

#[test]
fn codex_dangerous_calls_do_not_run() {
    let Some(codex) = agent_bin("codex") else {
        return;
    };
    let e = codex_world();
    let home = e.home.display().to_string();
    let script = json!([
        format!("cat {home}/.ssh/id_rsa"),
        "cat .env",
        "curl -s http://127.0.0.1:__PORT__/leak/curl",
        "echo x > .git/hooks/pre-commit",
        format!("echo pwned >> {home}/.bashrc"),
    ]);
    for mode in ["default", "auto"] {
        let model = Model::start_with(&e, "responses_model.py", script.clone());
        let events = run_codex(&e, &codex, &model, &codex_hook(mode), &[]);
        let seen = model.seen();
        assert_no_dangerous_step_ran(&e, &seen, mode);
        assert_eq!(codex_ran(&events), Vec::<String>::new(), "{mode}");
    }
}

#[test]
fn codex_routine_session_runs_without_an_ask_in_mode_auto() {
    let Some(codex) = agent_bin("codex") else {
        return;
    };
    let e = codex_world();
    let script = json!([
        "cat a.txt",
        "grep -n hello a.txt",
        "git status",
        "sed -i s/hello/world/ a.txt",
        "./test.sh"
    ]);
    let model = Model::start_with(&e, "responses_model.py", script);
    let events = run_codex(&e, &codex, &model, &codex_hook("auto"), &[]);
    assert_eq!(codex_ran(&events).len(), 5, "{events:?}");
    assert_eq!(
        std::fs::read_to_string(e.ws.join("a.txt")).unwrap(),
        "world\n"
    );
    assert!(model.seen().contains("TESTS-PASSED"));
}

#[test]
fn codex_a_broken_toolgate_blocks() {
    let Some(codex) = agent_bin("codex") else {
        return;
    };
    let e = codex_world();
    let script = json!(["echo ran > ran.txt"]);
    let missing = "/nonexistent/toolgate hook codex --mode auto || exit 2".to_string();
    let cases: Vec<(&str, String, Vars)> = vec![
        ("binary missing", missing, vec![]),
        (
            "panic",
            codex_hook("auto"),
            vec![("TOOLGATE_HOOK_TEST_PANIC", "1")],
        ),
        (
            "time budget",
            codex_hook("auto"),
            vec![
                ("TOOLGATE_HOOK_TEST_SLEEP_MS", "5000"),
                ("TOOLGATE_HOOK_BUDGET_MS", "300"),
            ],
        ),
    ];
    for (what, hook, vars) in cases {
        let model = Model::start_with(&e, "responses_model.py", script.clone());
        let events = run_codex(&e, &codex, &model, &hook, &vars);
        assert!(!e.ws.join("ran.txt").exists(), "{what}: the call ran");
        assert!(codex_ran(&events).is_empty(), "{what}: {events:?}");
    }
    let model = Model::start_with(&e, "responses_model.py", script);
    run_codex(&e, &codex, &model, &codex_hook("auto"), &[]);
    assert!(e.ws.join("ran.txt").exists());
}

/// Runs `opencode run` with toolgate's plugin (as `toolgate hook install
/// opencode` writes it, with `--mode MODE` or a failing variant) and
/// OpenCode's own permissions set to allow: only the plugin decides.
fn run_opencode(
    e: &Env,
    opencode: &Path,
    model: &Model,
    plugin_args: &str,
    exe: &str,
    vars: &[(&str, &str)],
) -> Vec<Value> {
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "provider": {"local": {"npm": "@ai-sdk/openai-compatible", "name": "local",
            "options": {"baseURL": format!("http://127.0.0.1:{}/v1", model.port), "apiKey": "test-key"},
            "models": {"stand-in": {"name": "stand-in"}}}},
        "permission": {"bash": "allow", "edit": "allow", "read": "allow", "external_directory": "allow"},
    });
    std::fs::write(e.ws.join("opencode.json"), config.to_string()).unwrap();
    let install = e
        .command(&["hook", "install", "opencode"])
        .output()
        .unwrap();
    assert!(install.status.success(), "{install:?}");
    let plugin = e.ws.join(".opencode/plugin/toolgate.js");
    let text = std::fs::read_to_string(&plugin)
        .unwrap()
        .replace(
            "[\"hook\", \"opencode\"]",
            &format!("[\"hook\", \"opencode\"{plugin_args}]"),
        )
        .replace(
            &format!("\"{}\"", env!("CARGO_BIN_EXE_toolgate")),
            &format!("\"{exe}\""),
        );
    std::fs::write(&plugin, text).unwrap();
    let mut c = Command::new(opencode);
    c.args([
        "run",
        "--format",
        "json",
        "--model",
        "local/stand-in",
        "--dir",
    ])
    .arg(&e.ws)
    .arg("go")
    .current_dir(&e.ws)
    .stdin(Stdio::null())
    .env("HOME", &e.home)
    .env("TOOLGATE_DATA_DIR", &e.data)
    .env("TOOLGATE_MANAGED_CONFIG", e.home.join("no-managed.toml"))
    .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
    .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
    .env("OPENCODE_DISABLE_SHARE", "1");
    // OpenCode's grep runs `rg`: the one Codex's npm package brings, when
    // the machine has none.
    if let Some(rg) = ripgrep_dir() {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![rg];
        dirs.extend(std::env::split_paths(&path));
        c.env("PATH", std::env::join_paths(dirs).unwrap());
    }
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

fn ripgrep_dir() -> Option<PathBuf> {
    let vendor = agents_bin().join("../@openai/codex-linux-x64/vendor");
    std::fs::read_dir(vendor)
        .ok()?
        .filter_map(Result::ok)
        .map(|d| d.path().join("codex-path"))
        .find(|d| d.join("rg").exists())
}

/// The tool calls OpenCode completed (ran), by command or path.
fn opencode_ran(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|v| v["type"] == "tool_use" && v["part"]["state"]["status"] == "completed")
        .map(|v| v["part"]["state"]["input"].clone())
        .collect()
}

/// A world under the target directory: OpenCode installs its provider
/// package into the home directory, which the next run reuses.
fn opencode_world() -> Env {
    codex_world()
}

#[test]
fn opencode_dangerous_calls_do_not_run() {
    let Some(opencode) = agent_bin("opencode") else {
        return;
    };
    let e = opencode_world();
    let home = e.home.display().to_string();
    let ws = e.ws.display().to_string();
    let bash = |c: String| json!({"name": "bash", "args": {"command": c, "description": "step"}});
    let script = json!([
        bash(format!("cat {home}/.ssh/id_rsa")),
        {"name": "read", "args": {"filePath": format!("{ws}/.env")}},
        bash("curl -s http://127.0.0.1:__PORT__/leak/curl".into()),
        bash("echo x > .git/hooks/pre-commit".into()),
        bash(format!("echo pwned >> {home}/.bashrc")),
    ]);
    let model = Model::start_with(&e, "chat_model.py", script);
    let exe = env!("CARGO_BIN_EXE_toolgate");
    let events = run_opencode(&e, &opencode, &model, ", \"--mode\", \"auto\"", exe, &[]);
    let seen = model.seen();
    assert!(
        seen.contains("\"role\": \"tool\""),
        "OpenCode did not run the script: {events:?}"
    );
    assert_no_dangerous_step_ran(&e, &seen, "auto");
    assert_eq!(opencode_ran(&events), Vec::<Value>::new());
}

#[test]
fn opencode_routine_session_and_a_broken_toolgate() {
    let Some(opencode) = agent_bin("opencode") else {
        return;
    };
    let e = opencode_world();
    let ws = e.ws.display().to_string();
    let bash = |c: &str| json!({"name": "bash", "args": {"command": c, "description": "step"}});
    let script = json!([
        {"name": "read", "args": {"filePath": format!("{ws}/a.txt")}},
        {"name": "grep", "args": {"pattern": "hello", "path": ws}},
        bash("git status"),
        {"name": "edit", "args": {"filePath": format!("{ws}/a.txt"), "oldString": "hello", "newString": "world"}},
        bash("./test.sh"),
    ]);
    let exe = env!("CARGO_BIN_EXE_toolgate");
    let model = Model::start_with(&e, "chat_model.py", script);
    let events = run_opencode(&e, &opencode, &model, ", \"--mode\", \"auto\"", exe, &[]);
    assert_eq!(opencode_ran(&events).len(), 5, "{events:?}");
    assert_eq!(
        std::fs::read_to_string(e.ws.join("a.txt")).unwrap(),
        "world\n"
    );
    assert!(model.seen().contains("TESTS-PASSED"));
    // Broken: the call that just ran is blocked.
    let script = json!([bash("echo ran > ran.txt")]);
    let cases: Vec<(&str, &str, Vars)> = vec![
        ("binary missing", "/nonexistent/toolgate", vec![]),
        ("panic", exe, vec![("TOOLGATE_HOOK_TEST_PANIC", "1")]),
        (
            "time budget",
            exe,
            vec![
                ("TOOLGATE_HOOK_TEST_SLEEP_MS", "5000"),
                ("TOOLGATE_HOOK_BUDGET_MS", "300"),
            ],
        ),
    ];
    for (what, program, vars) in cases {
        let model = Model::start_with(&e, "chat_model.py", script.clone());
        let events = run_opencode(
            &e,
            &opencode,
            &model,
            ", \"--mode\", \"auto\"",
            program,
            &vars,
        );
        assert!(!e.ws.join("ran.txt").exists(), "{what}: the call ran");
        assert!(opencode_ran(&events).is_empty(), "{what}: {events:?}");
    }
}
