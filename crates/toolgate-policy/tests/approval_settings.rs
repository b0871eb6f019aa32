//! `[approvals]` across layers: the last layer that sets a key wins, the
//! command line beats the config files, and the managed layer beats both.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use toolgate_policy::config::ApprovalChannelName::{Mcp, Terminal, Web};
use toolgate_policy::policy::Policy;
use toolgate_policy::rules::Layer;

fn policy(texts: &[(&str, Layer, &str)]) -> Policy {
    Policy::from_texts(Path::new("/ws"), Path::new("/home/u"), texts, None).unwrap()
}

#[test]
fn default_is_mcp_web_terminal_all_at_once() {
    let p = policy(&[]);
    assert_eq!(p.approval_channels(None), [Mcp, Web, Terminal]);
    assert_eq!(p.escalate_after(), Duration::ZERO);
}

#[test]
fn later_layers_win_key_by_key() {
    let p = policy(&[
        (
            "user.toml",
            Layer::User,
            "[approvals]\nchannels = [\"web\"]\nescalate_after = 5\n",
        ),
        (
            "project.toml",
            Layer::Project,
            "[approvals]\nchannels = [\"terminal\", \"mcp\"]\n",
        ),
    ]);
    assert_eq!(p.approval_channels(None), [Terminal, Mcp]);
    assert_eq!(p.escalate_after(), Duration::from_secs(5));
    assert_eq!(p.approval_channels(Some(&[Web])), [Web]);
}

#[test]
fn the_managed_layer_beats_the_command_line() {
    let p = policy(&[
        (
            "user.toml",
            Layer::User,
            "[approvals]\nescalate_after = 5\n",
        ),
        (
            "managed.toml",
            Layer::Managed,
            "[approvals]\nchannels = [\"web\"]\nescalate_after = 1\n",
        ),
        (
            "project.toml",
            Layer::Project,
            "[approvals]\nchannels = [\"mcp\"]\nescalate_after = 9\n",
        ),
    ]);
    assert_eq!(p.approval_channels(Some(&[Terminal])), [Web]);
    assert_eq!(p.escalate_after(), Duration::from_secs(1));
}
