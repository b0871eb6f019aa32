//! A checkpoint's record: what it changed and how far it got. The two
//! records that recovery reads — "applying" before the first path changes,
//! and "undoing" before the first is put back — are written atomically (a
//! temporary file renamed over it) and, when the store syncs, synced to
//! disk (file and directory) so that they outlive a power loss. The others
//! are written in place, unsynced: they survive a crash of the process, and
//! a power loss at worst leaves a landed set marked applying, which the
//! next open rolls back as a whole. Each sync costs milliseconds on an
//! ordinary disk — and on ext4 it commits the journal, which writes back
//! the data of the files just staged — on every change set that lands.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::CheckpointError;
use crate::snapshot::{Before, Stamp};

/// The manifest's file name in a checkpoint's directory.
pub(crate) const FILE: &str = "manifest.json";

/// How far a change set got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Paths are being saved; nothing has changed yet.
    Saving,
    /// Paths are changing; a crash now is rolled back at the next open.
    Applying,
    /// Every change landed.
    Landed,
    /// Being undone.
    Undoing,
    /// Undone by `toolgate undo`.
    Undone,
    /// Put back after a failure or a crash.
    RolledBack,
}

impl State {
    /// Whether nothing more will happen to the change set.
    pub fn finished(self) -> bool {
        matches!(self, State::Landed | State::Undone | State::RolledBack)
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            State::Saving => "saving",
            State::Applying => "applying",
            State::Landed => "landed",
            State::Undoing => "being undone",
            State::Undone => "undone",
            State::RolledBack => "rolled back",
        })
    }
}

/// One path of a change set.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    /// The path changed.
    pub path: PathBuf,
    /// What it was before.
    pub before: Before,
    /// What it was once the set landed (`None`: absent, or not landed yet).
    pub after: Option<Stamp>,
}

/// A checkpoint's record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// The checkpoint's id.
    pub id: String,
    /// The tool call that made the change set.
    pub call_id: String,
    /// The tool (`bash`, `edit`, …).
    pub tool: String,
    /// When it began, milliseconds since the epoch.
    pub time_ms: u64,
    /// How far it got.
    pub state: State,
    /// The paths, in the order they were saved.
    pub entries: Vec<Entry>,
}

impl Manifest {
    pub(crate) fn read(dir: &Path, id: &str) -> Result<Manifest, CheckpointError> {
        let text = fs::read(dir.join(FILE))?;
        serde_json::from_slice(&text).map_err(|source| CheckpointError::Manifest {
            id: id.into(),
            source,
        })
    }

    /// Replaces the manifest in `dir` atomically; a crash of the process
    /// leaves the old one or this one.
    pub(crate) fn write(&self, dir: &Path) -> Result<(), CheckpointError> {
        // In place: no new file. A crash mid-write leaves it unreadable,
        // which the store treats as a set it cannot judge and leaves alone;
        // only the records recovery reads must never be torn.
        fs::write(dir.join(FILE), self.text()?)?;
        Ok(())
    }

    /// As [`Manifest::write`], but never torn (a temporary file renamed over
    /// it): a killed process leaves the old record or this one. With
    /// `fsync`, also on disk before it returns: a power loss leaves this one.
    pub(crate) fn write_durable(&self, dir: &Path, fsync: bool) -> Result<(), CheckpointError> {
        let tmp = dir.join(format!("{FILE}.tmp"));
        let mut f = fs::File::create(&tmp)?;
        f.write_all(&self.text()?)?;
        if fsync {
            f.sync_all()?;
        }
        fs::rename(&tmp, dir.join(FILE))?;
        if fsync {
            fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    }

    fn text(&self) -> Result<Vec<u8>, CheckpointError> {
        serde_json::to_vec_pretty(self).map_err(|source| CheckpointError::Manifest {
            id: self.id.clone(),
            source,
        })
    }
}
