//! `write`: success paths and bad inputs, through the real handler on a tempdir.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::file_support;

use std::os::unix::fs::symlink;

use file_support::{Ws, canon, err};
use serde_json::json;
use toolgate_core::Risk;
use toolgate_tools::file_tools::{ReadTool, WriteTool};

fn write(ws: &Ws) -> WriteTool {
    WriteTool::new(ws.state.clone())
}

#[tokio::test]
async fn creates_file_and_missing_parents() {
    let ws = Ws::new();
    let out = ws
        .call(
            write(&ws),
            json!({"path": "a/b/c.txt", "content": "hello\n"}),
        )
        .await
        .unwrap();
    assert_eq!(ws.get("a/b/c.txt"), "hello\n");
    assert_eq!(out.structured["created"], true);
    assert_eq!(out.structured["bytes"], 6);
    assert_eq!(out.structured["created_dirs"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn overwrites_and_reports_it() {
    let ws = Ws::new();
    ws.put("f.txt", "old\n");
    let out = ws
        .call(
            write(&ws),
            json!({"path": "f.txt", "content": "new content\n"}),
        )
        .await
        .unwrap();
    assert_eq!(out.structured["created"], false);
    assert_eq!(out.structured["bytes"], 12);
    assert_eq!(ws.get("f.txt"), "new content\n");
}

#[tokio::test]
async fn keeps_existing_bom_and_crlf() {
    let ws = Ws::new();
    ws.put("win.txt", "\u{feff}a\r\nb\r\n");
    let out = ws
        .call(write(&ws), json!({"path": "win.txt", "content": "x\ny\n"}))
        .await
        .unwrap();
    assert_eq!(ws.get("win.txt"), "\u{feff}x\r\ny\r\n");
    assert_eq!(out.structured["bom"], true);
    assert_eq!(out.structured["line_ending"], "crlf");
}

#[tokio::test]
async fn keeps_permissions_of_an_existing_file() {
    use std::os::unix::fs::PermissionsExt;
    let ws = Ws::new();
    let p = ws.put("run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    ws.call(
        write(&ws),
        json!({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}),
    )
    .await
    .unwrap();
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o755
    );
}

#[tokio::test]
async fn directory_is_refused() {
    let ws = Ws::new();
    std::fs::create_dir(ws.path("d")).unwrap();
    let e = err(ws
        .call(write(&ws), json!({"path": "d", "content": "x"}))
        .await);
    assert!(e.contains("is a directory"), "{e}");
}

#[tokio::test]
async fn parent_that_is_a_file_is_a_clear_error() {
    let ws = Ws::new();
    ws.put("blocker", "i am a file");
    let e = err(ws
        .call(
            write(&ws),
            json!({"path": "blocker/new.txt", "content": "x"}),
        )
        .await);
    assert!(e.contains("cannot write"), "{e}");
    assert_eq!(ws.get("blocker"), "i am a file");
}

#[tokio::test]
async fn unwritable_location_is_a_clear_error() {
    let ws = Ws::new();
    let e = err(ws
        .call(
            write(&ws),
            json!({"path": "/proc/self/toolgate-test", "content": "x"}),
        )
        .await);
    assert!(e.contains("cannot write"), "{e}");
}

#[tokio::test]
async fn overwrite_of_a_file_changed_since_read_is_refused() {
    let ws = Ws::new();
    ws.put("f.txt", "v1\n");
    ws.call(ReadTool::new(ws.state.clone()), json!({"path": "f.txt"}))
        .await
        .unwrap();
    ws.put("f.txt", "v2 by someone else\n");
    let e = err(ws
        .call(write(&ws), json!({"path": "f.txt", "content": "mine\n"}))
        .await);
    assert!(e.contains("changed since it was last read"), "{e}");
    assert_eq!(ws.get("f.txt"), "v2 by someone else\n");
    // Another session never read it, so it is not stale for that session.
    ws.call_in(
        "s2",
        write(&ws),
        json!({"path": "f.txt", "content": "s2\n"}),
    )
    .await
    .unwrap();
}

#[test]
fn intent_notes_create_or_overwrite() {
    let ws = Ws::new();
    ws.put("exists.txt", "");
    let r = ws
        .intent(write(&ws), json!({"path": "new.txt", "content": ""}))
        .unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].action.as_str(), r[0].risk), ("edit", Risk::Write));
    assert_eq!(r[0].note.as_deref(), Some("create"));
    assert_eq!(r[0].resource, canon(&ws.path("new.txt")));
    let r = ws
        .intent(write(&ws), json!({"path": "exists.txt", "content": ""}))
        .unwrap();
    assert_eq!(r[0].note.as_deref(), Some("overwrite"));
    assert!(ws.intent(write(&ws), json!({"path": "x"})).is_err());
}

#[tokio::test]
async fn symlink_escape_writes_the_resolved_target_not_the_link() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("t.txt");
    std::fs::write(&target, "before\n").unwrap();
    symlink(&target, ws.path("link.txt")).unwrap();
    let r = ws
        .intent(write(&ws), json!({"path": "link.txt", "content": "x"}))
        .unwrap();
    assert_eq!(r[0].resource, canon(&target));
    ws.call(
        write(&ws),
        json!({"path": "link.txt", "content": "after\n"}),
    )
    .await
    .unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "after\n");
    assert!(
        std::fs::symlink_metadata(ws.path("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
