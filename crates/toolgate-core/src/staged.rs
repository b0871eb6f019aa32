//! The port through which a tool has the paths its command changed judged
//! before they land.
//!
//! A confined command writes into a staging area; when it exits, the tool
//! lists every changed path as a [`StagedChange`] and asks the
//! [`WriteJudge`] of its [`ToolContext`](crate::ToolContext) which of them
//! may land. The pipeline's judge asks the gate (the same path facts and
//! rules as any write), reaches a person for the ones a rule does not
//! settle, and records each decision in the audit log.

use std::path::PathBuf;

use async_trait::async_trait;

use crate::failure::Failure;

/// How a staged path changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StagedKind {
    /// It did not exist before.
    Created,
    /// Its content, kind, mode or link target changed.
    Modified,
    /// It is gone.
    Deleted,
}

impl StagedKind {
    /// The word for people.
    pub fn as_str(self) -> &'static str {
        match self {
            StagedKind::Created => "created",
            StagedKind::Modified => "modified",
            StagedKind::Deleted => "deleted",
        }
    }
}

/// One path a command changed, as it is in the real location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagedChange {
    /// The path in the real location.
    pub path: PathBuf,
    /// How it changed.
    pub kind: StagedKind,
    /// Whether it is (or was) a directory.
    pub dir: bool,
    /// What changed, for the person asked (a diff for a small text file).
    pub detail: Option<String>,
    /// The real path was changed by someone else while the command ran: it
    /// does not land, whatever the verdict (their version is kept).
    pub changed_outside: bool,
    /// It was created with content that is certificates only (a CA bundle):
    /// its name may be a secret's (`cacert.pem`), its content holds none.
    pub certificates_only: bool,
    /// Paths this change writes without naming them: the target of a link
    /// it makes, the work-tree paths whose content a changed git index or
    /// ref carries. Each is judged as a write too; the change lands only
    /// when every one of them may.
    pub also: Vec<PathBuf>,
}

/// The judge's word on one change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagedVerdict {
    /// It may land.
    pub land: bool,
    /// Why (for a refused change: what refused it).
    pub reason: String,
}

/// Judges the paths a command changed; implemented by the pipeline.
#[async_trait]
pub trait WriteJudge: Send + Sync {
    /// One verdict per change, in order. An error refuses every change.
    async fn judge(&self, changes: &[StagedChange]) -> Result<Vec<StagedVerdict>, Failure>;
}
