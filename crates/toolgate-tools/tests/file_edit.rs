//! `edit`: success paths and bad inputs, through the real handler on a tempdir.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::file_support;

use file_support::{Ws, canon, err, text};
use serde_json::json;
use toolgate_core::Risk;
use toolgate_tools::file_tools::{EditTool, ReadTool};

fn edit(ws: &Ws) -> EditTool {
    EditTool::new(ws.state.clone())
}

#[tokio::test]
async fn replaces_once_and_returns_a_unified_diff() {
    let ws = Ws::new();
    ws.put("src/lib.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
    let out = ws
        .call(
            edit(&ws),
            json!({"path": "src/lib.rs", "old_string": "fn b() {}", "new_string": "fn b() { todo!() }"}),
        )
        .await
        .unwrap();
    assert_eq!(
        ws.get("src/lib.rs"),
        "fn a() {}\nfn b() { todo!() }\nfn c() {}\n"
    );
    let diff = out.structured["diff"].as_str().unwrap();
    assert!(diff.contains("--- a/src/lib.rs"), "{diff}");
    assert!(diff.contains("-fn b() {}\n+fn b() { todo!() }"), "{diff}");
    assert_eq!(out.structured["replacements"], 1);
    assert_eq!(out.structured["lines"], json!([2]));
    assert!(text(&out).contains("Edited"));
}

#[tokio::test]
async fn ambiguous_edit_names_count_and_lines() {
    let ws = Ws::new();
    ws.put("f.txt", "x = 1\ny = 2\nx = 1\nz\nx = 1\n");
    let e = err(ws
        .call(
            edit(&ws),
            json!({"path": "f.txt", "old_string": "x = 1", "new_string": "x = 9"}),
        )
        .await);
    assert!(e.contains("occurs 3 times"), "{e}");
    assert!(e.contains("lines 1, 3, 5"), "{e}");
    assert_eq!(ws.get("f.txt"), "x = 1\ny = 2\nx = 1\nz\nx = 1\n");
}

#[tokio::test]
async fn replace_all_replaces_every_occurrence() {
    let ws = Ws::new();
    ws.put("f.txt", "x = 1\ny\nx = 1\n");
    let out = ws
        .call(
            edit(&ws),
            json!({"path": "f.txt", "old_string": "x = 1", "new_string": "x = 2", "replace_all": true}),
        )
        .await
        .unwrap();
    assert_eq!(ws.get("f.txt"), "x = 2\ny\nx = 2\n");
    assert_eq!(out.structured["replacements"], 2);
}

#[tokio::test]
async fn no_match_shows_the_closest_lines_as_a_hint_only() {
    let ws = Ws::new();
    ws.put(
        "f.py",
        "def f():\n    return  1\n\ndef g():\n    return 2\n",
    );
    let e = err(ws
        .call(
            edit(&ws),
            json!({"path": "f.py", "old_string": "def f():\n  return 1", "new_string": "def f():\n  return 3"}),
        )
        .await);
    assert!(e.contains("not found"), "{e}");
    assert!(e.contains("match when whitespace is ignored"), "{e}");
    assert!(e.contains("lines 1-2"), "{e}");
    assert!(e.contains("     2\t    return  1"), "{e}");
    // Never applied silently.
    assert_eq!(
        ws.get("f.py"),
        "def f():\n    return  1\n\ndef g():\n    return 2\n"
    );

    let e = err(ws
        .call(
            edit(&ws),
            json!({"path": "f.py", "old_string": "def g():\n    return 3", "new_string": "x"}),
        )
        .await);
    assert!(e.contains("% similar"), "{e}");
    assert!(e.contains("lines 4-5"), "{e}");
}

#[tokio::test]
async fn edit_after_the_file_changed_since_read_is_refused() {
    let ws = Ws::new();
    ws.put("f.txt", "alpha\nbeta\n");
    ws.call(ReadTool::new(ws.state.clone()), json!({"path": "f.txt"}))
        .await
        .unwrap();
    ws.put("f.txt", "alpha\nbeta\ngamma\n");
    let input = json!({"path": "f.txt", "old_string": "beta", "new_string": "BETA"});
    let e = err(ws.call(edit(&ws), input.clone()).await);
    assert!(e.contains("changed since it was last read"), "{e}");
    assert_eq!(ws.get("f.txt"), "alpha\nbeta\ngamma\n");
    // Reading again makes the edit possible; the session's own edits keep it fresh.
    ws.call(ReadTool::new(ws.state.clone()), json!({"path": "f.txt"}))
        .await
        .unwrap();
    ws.call(edit(&ws), input).await.unwrap();
    ws.call(
        edit(&ws),
        json!({"path": "f.txt", "old_string": "gamma", "new_string": "GAMMA"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.get("f.txt"), "alpha\nBETA\nGAMMA\n");
}

#[tokio::test]
async fn keeps_bom_and_crlf() {
    let ws = Ws::new();
    ws.put("w.txt", "\u{feff}one\r\ntwo\r\nthree\r\n");
    ws.call(
        edit(&ws),
        json!({"path": "w.txt", "old_string": "one\ntwo", "new_string": "one\n2\nmore"}),
    )
    .await
    .unwrap();
    assert_eq!(ws.get("w.txt"), "\u{feff}one\r\n2\r\nmore\r\nthree\r\n");
}

#[tokio::test]
async fn bad_inputs_are_clear_errors() {
    let ws = Ws::new();
    ws.put("f.txt", "abc\n");
    std::fs::create_dir(ws.path("dir")).unwrap();
    ws.put("latin1.txt", b"caf\xe9\n");
    let cases = [
        (
            json!({"path": "missing.txt", "old_string": "a", "new_string": "b"}),
            "file not found",
        ),
        (
            json!({"path": "dir", "old_string": "a", "new_string": "b"}),
            "is a directory",
        ),
        (
            json!({"path": "latin1.txt", "old_string": "caf", "new_string": "b"}),
            "not valid UTF-8",
        ),
        (
            json!({"path": "f.txt", "old_string": "", "new_string": "b"}),
            "old_string is empty",
        ),
        (
            json!({"path": "f.txt", "old_string": "abc", "new_string": "abc"}),
            "identical",
        ),
        (
            json!({"path": "f.txt", "old_string": "a", "new_string": "b", "all": true}),
            "unknown field",
        ),
        (json!({"path": "f.txt", "old_string": "a"}), "new_string"),
    ];
    for (input, want) in cases {
        let e = err(ws.call(edit(&ws), input.clone()).await);
        assert!(e.contains(want), "{input}: {e}");
    }
    assert_eq!(ws.get("f.txt"), "abc\n");
}

#[test]
fn intent_is_an_edit_write_request() {
    let ws = Ws::new();
    ws.put("f.txt", "abc\n");
    let r = ws
        .intent(
            edit(&ws),
            json!({"path": "./f.txt", "old_string": "a", "new_string": "b"}),
        )
        .unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].action.as_str(), r[0].risk), ("edit", Risk::Write));
    assert_eq!(r[0].resource, canon(&ws.path("f.txt")));
    assert_eq!(r[0].note.as_deref(), Some("overwrite"));
}

#[tokio::test]
async fn symlink_escape_edits_the_resolved_target() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("t.txt");
    std::fs::write(&target, "old\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path("out")).unwrap();
    let input = json!({"path": "out/t.txt", "old_string": "old", "new_string": "new"});
    let r = ws.intent(edit(&ws), input.clone()).unwrap();
    assert_eq!(r[0].resource, canon(&target));
    ws.call(edit(&ws), input).await.unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new\n");
}
