//! Saved approvals in PostgreSQL, shared by every process pointed at the
//! database, each with who approved it and on which machine.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use toolgate_core::{Failure, now_ms};
use toolgate_policy::approvals::{ApprovalStore, ApprovalStoreError, SavedApproval};

use super::conn::{PgConfig, Worker};
use crate::error::StoreError;

/// How long a project's approvals are reused before the database is asked
/// again: a revocation on another machine stops calls here within this time.
pub const APPROVALS_TTL: Duration = Duration::from_secs(1);

const COLUMNS: &str = "id, project, action, pattern, created_ms, approved_by, machine";

/// Saved approvals in the team database, deduplicated by (project, action,
/// pattern); ids are never reused. The last answer for a project is kept for
/// [`APPROVALS_TTL`]; this process's own saves and revokes drop it at once.
pub struct PgApprovals {
    worker: Worker,
    person: String,
    machine: String,
    cache: Mutex<Option<Cached>>,
}

struct Cached {
    at: Instant,
    project: String,
    approvals: Arc<Vec<SavedApproval>>,
}

impl std::fmt::Debug for PgApprovals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgApprovals")
            .field("worker", &self.worker)
            .field("person", &self.person)
            .field("machine", &self.machine)
            .finish_non_exhaustive()
    }
}

impl PgApprovals {
    /// Approvals in `config`'s database, saved as approved by `person` on
    /// `machine`. Connects on first use (creating the tables if missing).
    pub fn open(
        config: PgConfig,
        person: impl Into<String>,
        machine: impl Into<String>,
    ) -> Result<PgApprovals, StoreError> {
        Ok(PgApprovals {
            worker: Worker::start("tg-pg-approvals", config, true)?,
            person: person.into(),
            machine: machine.into(),
            cache: Mutex::new(None),
        })
    }

    fn forget(&self) {
        *self.cache.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn list(&self, project: Option<String>) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        self.worker
            .call(move |conn| {
                conn.run("reading saved approvals from the database", |s| {
                    let rows = match &project {
                        Some(p) => s.client.query(
                            &format!(
                                "SELECT {COLUMNS} FROM toolgate_approvals WHERE project = $1 ORDER BY id"
                            ),
                            &[p],
                        )?,
                        None => s.client.query(
                            &format!("SELECT {COLUMNS} FROM toolgate_approvals ORDER BY id"),
                            &[],
                        )?,
                    };
                    Ok(rows.iter().map(row).collect())
                })
            })
            .map_err(storage)
    }
}

fn row(r: &postgres::Row) -> SavedApproval {
    SavedApproval {
        id: r.get(0),
        project: r.get(1),
        action: r.get(2),
        pattern: r.get(3),
        created_ms: r.get(4),
        approved_by: Some(r.get(5)),
        machine: Some(r.get(6)),
    }
}

fn storage(e: StoreError) -> ApprovalStoreError {
    ApprovalStoreError::Storage(Failure::of(e))
}

fn check_field(name: &str, value: &str) -> Result<(), ApprovalStoreError> {
    if value.is_empty() || value.contains('\0') {
        return Err(ApprovalStoreError::Storage(Failure::new(format!(
            "refusing to save an approval whose {name} is empty or contains a NUL byte"
        ))));
    }
    Ok(())
}

impl ApprovalStore for PgApprovals {
    fn save(
        &self,
        project: &str,
        action: &str,
        pattern: &str,
    ) -> Result<SavedApproval, ApprovalStoreError> {
        check_field("project", project)?;
        check_field("action", action)?;
        check_field("pattern", pattern)?;
        self.forget();
        let args = (
            project.to_string(),
            action.to_string(),
            pattern.to_string(),
            self.person.clone(),
            self.machine.clone(),
        );
        self.worker
            .call(move |conn| {
                conn.run("saving an approval in the database", |s| {
                    let (project, action, pattern, person, machine) = &args;
                    s.client.execute(
                        "INSERT INTO toolgate_approvals
                            (project, action, pattern, created_ms, approved_by, machine)
                         VALUES ($1, $2, $3, $4, $5, $6)
                         ON CONFLICT (project, action, pattern) DO NOTHING",
                        &[project, action, pattern, &now_ms(), person, machine],
                    )?;
                    let r = s.client.query_one(
                        &format!(
                            "SELECT {COLUMNS} FROM toolgate_approvals
                             WHERE project = $1 AND action = $2 AND pattern = $3"
                        ),
                        &[project, action, pattern],
                    )?;
                    Ok(row(&r))
                })
            })
            .map_err(storage)
    }

    fn list_project(&self, project: &str) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        {
            let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(c) = cache.as_ref() {
                if c.project == project && c.at.elapsed() < APPROVALS_TTL {
                    return Ok(c.approvals.as_ref().clone());
                }
            }
        }
        let approvals = self.list(Some(project.to_string()))?;
        *self.cache.lock().unwrap_or_else(PoisonError::into_inner) = Some(Cached {
            at: Instant::now(),
            project: project.to_string(),
            approvals: Arc::new(approvals.clone()),
        });
        Ok(approvals)
    }

    fn list_all(&self) -> Result<Vec<SavedApproval>, ApprovalStoreError> {
        self.list(None)
    }

    fn revoke(&self, id: i64) -> Result<SavedApproval, ApprovalStoreError> {
        self.forget();
        let found = self
            .worker
            .call(move |conn| {
                conn.run("revoking an approval in the database", |s| {
                    let r = s.client.query_opt(
                        &format!(
                            "DELETE FROM toolgate_approvals WHERE id = $1 RETURNING {COLUMNS}"
                        ),
                        &[&id],
                    )?;
                    Ok(r.as_ref().map(row))
                })
            })
            .map_err(storage)?;
        found.ok_or(ApprovalStoreError::NotFound(id))
    }
}
