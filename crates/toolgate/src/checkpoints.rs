//! The checkpoint store as the file tools' [`ChangeRecorder`]: every change
//! set `write`, `edit` and `apply_patch` make is kept for `toolgate undo`.

use std::path::Path;
use std::sync::Arc;

use toolgate_checkpoint::{Checkpoints, Pending};
use toolgate_core::{ChangeRecorder, ChangeSet, Failure};

/// Records change sets in the data directory's checkpoint store.
#[derive(Debug)]
pub struct CheckpointRecorder(pub Arc<Checkpoints>);

impl ChangeRecorder for CheckpointRecorder {
    fn begin(&self, call_id: &str, tool: &str) -> Result<Box<dyn ChangeSet>, Failure> {
        let pending = self
            .0
            .begin(call_id, tool)
            .map_err(|e| Failure::new(format!("cannot record the change set: {e}")).because(e))?;
        Ok(Box::new(Recording(pending)))
    }
}

struct Recording(Pending);

impl ChangeSet for Recording {
    fn save(&mut self, path: &Path) -> Result<(), Failure> {
        self.0.save(path).map_err(Failure::of)
    }
    fn applying(&mut self) -> Result<(), Failure> {
        self.0.applying().map_err(Failure::of)
    }
    fn landed(self: Box<Self>) -> Result<String, Failure> {
        self.0.landed().map_err(Failure::of)
    }
    fn roll_back(self: Box<Self>) -> Result<(), Failure> {
        self.0.roll_back().map_err(Failure::of)
    }
}
