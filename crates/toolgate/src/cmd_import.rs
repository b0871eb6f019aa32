//! `toolgate import AGENT [FILE]`: an agent's permission rules as toolgate
//! config on stdout, and what could not be translated on stderr.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};
use clap::Args;
use toolgate_hooks::Agent;

/// `toolgate import AGENT [FILE]`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The agent: claude-code (settings.json `permissions`), opencode
    /// (`permission`), codex (a `.rules` file), gemini (a policy TOML file).
    pub agent: String,
    /// The file (default: the project's `.claude/settings.json` or
    /// `opencode.json`; codex and gemini need one).
    pub file: Option<PathBuf>,
}

/// Runs `toolgate import`.
pub fn run(args: ImportArgs) -> Result<i32> {
    let agent: Agent = args.agent.parse()?;
    let file = match (&args.file, agent) {
        (Some(f), _) => f.clone(),
        (None, Agent::ClaudeCode) => PathBuf::from(".claude/settings.json"),
        (None, Agent::OpenCode) => PathBuf::from("opencode.json"),
        (None, _) => {
            return Err(anyhow!(
                "give the {agent} rules file: toolgate import {agent} FILE"
            ));
        }
    };
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}", file.display()))?;
    let imported = toolgate_hooks::import::import(agent, &text)?;
    print!("{}", imported.to_toml(agent));
    for (entry, why) in &imported.skipped {
        eprintln!("toolgate: not translated: {entry}: {why}");
    }
    eprintln!(
        "toolgate: {} rule(s) from {}; {} entr(ies) not translated",
        imported.rules.len(),
        file.display(),
        imported.skipped.len()
    );
    Ok(0)
}
