//! An upstream MCP server's workspace writes, staged for its whole session
//! ([`toolgate_sandbox::LiveStaging`]) and settled after each of its calls
//! and at the end: judged by the call's gate (the judge bash's staged writes
//! get), the accepted ones landed as one change set of the checkpoint store
//! (`toolgate undo` restores it), the rest set back in the server's view.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use toolgate_checkpoint::Checkpoints;
use toolgate_core::{Failure, StagedVerdict, WriteJudge};
use toolgate_mcp::gateway::{Settled, UpstreamWrites};
use toolgate_sandbox::LiveStaging;

use crate::sandbox::{Journal, staged_changes};

/// Why a path changed outside the server does not land.
const CHANGED_OUTSIDE: &str =
    "changed by someone else since the server's last call; that version is kept";

/// A confined upstream's staged writes.
pub(crate) struct LiveWrites {
    live: Mutex<LiveStaging>,
    store: Arc<Checkpoints>,
    home: PathBuf,
    roots: Vec<PathBuf>,
}

impl LiveWrites {
    pub(crate) fn new(
        live: LiveStaging,
        store: Arc<Checkpoints>,
        home: PathBuf,
        roots: Vec<PathBuf>,
    ) -> LiveWrites {
        LiveWrites {
            live: Mutex::new(live),
            store,
            home,
            roots,
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, LiveStaging> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait::async_trait]
impl UpstreamWrites for LiveWrites {
    fn attach(&self, pid: u32) -> Result<(), String> {
        self.live().attach(pid).map_err(|e| e.to_string())
    }

    async fn settle(
        &self,
        judge: Option<&dyn WriteJudge>,
        call_id: &str,
        tool: &str,
    ) -> Result<Settled, Failure> {
        let (changes, staged) = {
            let mut live = self.live();
            let changes = live.changes().map_err(Failure::of)?;
            if changes.is_empty() {
                return Ok(Settled::default());
            }
            let staged = staged_changes(live.staging(), &changes, &self.home, &self.roots);
            (changes, staged)
        };
        let verdicts = match judge {
            Some(judge) => judge.judge(&staged).await?,
            None => staged
                .iter()
                .map(|_| StagedVerdict {
                    land: false,
                    reason: "no gate judges this server's writes, so none lands".into(),
                })
                .collect(),
        };
        let mut accepted = HashSet::new();
        let mut refused = Vec::new();
        for (c, v) in staged.iter().zip(&verdicts) {
            let how = c.kind.as_str().to_string();
            let path = c.path.display().to_string();
            if c.changed_outside {
                refused.push((how, path, CHANGED_OUTSIDE.to_string()));
            } else if v.land {
                accepted.insert(c.path.clone());
            } else {
                refused.push((how, path, v.reason.clone()));
            }
        }
        let mut live = self.live();
        let mut landed = accepted.len();
        let checkpoint = if accepted.is_empty() {
            None
        } else {
            let journal = self
                .store
                .begin(call_id, tool)
                .map_err(|e| Failure::new(format!("cannot record the change set: {e}")))?;
            match live.land(&changes, &accepted, Box::new(Journal(journal))) {
                Ok(id) => id,
                Err(e) => {
                    // Rolled back: nothing of it is in the workspace.
                    let why = format!("landing failed: {e}");
                    for c in staged.iter().filter(|c| accepted.contains(&c.path)) {
                        refused.push((
                            c.kind.as_str().to_string(),
                            c.path.display().to_string(),
                            why.clone(),
                        ));
                    }
                    accepted.clear();
                    landed = 0;
                    None
                }
            }
        };
        for failed in live.reset(&changes, &accepted) {
            tracing::warn!(path = %failed.path.display(), error = %failed.error, "the server still sees a write of its own that did not land");
        }
        Ok(Settled {
            landed,
            checkpoint,
            refused,
        })
    }
}
