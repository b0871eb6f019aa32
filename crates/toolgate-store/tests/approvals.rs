//! Saved approvals in a real SQLite state database.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use toolgate_policy::approvals::{ApprovalStore, ApprovalStoreError};
use toolgate_store::SqliteApprovals;

#[test]
fn saving_twice_returns_the_same_approval() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteApprovals::open(dir.path().join("state.db")).unwrap();
    let a = store.save("/ws", "bash", "git push *").unwrap();
    let b = store.save("/ws", "bash", "git push *").unwrap();
    assert_eq!(a, b);
    assert_eq!(a.project, "/ws");
    assert_eq!(a.action, "bash");
    assert_eq!(a.pattern, "git push *");
    assert!(a.created_ms > 0);
    // Any one field different is a different approval.
    let c = store.save("/ws", "edit", "git push *").unwrap();
    let d = store.save("/other", "bash", "git push *").unwrap();
    let e = store.save("/ws", "bash", "git push origin *").unwrap();
    let ids = [a.id, c.id, d.id, e.id];
    assert_eq!(
        ids.iter().collect::<std::collections::HashSet<_>>().len(),
        4
    );
    assert_eq!(store.list_all().unwrap().len(), 4);
}

#[test]
fn lists_are_per_project_and_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteApprovals::open(dir.path().join("state.db")).unwrap();
    let first = store.save("/a", "bash", "cargo test *").unwrap();
    let other = store.save("/b", "edit", "/b/src/*").unwrap();
    let second = store.save("/a", "edit", "/a/src/*").unwrap();
    assert_eq!(
        store.list_project("/a").unwrap(),
        vec![first.clone(), second.clone()]
    );
    assert_eq!(store.list_project("/b").unwrap(), vec![other.clone()]);
    assert!(store.list_project("/c").unwrap().is_empty());
    assert_eq!(store.list_all().unwrap(), vec![first, other, second]);
}

#[test]
fn revoke_removes_one_and_unknown_ids_are_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteApprovals::open(dir.path().join("state.db")).unwrap();
    let a = store.save("/ws", "bash", "ls *").unwrap();
    let b = store.save("/ws", "bash", "cat *").unwrap();
    assert_eq!(store.revoke(a.id).unwrap(), a);
    assert_eq!(store.list_all().unwrap(), vec![b.clone()]);
    let again = store.revoke(a.id).unwrap_err();
    assert!(matches!(again, ApprovalStoreError::NotFound(id) if id == a.id));
    assert_eq!(
        again.to_string(),
        format!("no saved approval with id {}", a.id)
    );
    for bad in [0, -1, 9999, i64::MAX] {
        assert!(matches!(store.revoke(bad), Err(ApprovalStoreError::NotFound(x)) if x == bad));
    }
    // A revoked id is never handed out again.
    let c = store.save("/ws", "bash", "ls *").unwrap();
    assert!(c.id > b.id);
    assert_eq!(store.list_all().unwrap(), vec![b, c]);
}

#[test]
fn approvals_persist_across_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let saved = SqliteApprovals::open(&path)
        .unwrap()
        .save("/ws", "webfetch", "example.com")
        .unwrap();
    let reopened = SqliteApprovals::open(&path).unwrap();
    assert_eq!(reopened.list_all().unwrap(), vec![saved.clone()]);
    assert_eq!(
        reopened.save("/ws", "webfetch", "example.com").unwrap(),
        saved
    );
}

#[test]
fn empty_or_nul_fields_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteApprovals::open(dir.path().join("state.db")).unwrap();
    for (p, a, pat, field) in [
        ("", "bash", "ls *", "project"),
        ("/ws", "", "ls *", "action"),
        ("/ws", "bash", "", "pattern"),
        ("/ws", "bash", "ls\0 *", "pattern"),
    ] {
        let err = store.save(p, a, pat).unwrap_err();
        assert!(err.to_string().contains(field), "{err}");
    }
    assert!(store.list_all().unwrap().is_empty());
}

#[test]
fn quoting_in_patterns_is_stored_verbatim() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteApprovals::open(dir.path().join("state.db")).unwrap();
    let tricky = "echo '; DROP TABLE approvals; --' *";
    let a = store.save("/ws", "bash", tricky).unwrap();
    assert_eq!(store.list_all().unwrap()[0].pattern, tricky);
    assert_eq!(store.revoke(a.id).unwrap().pattern, tricky);
}

