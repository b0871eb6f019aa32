use super::*;

const TG: &str = "/opt/toolgate/bin/toolgate";

fn install(agent: Agent, text: Option<&str>) -> String {
    let cmd = hook_command(Path::new(TG), agent);
    install_text(agent, "f", text, &cmd, Path::new(TG)).unwrap()
}

#[test]
fn claude_code_install_keeps_the_persons_entries_and_order_and_is_idempotent() {
    let mine = r#"{
  "permissions": {"allow": ["Bash(ls)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}]
  },
  "model": "x"
}"#;
    let once = install(Agent::ClaudeCode, Some(mine));
    let twice = install(Agent::ClaudeCode, Some(&once));
    assert_eq!(once, twice);
    let keys: Vec<&str> = ["\"permissions\"", "\"hooks\"", "\"model\""].to_vec();
    let at: Vec<usize> = keys.iter().map(|k| once.find(k).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{once}");
    assert!(once.contains("./lint.sh"));
    let entry = inspect(Agent::ClaudeCode, "f", &once).unwrap();
    assert_eq!(entry.events, ["PreToolUse", "PostToolUse"]);
    assert_eq!(entry.timeout_ms, Some(30_000));
    assert!(fail_open_reasons(Agent::ClaudeCode, &entry, true).is_empty());
    // Uninstall gives back the person's settings.
    let back = uninstall_text(Agent::ClaudeCode, "f", &once)
        .unwrap()
        .unwrap();
    let a: Value = serde_json::from_str(&back).unwrap();
    let b: Value = serde_json::from_str(mine).unwrap();
    assert_eq!(a, b);
}

#[test]
fn fresh_files_and_uninstall_to_nothing() {
    for agent in [
        Agent::ClaudeCode,
        Agent::Gemini,
        Agent::Cursor,
        Agent::Copilot,
        Agent::Codex,
    ] {
        let text = install(agent, None);
        let entry = inspect(agent, "f", &text).unwrap();
        assert!(!entry.commands.is_empty(), "{agent}: {text}");
        assert!(
            entry
                .commands
                .iter()
                .all(|c| c == &hook_command(Path::new(TG), agent))
        );
        assert_eq!(uninstall_text(agent, "f", &text).unwrap(), None, "{agent}");
    }
}

#[test]
fn cursor_entries_fail_closed() {
    let text = install(Agent::Cursor, None);
    let entry = inspect(Agent::Cursor, "f", &text).unwrap();
    assert_eq!(entry.fail_closed, Some(true));
    assert!(entry.events.contains(&"beforeShellExecution".to_string()));
    let open = text.replace("\"failClosed\": true", "\"failClosed\": false");
    let entry = inspect(Agent::Cursor, "f", &open).unwrap();
    let why = fail_open_reasons(Agent::Cursor, &entry, true);
    assert!(why.iter().any(|w| w.contains("failClosed")), "{why:?}");
}

#[test]
fn codex_toml_keeps_comments_and_other_tables() {
    let mine = "# my codex\nmodel = \"o3\"\n\n[features]\nplugins = false # offline\n";
    let once = install(Agent::Codex, Some(mine));
    assert!(once.starts_with("# my codex\nmodel = \"o3\""), "{once}");
    assert!(once.contains("plugins = false # offline"));
    assert!(once.contains("[[hooks.PreToolUse]]"), "{once}");
    assert!(once.contains("[[hooks.PreToolUse.hooks]]"), "{once}");
    assert_eq!(install(Agent::Codex, Some(&once)), once);
    let back = uninstall_text(Agent::Codex, "f", &once).unwrap().unwrap();
    assert_eq!(back.trim(), mine.trim());
    let entry = inspect(Agent::Codex, "f", &once).unwrap();
    let why = fail_open_reasons(Agent::Codex, &entry, true);
    assert!(why.iter().any(|w| w.contains("trust")), "{why:?}");
}

#[test]
fn status_names_what_makes_the_agent_skip_the_hook() {
    let short = r#"{"hooks":{"BeforeTool":[{"matcher":".*","hooks":[{"type":"command","command":"toolgate hook gemini","timeout":2000}]}]}}"#;
    let entry = inspect(Agent::Gemini, "f", short).unwrap();
    let why = fail_open_reasons(Agent::Gemini, &entry, false);
    assert!(why.iter().any(|w| w.contains("not found")), "{why:?}");
    assert!(why.iter().any(|w| w.contains("2000 ms")), "{why:?}");
    let none = inspect(Agent::Gemini, "f", "{}").unwrap();
    assert!(fail_open_reasons(Agent::Gemini, &none, true)[0].contains("not installed"));
    let off = r#"{"disableAllHooks": true, "hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"toolgate hook claude-code"}]}]}}"#;
    let entry = inspect(Agent::ClaudeCode, "f", off).unwrap();
    assert!(
        fail_open_reasons(Agent::ClaudeCode, &entry, true)
            .iter()
            .any(|w| w.contains("disableAllHooks"))
    );
}

#[test]
fn bad_settings_are_errors_not_overwritten() {
    assert!(
        install_text(
            Agent::ClaudeCode,
            "f",
            Some("{oops"),
            "toolgate hook claude-code",
            Path::new(TG)
        )
        .is_err()
    );
    assert!(
        install_text(
            Agent::ClaudeCode,
            "f",
            Some(r#"{"hooks": []}"#),
            "toolgate hook claude-code",
            Path::new(TG)
        )
        .is_err()
    );
    assert!(
        install_text(
            Agent::Codex,
            "f",
            Some("hooks = 1"),
            "toolgate hook codex",
            Path::new(TG)
        )
        .is_err()
    );
}

#[test]
fn opencode_plugin_names_toolgate() {
    let js = install(Agent::OpenCode, None);
    assert!(js.contains("const TOOLGATE = \"/opt/toolgate/bin/toolgate\";"));
    assert!(
        !inspect(Agent::OpenCode, "f", &js)
            .unwrap()
            .commands
            .is_empty()
    );
}

#[test]
fn the_hook_only_program_is_installed_without_the_subcommand_and_recognised() {
    let hook = "/opt/toolgate/bin/toolgate-hook";
    for agent in [
        Agent::ClaudeCode,
        Agent::Gemini,
        Agent::Cursor,
        Agent::Copilot,
        Agent::Codex,
    ] {
        let cmd = hook_command(Path::new(hook), agent);
        assert!(cmd.starts_with(&format!("{hook} {agent}")), "{cmd}");
        // Installed over the `toolgate hook` entry, it replaces it.
        let old = install(agent, None);
        let text = install_text(agent, "f", Some(&old), &cmd, Path::new(TG)).unwrap();
        let entry = inspect(agent, "f", &text).unwrap();
        assert!(!entry.commands.is_empty(), "{agent}: {text}");
        assert!(entry.commands.iter().all(|c| c == &cmd), "{agent}: {text}");
        assert_eq!(uninstall_text(agent, "f", &text).unwrap(), None, "{agent}");
    }
    // A quoted path, and someone else's program of a similar name, are told apart.
    let quoted = hook_command(Path::new("/my tools/toolgate-hook"), Agent::ClaudeCode);
    assert!(is_ours(&quoted, Agent::ClaudeCode), "{quoted}");
    assert!(!is_ours("./my-hook claude-code", Agent::ClaudeCode));
    assert!(!is_ours("toolgate-hook claude-code-x", Agent::ClaudeCode));
}
