//! Saved `always` approvals in SQLite (`<data_dir>/state.db`).

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, params};
use toolgate_core::now_ms;
use toolgate_policy::approvals::{ApprovalStore, ApprovalStoreError, SavedApproval};

use crate::error::StoreError;
use crate::sqlite::{self, Access, FileKind};

const STATE_FILE: FileKind = FileKind {
    name: "state database",
    // "TGST"
    application_id: 0x5447_5354,
    version: 1,
    page_size: 4096,
    schema: "
        CREATE TABLE approvals (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            project    TEXT NOT NULL,
            action     TEXT NOT NULL,
            pattern    TEXT NOT NULL,
            created_ms INTEGER NOT NULL,
            UNIQUE (project, action, pattern)
        );
    ",
};

const COLUMNS: &str = "id, project, action, pattern, created_ms";

/// Saved approvals, deduplicated by (project, action, pattern). Ids are never
/// reused, so revoking by a stale id cannot remove a newer approval.
#[derive(Debug)]
pub struct SqliteApprovals {
    conn: Mutex<Connection>,
}

impl SqliteApprovals {
    /// Opens (creating if needed) the state database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteApprovals, StoreError> {
        let conn = sqlite::open(path.as_ref(), STATE_FILE, Access::ReadWrite)?;
        Ok(SqliteApprovals {
            conn: Mutex::new(conn),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn list(&self, project: Option<&str>) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        let conn = self.lock();
        let sql = match project {
            Some(_) => format!("SELECT {COLUMNS} FROM approvals WHERE project = ?1 ORDER BY id"),
            None => format!("SELECT {COLUMNS} FROM approvals ORDER BY id"),
        };
        let mut stmt = conn.prepare_cached(&sql).map_err(storage)?;
        let rows = match project {
            Some(p) => stmt.query_map([p], row),
            None => stmt.query_map([], row),
        }
        .map_err(storage)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(storage)
    }
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SavedApproval> {
    Ok(SavedApproval {
        id: r.get(0)?,
        project: r.get(1)?,
        action: r.get(2)?,
        pattern: r.get(3)?,
        created_ms: r.get(4)?,
    })
}

fn storage(e: rusqlite::Error) -> ApprovalStoreError {
    ApprovalStoreError::Storage(e.to_string())
}

fn check_field(name: &str, value: &str) -> Result<(), ApprovalStoreError> {
    if value.is_empty() {
        return Err(ApprovalStoreError::Storage(format!(
            "refusing to save an approval with an empty {name}"
        )));
    }
    if value.contains('\0') {
        return Err(ApprovalStoreError::Storage(format!(
            "refusing to save an approval whose {name} contains a NUL byte"
        )));
    }
    Ok(())
}

impl ApprovalStore for SqliteApprovals {
    fn save(
        &self,
        project: &str,
        action: &str,
        pattern: &str,
    ) -> Result<SavedApproval, ApprovalStoreError> {
        check_field("project", project)?;
        check_field("action", action)?;
        check_field("pattern", pattern)?;
        let conn = self.lock();
        conn.prepare_cached(
            "INSERT INTO approvals (project, action, pattern, created_ms) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (project, action, pattern) DO NOTHING",
        )
        .and_then(|mut s| s.execute(params![project, action, pattern, now_ms()]))
        .map_err(storage)?;
        conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM approvals WHERE project = ?1 AND action = ?2 AND pattern = ?3"
        ))
        .and_then(|mut s| s.query_row(params![project, action, pattern], row))
        .map_err(storage)
    }

    fn list_project(&self, project: &str) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        self.list(Some(project))
    }

    fn list_all(&self) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        self.list(None)
    }

    fn revoke(&self, id: i64) -> Result<SavedApproval, ApprovalStoreError> {
        self.lock()
            .prepare_cached(&format!(
                "DELETE FROM approvals WHERE id = ?1 RETURNING {COLUMNS}"
            ))
            .and_then(|mut s| s.query_row([id], row).optional())
            .map_err(storage)?
            .ok_or(ApprovalStoreError::NotFound(id))
    }
}
