//! People as a port: the channels that reach a person (an MCP client, the
//! approval page, the terminal), asked both for approvals and for the
//! `question` tool's answers, in the order of the policy in force at each ask.
//!
//! The order comes from `--approval-channels` ([`parse_channel_list`]), else the
//! config's `[approvals] channels`; the managed layer beats both
//! ([`Policy::approval_channels`](crate::policy::Policy::approval_channels)).
//! [`People`] reads it from a [`SharedPolicy`] at each ask, so a reloaded config
//! applies to the next ask. A channel that is listed but off (the page under
//! `--no-web`) counts as unable to ask, so the next one is tried at once.
//!
//! Approvals go through [`InOrder`], which races the channels started after
//! `escalate_after`. Questions never race: each channel is tried until it
//! answers or gives up. A channel that cannot ask, or fails, passes to the
//! next; a person who declines, or a cancelled call, ends the question. When no
//! channel can ask, the error says "no channel can ask the user" with each
//! channel's reason.

use std::sync::Arc;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;
use toolgate_core::{CallIdentity, Failure, Question, QuestionChannel, QuestionError};

use crate::approvals::{Answer, ApprovalChannel, AskPrompt, ChannelError, InOrder};
use crate::config::ApprovalChannelName;
use crate::shared_policy::SharedPolicy;

/// One way of reaching a person: it asks approvals and questions. Every type
/// that is both an [`ApprovalChannel`] and a [`QuestionChannel`] is one.
pub trait PersonChannel: ApprovalChannel + QuestionChannel {}

impl<T: ApprovalChannel + QuestionChannel + ?Sized> PersonChannel for T {}

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

/// A channel that is configured off: it never asks anyone, and says why.
#[derive(Clone, Debug)]
pub struct OffChannel {
    why: String,
}

impl OffChannel {
    /// A channel that is off, because of `why` ("the approval page is off
    /// (--no-web)").
    pub fn new(why: impl Into<String>) -> Self {
        OffChannel { why: why.into() }
    }
}

#[async_trait]
impl ApprovalChannel for OffChannel {
    async fn ask(&self, _prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        Err(ChannelError::Unavailable(self.why.as_str().into()))
    }
}

#[async_trait]
impl QuestionChannel for OffChannel {
    async fn ask(
        &self,
        _caller: &CallIdentity,
        _questions: &[Question],
        _cancel: &CancellationToken,
    ) -> Result<Vec<String>, QuestionError> {
        Err(QuestionError::Failed(self.why.as_str().into()))
    }
}

/// The channels of a program by name, and the order its command line gives
/// (`--approval-channels`), if any. A name without a channel counts as off.
///
/// ```
/// # use std::sync::Arc;
/// use toolgate_policy::config::ApprovalChannelName::{Mcp, Web};
/// use toolgate_policy::people::{Channels, OffChannel};
/// let channels = Channels::new()
///     .with(Mcp, Arc::new(OffChannel::new("no client yet")))
///     .with_off(Web, "the approval page is off (--no-web)")
///     .ordered_by(Some(vec![Web, Mcp]));
/// assert_eq!(channels.names(), [Mcp, Web]);
/// ```
#[derive(Clone, Default)]
pub struct Channels {
    named: Vec<(ApprovalChannelName, Arc<dyn PersonChannel>)>,
    cli: Option<Vec<ApprovalChannelName>>,
}

impl Channels {
    /// No channels yet.
    pub fn new() -> Self {
        Channels::default()
    }

    /// Adds `channel` as `name`, in place of any channel of that name.
    #[must_use]
    pub fn with(mut self, name: ApprovalChannelName, channel: Arc<dyn PersonChannel>) -> Self {
        self.named.retain(|(n, _)| *n != name);
        self.named.push((name, channel));
        self
    }

    /// Adds `name` as a channel that is off because of `why`.
    #[must_use]
    pub fn with_off(self, name: ApprovalChannelName, why: impl Into<String>) -> Self {
        self.with(name, Arc::new(OffChannel::new(why)))
    }

