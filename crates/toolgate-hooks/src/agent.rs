//! The agents toolgate answers for, and what each one's protocol can carry.

use std::fmt;
use std::str::FromStr;

use crate::HookError;

/// An agent whose pre-tool-use hook toolgate answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Claude Code (`PreToolUse` command hooks in `.claude/settings.json`).
    ClaudeCode,
    /// OpenAI Codex CLI (`[[hooks.PreToolUse]]` in `config.toml`).
    Codex,
    /// Gemini CLI (`BeforeTool` hooks in `.gemini/settings.json`).
    Gemini,
    /// Antigravity CLI (`agy`), Gemini CLI's successor, whose hooks can ask.
    Agy,
    /// Cursor (`preToolUse` and `before*` hooks in `.cursor/hooks.json`).
    Cursor,
    /// GitHub Copilot CLI (`preToolUse` in `.github/hooks/*.json`).
    Copilot,
    /// OpenCode, through toolgate's plugin calling `toolgate hook opencode`.
    OpenCode,
}

/// What an agent's hook protocol can carry, as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protocol {
    /// The agent can ask a person when the hook answers ask.
    pub can_ask: bool,
    /// The agent runs a tool input the hook changed (Claude Code and Codex
    /// `updatedInput`, Cursor `updated_input`, Copilot `modifiedArgs`).
    pub rewrites: bool,
    /// Exit status 2 blocks the call (stderr is the reason); toolgate's
    /// blocking form then is exit 2. Otherwise the blocking form is a deny
    /// answer on stdout.
    pub exit2_blocks: bool,
    /// The agent's default hook timeout, in milliseconds: toolgate's own
    /// budget must end before it.
    pub default_timeout_ms: u64,
}

impl Agent {
    /// Every agent.
    pub const ALL: [Agent; 7] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Gemini,
        Agent::Agy,
        Agent::Cursor,
        Agent::Copilot,
        Agent::OpenCode,
    ];

    /// The names `toolgate hook AGENT` takes.
    pub const NAMES: [&'static str; 7] = [
        "claude-code",
        "codex",
        "gemini",
        "agy",
        "cursor",
        "copilot",
        "opencode",
    ];

    /// The name `toolgate hook AGENT` takes.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Agy => "agy",
            Agent::Cursor => "cursor",
            Agent::Copilot => "copilot",
            Agent::OpenCode => "opencode",
        }
    }

    /// What the agent's protocol can carry.
    pub fn protocol(self) -> Protocol {
        match self {
            // `ask` shows Claude Code's own prompt; `updatedInput` with allow.
            Agent::ClaudeCode => Protocol {
                can_ask: true,
                rewrites: true,
                exit2_blocks: true,
                default_timeout_ms: 60_000,
            },
            // Codex enforces only deny, or allow with `updatedInput`.
            Agent::Codex => Protocol {
                can_ask: false,
                rewrites: true,
                exit2_blocks: true,
                default_timeout_ms: 60_000,
            },
            // Gemini CLI: `decision` allow or deny; its own policy still runs.
            Agent::Gemini => Protocol {
                can_ask: false,
                rewrites: false,
                exit2_blocks: true,
                default_timeout_ms: 60_000,
            },
            Agent::Agy => Protocol {
                can_ask: true,
                rewrites: false,
                exit2_blocks: true,
                default_timeout_ms: 60_000,
            },
            // Cursor answers `permission` allow/deny/ask, and `updated_input`
            // on `preToolUse`.
            Agent::Cursor => Protocol {
                can_ask: true,
                rewrites: true,
                exit2_blocks: true,
                default_timeout_ms: 30_000,
            },
            // Copilot CLI reads `permissionDecision` from stdout.
            Agent::Copilot => Protocol {
                can_ask: true,
                rewrites: true,
                exit2_blocks: false,
                default_timeout_ms: 30_000,
            },
            // The plugin throws (blocks) on deny, on ask (OpenCode's `run`
            // rejects every ask) and on any failure of the hook process.
            Agent::OpenCode => Protocol {
                can_ask: false,
                rewrites: true,
                exit2_blocks: true,
                default_timeout_ms: 30_000,
            },
        }
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Agent {
    type Err = HookError;

    fn from_str(s: &str) -> Result<Agent, HookError> {
        let agent = match s {
            "claude-code" | "claude" => Agent::ClaudeCode,
            "codex" => Agent::Codex,
            "gemini" | "gemini-cli" => Agent::Gemini,
            "agy" | "antigravity" => Agent::Agy,
            "cursor" => Agent::Cursor,
            "copilot" | "copilot-cli" => Agent::Copilot,
            "opencode" => Agent::OpenCode,
            other => return Err(HookError::UnknownAgent(other.to_string())),
        };
        Ok(agent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_agent() {
        for (agent, name) in Agent::ALL.iter().zip(Agent::NAMES) {
            assert_eq!(agent.name(), name);
            assert_eq!(name.parse::<Agent>().ok(), Some(*agent));
        }
        assert!("vim".parse::<Agent>().is_err());
    }
}
