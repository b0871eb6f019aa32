//! The checkpoint port: a tool that changes files records each change set
//! before it lands, so that a crash rolls it back and a person can undo it.
//! The binary implements it over its checkpoint store.

use std::path::Path;

use crate::failure::Failure;

/// Starts change sets.
pub trait ChangeRecorder: Send + Sync + std::fmt::Debug {
    /// A new change set for `call_id`, made by `tool`.
    fn begin(&self, call_id: &str, tool: &str) -> Result<Box<dyn ChangeSet>, Failure>;
}

/// One change set being recorded: save every path it will change, mark it
/// applying, change the paths (replacing files by rename or removing them,
/// never writing into them), then mark it landed.
pub trait ChangeSet: Send {
    /// Keeps `path`'s state before the change.
    fn save(&mut self, path: &Path) -> Result<(), Failure>;
    /// From here a crash rolls the set back.
    fn applying(&mut self) -> Result<(), Failure>;
    /// Every change is made; returns the checkpoint's id.
    fn landed(self: Box<Self>) -> Result<String, Failure>;
    /// Puts every saved path back.
    fn roll_back(self: Box<Self>) -> Result<(), Failure>;
}
