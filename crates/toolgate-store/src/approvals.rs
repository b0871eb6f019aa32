//! Saved `always` approvals in SQLite (`<data_dir>/state.db`).

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, params};
use toolgate_core::{Failure, now_ms};
use toolgate_policy::approvals::{ApprovalStore, ApprovalStoreError, SavedApproval};

use crate::error::StoreError;
use crate::sqlite::{self, Access, FileKind};

const STATE_FILE: FileKind = FileKind {
    name: "state database",
    // "TGST"
    application_id: 0x5447_5354,
    version: 2,
    page_size: 4096,
    // 1 -> 2: who approved, and on which machine.
    upgrades: &["
        ALTER TABLE approvals ADD COLUMN approved_by TEXT;
        ALTER TABLE approvals ADD COLUMN machine TEXT;
    "],
    schema: "
        CREATE TABLE approvals (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            project     TEXT NOT NULL,
            action      TEXT NOT NULL,
            pattern     TEXT NOT NULL,
            created_ms  INTEGER NOT NULL,
            approved_by TEXT,
            machine     TEXT,
            UNIQUE (project, action, pattern)
        );
    ",
};

/// The columns read, on a file with the identity columns (schema 2)…
const COLUMNS: &str = "id, project, action, pattern, created_ms, approved_by, machine";
/// …and on one opened read-only before it was upgraded (schema 1).
const COLUMNS_V1: &str = "id, project, action, pattern, created_ms, NULL, NULL";

/// Saved approvals, deduplicated by (project, action, pattern). Ids are never
/// reused, so revoking by a stale id cannot remove a newer approval.
///
/// The gate asks for a project's approvals on every call, so the last answer is
/// kept and reused while `PRAGMA data_version` says no other connection (another
/// process: `toolgate approvals revoke`, the approval page) has committed since;
/// this connection's own saves and revokes drop it. A revoke is therefore seen on
/// the very next call, and an unchanged file costs one pragma instead of a query.
#[derive(Debug)]
pub struct SqliteApprovals {
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    conn: Connection,
    cache: Option<CachedList>,
    /// The columns this file has ([`COLUMNS`] or [`COLUMNS_V1`]).
    columns: &'static str,
    /// Recorded with each approval saved here.
    person: Option<String>,
    machine: Option<String>,
}

impl Inner {
    fn new(conn: Connection) -> Result<Inner, StoreError> {
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(StoreError::sqlite("reading the schema version"))?;
        Ok(Inner {
            conn,
            cache: None,
            columns: if version >= 2 { COLUMNS } else { COLUMNS_V1 },
            person: None,
            machine: None,
        })
    }
}

/// One project's approvals as of a `data_version`.
#[derive(Debug)]
struct CachedList {
    data_version: i64,
    project: String,
    approvals: Vec<SavedApproval>,
}

impl SqliteApprovals {
    /// Opens (creating if needed) the state database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<SqliteApprovals, StoreError> {
        let conn = sqlite::open(path.as_ref(), STATE_FILE, Access::ReadWrite)?;
        Ok(SqliteApprovals {
            inner: Mutex::new(Inner::new(conn)?),
        })
    }

    /// Records `person` and `machine` with every approval saved from now on
    /// (who answered the ask, and where).
    pub fn with_identity(self, person: impl Into<String>, machine: impl Into<String>) -> Self {
        {
            let mut inner = self.lock();
            inner.person = Some(person.into());
            inner.machine = Some(machine.into());
        }
        self
    }

    /// Opens an existing state database read-only: nothing is created, set up
    /// or written (what `toolgate check` needs). Saving or revoking through it
    /// fails with [`ApprovalStoreError::Storage`]; a missing file is
    /// [`StoreError::Missing`].
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<SqliteApprovals, StoreError> {
        let conn = sqlite::open(path.as_ref(), STATE_FILE, Access::ReadOnly)?;
        Ok(SqliteApprovals {
            inner: Mutex::new(Inner::new(conn)?),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A project's approvals, from the cache while nobody else has written.
    fn list_cached(&self, project: &str) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        let mut inner = self.lock();
        let data_version = data_version(&inner.conn)?;
        if let Some(c) = &inner.cache {
            if c.data_version == data_version && c.project == project {
                return Ok(c.approvals.clone());
            }
        }
        let approvals = query(&inner.conn, inner.columns, Some(project))?;
        inner.cache = Some(CachedList {
            data_version,
            project: project.to_string(),
            approvals: approvals.clone(),
        });
        Ok(approvals)
    }
}

/// Changes whenever another connection commits to the file.
fn data_version(conn: &Connection) -> Result<i64, ApprovalStoreError> {
    conn.prepare_cached("PRAGMA data_version")
        .and_then(|mut s| s.query_row([], |r| r.get(0)))
        .map_err(storage)
}

fn query(
    conn: &Connection,
    columns: &str,
    project: Option<&str>,
) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
    let sql = match project {
        Some(_) => format!("SELECT {columns} FROM approvals WHERE project = ?1 ORDER BY id"),
        None => format!("SELECT {columns} FROM approvals ORDER BY id"),
    };
    let mut stmt = conn.prepare_cached(&sql).map_err(storage)?;
    let rows = match project {
        Some(p) => stmt.query_map([p], row),
        None => stmt.query_map([], row),
    }
    .map_err(storage)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(storage)
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SavedApproval> {
    Ok(SavedApproval {
        id: r.get(0)?,
        project: r.get(1)?,
        action: r.get(2)?,
        pattern: r.get(3)?,
        created_ms: r.get(4)?,
        approved_by: r.get(5)?,
        machine: r.get(6)?,
    })
}

fn storage(e: rusqlite::Error) -> ApprovalStoreError {
    ApprovalStoreError::Storage(Failure::of(e))
}

fn check_field(name: &str, value: &str) -> Result<(), ApprovalStoreError> {
    if value.is_empty() {
        return Err(ApprovalStoreError::Storage(Failure::new(format!(
            "refusing to save an approval with an empty {name}"
        ))));
    }
    if value.contains('\0') {
        return Err(ApprovalStoreError::Storage(Failure::new(format!(
            "refusing to save an approval whose {name} contains a NUL byte"
        ))));
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
        let mut inner = self.lock();
        // This connection's own writes do not change its data_version.
        inner.cache = None;
        let conn = &inner.conn;
        conn.prepare_cached(
            "INSERT INTO approvals (project, action, pattern, created_ms, approved_by, machine)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (project, action, pattern) DO NOTHING",
        )
        .and_then(|mut s| {
            s.execute(params![
                project,
                action,
                pattern,
                now_ms(),
                inner.person,
                inner.machine
            ])
        })
        .map_err(storage)?;
        conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM approvals WHERE project = ?1 AND action = ?2 AND pattern = ?3"
        ))
        .and_then(|mut s| s.query_row(params![project, action, pattern], row))
        .map_err(storage)
    }

    fn list_project(&self, project: &str) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        self.list_cached(project)
    }

    fn list_all(&self) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        let inner = self.lock();
        query(&inner.conn, inner.columns, None)
    }

    fn revoke(&self, id: i64) -> Result<SavedApproval, ApprovalStoreError> {
        let mut inner = self.lock();
        inner.cache = None;
        inner
            .conn
            .prepare_cached(&format!(
                "DELETE FROM approvals WHERE id = ?1 RETURNING {}",
                inner.columns
            ))
            .and_then(|mut s| s.query_row([id], row).optional())
            .map_err(storage)?
            .ok_or(ApprovalStoreError::NotFound(id))
    }
}
