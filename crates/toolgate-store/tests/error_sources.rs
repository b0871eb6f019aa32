//! The store's port errors keep the SQLite error that caused them as their
//! source, so a caller can tell what failed underneath.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::error::Error;

use common::event;
use toolgate_core::{EventSink, SinkError};
use toolgate_policy::approvals::{ApprovalStore, ApprovalStoreError};
use toolgate_store::{Durability, EventLog, SqliteApprovals};

/// The first cause of `err` (itself included) that is an `E`.
fn cause_of<'a, E: Error + 'static>(err: &'a (dyn Error + 'static)) -> Option<&'a E> {
    let mut cause = Some(err);
    while let Some(e) = cause {
        if let Some(found) = e.downcast_ref::<E>() {
            return Some(found);
        }
        cause = e.source();
    }
    None
}

#[test]
fn a_read_only_approval_store_keeps_the_sqlite_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    SqliteApprovals::open(&path).unwrap();
    let store = SqliteApprovals::open_read_only(&path).unwrap();
    let err = store.save("/p", "bash", "git status").unwrap_err();
    assert!(matches!(err, ApprovalStoreError::Storage(_)), "{err}");
    let sqlite = cause_of::<rusqlite::Error>(&err).unwrap_or_else(|| panic!("no cause: {err}"));
    assert_eq!(
        sqlite.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ReadOnly),
        "{err}"
    );
}

#[tokio::test]
async fn a_failed_append_keeps_the_io_error_for_every_waiter() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = EventLog::open(&path, Durability::Normal).unwrap();
    log.submit(event(1)).await.unwrap();
    // The tail's place is taken by something that is not a file.
    let tail = dir.path().join("events.db.tail");
    std::fs::remove_file(&tail).unwrap();
    std::fs::create_dir(&tail).unwrap();
    let (a, b) = tokio::join!(log.submit(event(2)), log.submit(event(3)));
    for err in [a.unwrap_err(), b.unwrap_err()] {
        assert!(matches!(err, SinkError::Storage(_)), "{err}");
        let io = cause_of::<std::io::Error>(&err).unwrap_or_else(|| panic!("no cause: {err}"));
        assert_eq!(io.kind(), std::io::ErrorKind::IsADirectory, "{err}");
    }
}
