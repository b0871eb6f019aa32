//! The tool list changed: a signal from whatever changes the catalogue (the
//! gateway's re-check of an upstream) to every connected client, which gets
//! `notifications/tools/list_changed`.

use std::sync::Arc;

use rmcp::{Peer, RoleServer};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// A cheap-to-clone signal that the tools a client would be shown changed.
#[derive(Clone, Debug)]
pub struct ToolListSignal {
    sender: Arc<watch::Sender<u64>>,
}

impl Default for ToolListSignal {
    fn default() -> Self {
        ToolListSignal {
            sender: Arc::new(watch::channel(0).0),
        }
    }
}

impl ToolListSignal {
    /// A signal nobody listens to yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Tells every connected client that the tool list changed.
    pub fn announce(&self) {
        self.sender.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Sends `notifications/tools/list_changed` to `peer` after each later
    /// [`announce`](Self::announce), until `closed` is cancelled or the
    /// client is gone.
    pub(crate) fn forward_to(&self, peer: Peer<RoleServer>, closed: CancellationToken) {
        let mut changes = self.sender.subscribe();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = closed.cancelled() => break,
                    changed = changes.changed() => {
                        if changed.is_err() {
                            break;
                        }
                        if let Err(e) = peer.notify_tool_list_changed().await {
                            tracing::debug!(error = %e, "tools/list_changed not delivered");
                            break;
                        }
                    }
                }
            }
        });
    }
}
