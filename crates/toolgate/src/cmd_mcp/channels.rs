//! The approval channels of `mcp` and `serve` — the MCP client (elicitation),
//! the approval page and the terminal — tried in the configured order.
//!
//! The order comes from `--approval-channels`, else the config's
//! `[approvals] channels` (the managed layer beats both), and is read from the
//! gate's current policy at each ask, so a reloaded config applies to the next
//! ask. A channel that is listed but off (the page under `--no-web`) counts as
//! unable to ask, so the next one is tried at once.

use std::sync::{Arc, OnceLock, Weak};

use async_trait::async_trait;
use toolgate_policy::approvals::{Answer, ApprovalChannel, AskPrompt, ChannelError, InOrder};
use toolgate_policy::config::ApprovalChannelName;
use toolgate_policy::gate::PolicyGate;
use toolgate_policy::policy::Policy;

/// Parses `--approval-channels mcp,web,terminal`: known names, each once, at
/// least one.
pub fn parse_channel_list(text: &str) -> Result<ChannelList, String> {
    let mut channels = Vec::new();
    for name in text.split(',').map(str::trim) {
        let channel = name.parse::<ApprovalChannelName>()?;
        if channels.contains(&channel) {
            return Err(format!("approval channel {name:?} is listed twice"));
        }
        channels.push(channel);
    }
    Ok(ChannelList(channels))
}

/// A validated `--approval-channels` list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelList(pub Vec<ApprovalChannelName>);

/// A channel that is configured off: it never asks anyone.
struct Off(&'static str);

#[async_trait]
impl ApprovalChannel for Off {
    async fn ask(&self, _prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        Err(ChannelError::Unavailable(self.0.into()))
    }
}

/// The channels of a server by name, asked in the policy's order.
pub struct ConfiguredChannels {
    mcp: Arc<dyn ApprovalChannel>,
    web: Arc<dyn ApprovalChannel>,
    terminal: Arc<dyn ApprovalChannel>,
    cli: Option<Vec<ApprovalChannelName>>,
    /// Set once the gate exists (the gate is built around this channel).
    gate: OnceLock<Weak<PolicyGate>>,
}

impl ConfiguredChannels {
    /// The three channels; `web` is `None` when the page is off.
    pub fn new(
        mcp: Arc<dyn ApprovalChannel>,
        web: Option<Arc<dyn ApprovalChannel>>,
        terminal: Arc<dyn ApprovalChannel>,
        cli: Option<Vec<ApprovalChannelName>>,
    ) -> Self {
        ConfiguredChannels {
            mcp,
            web: web.unwrap_or_else(|| Arc::new(Off("the approval page is off (--no-web)"))),
            terminal,
            cli,
            gate: OnceLock::new(),
        }
    }

    /// Reads the order from `gate`'s policy from now on.
    pub fn follow(&self, gate: &Arc<PolicyGate>) {
        let _ = self.gate.set(Arc::downgrade(gate));
    }

    /// The order under `policy`, as names.
    pub fn order(&self, policy: &Policy) -> Vec<ApprovalChannelName> {
        policy.approval_channels(self.cli.as_deref())
    }

    fn channel(&self, name: ApprovalChannelName) -> Arc<dyn ApprovalChannel> {
        match name {
            ApprovalChannelName::Mcp => Arc::clone(&self.mcp),
            ApprovalChannelName::Web => Arc::clone(&self.web),
            ApprovalChannelName::Terminal => Arc::clone(&self.terminal),
        }
    }
}

#[async_trait]
impl ApprovalChannel for ConfiguredChannels {
    async fn ask(&self, prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        let policy = self
            .gate
            .get()
            .and_then(Weak::upgrade)
            .map(|gate| gate.policy())
            .ok_or_else(|| ChannelError::Unavailable("the server is shutting down".into()))?;
        let channels = self
            .order(&policy)
            .into_iter()
            .map(|name| self.channel(name))
            .collect();
        InOrder::new(channels, policy.escalate_after())
            .ask(prompt)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ApprovalChannelName::{Mcp, Terminal, Web};

    #[test]
    fn the_flag_takes_known_names_once_each() {
        assert_eq!(
            parse_channel_list("web, mcp").unwrap(),
            ChannelList(vec![Web, Mcp])
        );
        assert_eq!(
            parse_channel_list("terminal").unwrap(),
            ChannelList(vec![Terminal])
        );
        let e = parse_channel_list("mcp,slack").unwrap_err();
        assert!(
            e.contains("\"slack\"") && e.contains("mcp, web and terminal"),
            "{e}"
        );
        assert!(parse_channel_list("").unwrap_err().contains("\"\""));
        assert!(parse_channel_list("web,").is_err());
        assert!(parse_channel_list("web,web").unwrap_err().contains("twice"));
    }
}
