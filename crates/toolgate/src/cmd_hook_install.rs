//! `toolgate hook install|uninstall|status AGENT [--project|--user]`.

use anyhow::{Result, bail};
use toolgate::DataDir;

use crate::cmd_hook::HookArgs;

/// Runs `toolgate hook VERB AGENT`.
pub fn run(verb: &str, agent: &str, args: &HookArgs, data: &DataDir) -> Result<i32> {
    let _ = (args, data);
    bail!("toolgate hook {verb} {agent}: not available yet")
}