    /// The command line's order, which beats the config's but not the
    /// managed layer's; `None` leaves the order to the config.
    #[must_use]
    pub fn ordered_by(mut self, cli: Option<Vec<ApprovalChannelName>>) -> Self {
        self.cli = cli;
        self
    }

    /// The names that have a channel, in the order they were added.
    pub fn names(&self) -> Vec<ApprovalChannelName> {
        self.named.iter().map(|(n, _)| *n).collect()
    }

    /// These channels, asked in the order of the policy `policy` holds at each ask.
    pub fn asked_under(self, policy: SharedPolicy) -> People {
        People {
            channels: self,
            policy,
        }
    }

    fn channel(&self, name: ApprovalChannelName) -> Arc<dyn PersonChannel> {
        match self.named.iter().find(|(n, _)| *n == name) {
            Some((_, channel)) => Arc::clone(channel),
            None => Arc::new(OffChannel::new(format!("no {name} channel is set up"))),
        }
    }
}

impl std::fmt::Debug for Channels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channels")
            .field("named", &self.names())
            .field("cli", &self.cli)
            .finish()
    }
}

/// Who the gate and the `question` tool ask: what an engine is built with.
#[derive(Clone)]
pub enum Asking {
    /// One channel, whatever the policy's order (`toolgate call`: the terminal).
    One(Arc<dyn PersonChannel>),
    /// Channels tried in the order of the policy in force at each ask.
    InPolicyOrder(Channels),
}

impl Asking {
    /// The channel to give the gate and the `question` tool, reading the order
    /// (if any) from `policy`.
    pub fn under(self, policy: &SharedPolicy) -> Arc<dyn PersonChannel> {
        match self {
            Asking::One(channel) => channel,
            Asking::InPolicyOrder(channels) => Arc::new(channels.asked_under(policy.clone())),
        }
    }
}

impl std::fmt::Debug for Asking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Asking::One(_) => f.write_str("Asking::One"),
            Asking::InPolicyOrder(channels) => f
                .debug_tuple("Asking::InPolicyOrder")
                .field(channels)
                .finish(),
        }
    }
}

/// The port: [`Channels`] asked in the order of the policy in force. It is the
/// gate's [`ApprovalChannel`] and the `question` tool's [`QuestionChannel`].
#[derive(Debug)]
pub struct People {
    channels: Channels,
    policy: SharedPolicy,
}

impl People {
    /// `channels`, asked in the order of the policy `policy` holds at each ask.
    pub fn new(channels: Channels, policy: SharedPolicy) -> Self {
        channels.asked_under(policy)
    }

    /// The order the next ask tries, as names.
    pub fn order(&self) -> Vec<ApprovalChannelName> {
        self.policy
            .current()
            .approval_channels(self.channels.cli.as_deref())
    }
}

#[async_trait]
impl ApprovalChannel for People {
    async fn ask(&self, prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        let policy = self.policy.current();
        let channels = policy
            .approval_channels(self.channels.cli.as_deref())
            .into_iter()
            .map(|name| self.channels.channel(name) as Arc<dyn ApprovalChannel>)
            .collect();
        InOrder::new(channels, policy.escalate_after())
            .ask(prompt)
            .await
    }
}

#[async_trait]
impl QuestionChannel for People {
    async fn ask(
        &self,
        caller: &CallIdentity,
        questions: &[Question],
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, QuestionError> {
        let mut reasons = Vec::new();
        // The first channel's failure is kept as the cause.
        let mut first: Option<Failure> = None;
        for name in self.order() {
            let channel = self.channels.channel(name);
            match QuestionChannel::ask(&*channel, caller, questions, cancel).await {
                Ok(answers) => return Ok(answers),
                Err(QuestionError::Failed(why)) => {
                    reasons.push(format!("{name}: {why}"));
                    first.get_or_insert(why);
                }
                Err(stop) => return Err(stop),
            }
        }
        let why = Failure::new(format!(
            "no channel can ask the user ({})",
            reasons.join("; ")
        ));
        Err(QuestionError::Failed(match first {
            Some(cause) => why.because(cause),
            None => why,
        }))
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
