//! `toolgate hook AGENT`: the flags around [`toolgate::hook::answer`] (which
//! the small `toolgate-hook AGENT` program runs as well), and `toolgate hook
//! install|uninstall|status AGENT`.

use anyhow::{Result, anyhow};
use clap::Args;
use toolgate::{DataDir, Durability};

use crate::cmd_policy::PolicyArgs;

/// `toolgate hook AGENT`, or `toolgate hook install|uninstall|status AGENT`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent (claude-code, codex, gemini, agy, cursor, copilot,
    /// opencode), or `install`, `uninstall`, `status` followed by one.
    #[arg(value_name = "AGENT", num_args = 1..=2, required = true)]
    pub words: Vec<String>,
    /// install/uninstall/status: the project's settings (the default).
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// install/uninstall/status: the user's settings.
    #[arg(long)]
    pub user: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

/// Runs `toolgate hook …`.
pub fn run(args: HookArgs, data: Result<DataDir>, durability: Durability) -> Result<i32> {
    match args.words.as_slice() {
        [agent] => {
            // A hook process opens the audit log once and exits.
            toolgate_store::tune_for_short_process();
            let options = toolgate::hook::Options {
                root: args.policy.root.clone(),
                config: args.policy.config.clone(),
                mode: args.policy.mode,
            };
            Ok(toolgate::hook::answer(agent, &options, data, durability))
        }
        [verb, agent] => crate::cmd_hook_install::run(verb, agent, &args, data.ok().as_ref()),
        _ => Err(anyhow!(
            "usage: toolgate hook AGENT | toolgate hook install|uninstall|status AGENT"
        )),
    }
}
