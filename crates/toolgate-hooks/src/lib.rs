//! toolgate as the pre-tool-use hook of other agents (Claude Code, Codex,
//! Gemini CLI and agy, Cursor, GitHub Copilot CLI, and OpenCode through a
//! plugin).
//!
//! This crate owns the agents' protocols and nothing else:
//!
//! - [`parse`]: an agent's hook payload (stdin) to a [`HookCall`];
//! - [`probes`]: the call's tool, through the agent's mapping table
//!   ([`table`], one table per agent, as data), to [`Probe`]s — calls of
//!   toolgate's built-in tools and plain requests that the gate judges;
//! - [`reply`]: toolgate's [`Verdict`] to the agent's answer ([`Reply`]: what
//!   goes to stdout and stderr, and the exit status), and [`block`], the
//!   agent's blocking form that every failure answers with;
//! - [`sandbox_rewrite`]: a shell call rewritten to run inside
//!   `toolgate sandbox exec`, for the agents that accept a changed input.
//!
//! It decides nothing itself and runs nothing: `toolgate::hook` (run by
//! `toolgate hook AGENT` and the `toolgate-hook AGENT` program)
//! judges the probes with toolgate's engine.

mod agent;
mod answer;
mod error;
mod files_read;
pub mod import;
pub mod install;
mod mcp;
mod ordered;
mod payload;
mod probe;
mod rewrite;
mod searched;
pub mod table;

pub use agent::{Agent, Protocol};
pub use answer::{HOW_TO_APPROVE, Reply, Verdict, acknowledge, block, reply};
pub use error::HookError;
pub use mcp::{McpName, mcp_name};
pub use payload::{HookCall, HookEvent, MAX_PAYLOAD, parse};
pub use probe::{Mapped, Probe, probes};
pub use rewrite::{ShellField, sandbox_rewrite, shell_quote};
