//! `toolgate hook install|uninstall|status AGENT [--project|--user]`: the
//! file work around `toolgate_hooks::install` (which edits the text).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use toolgate_hooks::Agent;
use toolgate_hooks::install::{
    Scope, fail_open_reasons, hook_command, inspect, install_text, settings_path, uninstall_text,
};

use toolgate::DataDir;

use crate::cmd_hook::HookArgs;

/// Runs `toolgate hook VERB AGENT`.
pub fn run(verb: &str, agent: &str, args: &HookArgs, data: Option<&DataDir>) -> Result<i32> {
    let agent: Agent = agent.parse()?;
    let project = crate::cli_builder::root(args.policy.root.as_deref())?;
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| anyhow!("HOME is not set"))?;
    let codex_home = std::env::var_os("CODEX_HOME").map(PathBuf::from);
    let path_of = |scope| settings_path(agent, scope, &project, &home, codex_home.as_deref());
    let scope = if args.user {
        Scope::User
    } else {
        Scope::Project
    };
    match verb {
        "install" => install(agent, &path_of(scope)?),
        "uninstall" => uninstall(agent, &path_of(scope)?),
        "status" => {
            let scopes: Vec<Scope> = if args.user || args.project {
                vec![scope]
            } else {
                vec![Scope::Project, Scope::User]
            };
            let mut paths = Vec::new();
            for s in scopes {
                paths.push(path_of(s)?);
            }
            status(agent, &paths, data)
        }
        other => bail!("unknown verb `{other}`: use install, uninstall or status"),
    }
}

fn toolgate_exe() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find toolgate's own executable")?;
    Ok(exe.canonicalize().unwrap_or(exe))
}

fn backup_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".toolgate-backup");
    PathBuf::from(name)
}

/// Writes `text` to `path` through a temporary file renamed over it.
fn write_atomically(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".toolgate-tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

fn read(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// The program the agent's settings run: the hook-only program beside this
/// `toolgate` when it is there (it starts faster), else `toolgate` itself.
/// OpenCode's plugin runs `toolgate hook opencode`.
fn hook_program(exe: &Path, agent: Agent) -> PathBuf {
    let beside = exe.with_file_name(toolgate::hook::HOOK_PROGRAM);
    if agent != Agent::OpenCode && beside.is_file() {
        return beside;
    }
    exe.to_path_buf()
}

fn install(agent: Agent, path: &Path) -> Result<i32> {
    let exe = toolgate_exe()?;
    let shown = path.display().to_string();
    let before = read(path)?;
    let after = install_text(
        agent,
        &shown,
        before.as_deref(),
        &hook_command(&hook_program(&exe, agent), agent),
        &exe,
    )?;
    if before.as_deref() == Some(after.as_str()) {
        println!("toolgate's hook for {agent} is already installed in {shown}");
        return Ok(0);
    }
    if let Some(before) = &before {
        let backup = backup_of(path);
        if !backup.exists() {
            std::fs::write(&backup, before)
                .with_context(|| format!("cannot write the backup {}", backup.display()))?;
            println!("backup: {}", backup.display());
        }
    }
    write_atomically(path, &after)?;
    println!("installed toolgate's hook for {agent} in {shown}");
    let entry = inspect(agent, &shown, &after)?;
    for why in fail_open_reasons(agent, &entry, command_runs(&entry.commands)) {
        println!("note: {why}");
    }
    Ok(0)
}

/// Whether two settings texts say the same (JSON compared as values).
fn same(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.trim() == b.trim(),
    }
}

fn uninstall(agent: Agent, path: &Path) -> Result<i32> {
    let shown = path.display().to_string();
    let Some(before) = read(path)? else {
        println!("toolgate's hook for {agent} is not installed in {shown}");
        return Ok(0);
    };
    let after = uninstall_text(agent, &shown, &before)?;
    let backup = backup_of(path);
    let saved = read(&backup)?;
    match (&after, saved) {
        // Nothing but toolgate's entries changed since the backup: the
        // backup comes back as it was, formatting and all.
        (Some(after), Some(saved)) if same(after, &saved) => {
            write_atomically(path, &saved)?;
            std::fs::remove_file(&backup).ok();
            println!("restored {shown} from {}", backup.display());
        }
        (Some(after), _) => {
            write_atomically(path, after)?;
            println!("removed toolgate's hook for {agent} from {shown}");
        }
        (None, saved) => {
            match saved {
                Some(saved) => {
                    write_atomically(path, &saved)?;
                    std::fs::remove_file(&backup).ok();
                }
                None => {
                    std::fs::remove_file(path).with_context(|| format!("cannot remove {shown}"))?
                }
            }
            println!("removed toolgate's hook for {agent} ({shown})");
        }
    }
    Ok(0)
}

/// Who puts the hook's asks to a person: the agent itself, or toolgate's
/// own channels, and whether one of those is running now.
fn where_asks_go(agent: Agent, data: Option<&DataDir>) -> String {
    if !toolgate::hook::asks_go_to_toolgate(agent) {
        return format!("{agent} asks the person itself");
    }
    if data.is_some_and(toolgate::handover::channel_running) {
        "put to toolgate's channels; one is running (`toolgate approvals watch` or the approval page)".into()
    } else {
        "denied with how to approve: no toolgate channel is running (start `toolgate approvals watch` in a terminal, or `toolgate serve`)".into()
    }
}

/// The program of a hook command (its first word, unquoted).
fn program(command: &str) -> String {
    let command = command.trim_start();
    if let Some(rest) = command.strip_prefix('\'') {
        return rest.split('\'').next().unwrap_or_default().to_string();
    }
    command
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Whether every command's program is there to run, as the agent's PATH
/// (this process's) finds it.
fn command_runs(commands: &[String]) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let runs = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    commands.iter().all(|c| {
        let prog = program(c);
        if prog.contains('/') {
            return runs(Path::new(&prog));
        }
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|d| runs(&d.join(&prog))))
    })
}

fn status(agent: Agent, paths: &[PathBuf], data: Option<&DataDir>) -> Result<i32> {
    let mut healthy = false;
    let mut installed_any = false;
    for path in paths {
        let shown = path.display().to_string();
        let Some(text) = read(path)? else {
            println!("{agent}: {shown}: no file");
            continue;
        };
        let entry = inspect(agent, &shown, &text)?;
        if entry.commands.is_empty() {
            println!("{agent}: {shown}: toolgate's hook is not installed");
            continue;
        }
        installed_any = true;
        let why = fail_open_reasons(agent, &entry, command_runs(&entry.commands));
        println!(
            "{agent}: {shown}: installed for {} ({})",
            entry.events.join(", "),
            entry
                .commands
                .first()
                .map(String::as_str)
                .unwrap_or_default()
        );
        if why.is_empty() {
            println!("  fires and blocks on failure");
            healthy = true;
        }
        for w in &why {
            println!("  may fail open: {w}");
        }
    }
    if !installed_any {
        println!("{agent}: not installed: run `toolgate hook install {agent}`");
    } else {
        println!("  asks: {}", where_asks_go(agent, data));
    }
    Ok(if healthy { 0 } else { 1 })
}
