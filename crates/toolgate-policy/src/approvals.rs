//! The approvals port: where `always` approvals are saved (implemented by
//! `toolgate-store`), and the approval-channel port through which a person answers.

use serde::{Deserialize, Serialize};

/// An approval saved for a project ("always").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedApproval {
    /// Its id (for `toolgate approvals revoke ID`).
    pub id: i64,
    /// The project root it applies to (canonical path).
    pub project: String,
    /// The action (`bash`, `edit`, …).
    pub action: String,
    /// The saved pattern (`git push *`, `/ws/src/*`).
    pub pattern: String,
    /// When it was saved, ms since the Unix epoch.
    pub created_ms: i64,
}

/// Errors from an approval store.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalStoreError {
    /// The store failed.
    #[error("approval store failed: {0}")]
    Storage(String),
    /// No approval with that id.
    #[error("no saved approval with id {0}")]
    NotFound(i64),
}

/// Where saved approvals live. Saving is deduplicated by (project, action, pattern).
pub trait ApprovalStore: Send + Sync {
    /// Saves an approval, or returns the existing identical one.
    fn save(
        &self,
        project: &str,
        action: &str,
        pattern: &str,
    ) -> Result<SavedApproval, ApprovalStoreError>;
    /// The approvals of one project, oldest first.
    fn list_project(&self, project: &str) -> Result<Vec<SavedApproval>, ApprovalStoreError>;
    /// Every saved approval, oldest first.
    fn list_all(&self) -> Result<Vec<SavedApproval>, ApprovalStoreError>;
    /// Removes one approval.
    fn revoke(&self, id: i64) -> Result<SavedApproval, ApprovalStoreError>;
}