#[test]
fn a_garbage_state_file_is_an_error_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    std::fs::write(&path, b"{\"not\": \"sqlite\"}\n".repeat(300)).unwrap();
    let before = std::fs::read(&path).unwrap();
    let err = SqliteApprovals::open(&path).unwrap_err();
    assert!(
        err.to_string().contains("is not a toolgate state database"),
        "{err}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn the_store_is_usable_as_a_trait_object_from_many_threads() {
    let dir = tempfile::tempdir().unwrap();
    let store: std::sync::Arc<dyn ApprovalStore> =
        std::sync::Arc::new(SqliteApprovals::open(dir.path().join("state.db")).unwrap());
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                for i in 0..20 {
                    store
                        .save("/ws", "bash", &format!("cmd{} *", i % 10))
                        .unwrap();
                    store.save("/ws", "edit", &format!("/ws/{t}/*")).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(store.list_project("/ws").unwrap().len(), 10 + 8);
}

/// The gate lists a project's approvals on every call and the store answers
/// from a cache; a change made through another connection (another process:
/// `toolgate approvals revoke`, the approval page) must be seen on the next list.
#[test]
fn another_connections_revoke_and_save_are_seen_on_the_next_list() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let server = SqliteApprovals::open(&path).unwrap();
    let cli = SqliteApprovals::open(&path).unwrap();
    let a = cli.save("/ws", "bash", "git push *").unwrap();
    let b = cli.save("/ws", "bash", "cargo test *").unwrap();
    // Listed twice: the second answer may come from the cache.
    assert_eq!(
        server.list_project("/ws").unwrap(),
        vec![a.clone(), b.clone()]
    );
    assert_eq!(
        server.list_project("/ws").unwrap(),
        vec![a.clone(), b.clone()]
    );
    cli.revoke(a.id).unwrap();
    assert_eq!(server.list_project("/ws").unwrap(), vec![b.clone()]);
    let c = cli.save("/ws", "edit", "/ws/src/*").unwrap();
    assert_eq!(
        server.list_project("/ws").unwrap(),
        vec![b.clone(), c.clone()]
    );
    // A raw write through SQLite itself, as any other program could make.
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute("DELETE FROM approvals WHERE id = ?1", [b.id])
        .unwrap();
    assert_eq!(server.list_project("/ws").unwrap(), vec![c.clone()]);
    // Its own writes too, and another project is not served from the cache.
    server.revoke(c.id).unwrap();
    assert!(server.list_project("/ws").unwrap().is_empty());
    let d = server.save("/other", "bash", "ls *").unwrap();
    assert!(server.list_project("/ws").unwrap().is_empty());
    assert_eq!(server.list_project("/other").unwrap(), vec![d]);
}

#[test]
fn a_read_only_store_lists_what_is_saved_and_refuses_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    // Nothing there: an error naming the file, and no file is created.
    let missing = SqliteApprovals::open_read_only(&path).err().unwrap();
    assert!(missing.to_string().contains("state.db"), "{missing}");
    assert!(!path.exists());

    let writer = SqliteApprovals::open(&path).unwrap();
    let saved = writer.save("/ws", "bash", "cargo test *").unwrap();
    let reader = SqliteApprovals::open_read_only(&path).unwrap();
    assert_eq!(reader.list_project("/ws").unwrap(), vec![saved.clone()]);
    // Writes through it fail with an error and change nothing.
    assert!(matches!(
        reader.save("/ws", "bash", "ls *"),
        Err(ApprovalStoreError::Storage(_))
    ));
    assert!(reader.revoke(saved.id).is_err());
    assert_eq!(writer.list_all().unwrap(), vec![saved.clone()]);
    // A revoke by the writer is seen by the reader on its next list.
    writer.revoke(saved.id).unwrap();
    assert!(reader.list_project("/ws").unwrap().is_empty());
    // With no writer open (its WAL checkpointed and gone), it still reads.
    let kept = writer.save("/ws", "bash", "git status *").unwrap();
    drop(reader);
    drop(writer);
    let reader = SqliteApprovals::open_read_only(&path).unwrap();
    assert_eq!(reader.list_project("/ws").unwrap(), vec![kept]);
}
