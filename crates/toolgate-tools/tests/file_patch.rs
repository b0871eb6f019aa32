//! `apply_patch`: success paths, bad patches and atomic rollback, through the
//! real handler on a tempdir.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::file_support;

use file_support::{Ws, canon, err, text};
use serde_json::json;
use toolgate_core::Risk;
use toolgate_tools::file_tools::ApplyPatchTool;

fn patch_tool(ws: &Ws) -> ApplyPatchTool {
    ApplyPatchTool::new(ws.state.clone())
}

async fn apply(
    ws: &Ws,
    patch: &str,
) -> Result<toolgate_core::ToolOutput, file_support::CallFailure> {
    ws.call(patch_tool(ws), json!({ "patch": patch })).await
}

#[tokio::test]
async fn adds_updates_deletes_and_moves() {
    let ws = Ws::new();
    ws.put("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    ws.put("old.txt", "bye\n");
    ws.put("docs/a.md", "# A\ntext\n");
    let patch = "*** Begin Patch
*** Add File: src/new.rs
+pub fn new() {}
*** Update File: src/main.rs
@@ fn main() {
-    println!(\"hi\");
+    println!(\"hello\");
 }
*** Delete File: old.txt
*** Update File: docs/a.md
*** Move to: docs/b.md
@@
 # A
-text
+moved text
*** End Patch
";
    let out = apply(&ws, patch).await.unwrap();
    assert_eq!(ws.get("src/new.rs"), "pub fn new() {}\n");
    assert_eq!(
        ws.get("src/main.rs"),
        "fn main() {\n    println!(\"hello\");\n}\n"
    );
    assert!(!ws.path("old.txt").exists());
    assert!(!ws.path("docs/a.md").exists());
    assert_eq!(ws.get("docs/b.md"), "# A\nmoved text\n");
    let s = &out.structured;
    assert_eq!(
        s["summary"],
        "A src/new.rs\nM src/main.rs\nD old.txt\nM docs/b.md"
    );
    assert_eq!(s["files"][3]["moved_from"], "docs/a.md");
    assert_eq!(s["match_level"], "exact");
    assert!(text(&out).contains("A src/new.rs"));
}

#[test]
fn intent_has_one_request_per_file_touched() {
    let ws = Ws::new();
    ws.put("a.txt", "a\n");
    ws.put("b.txt", "b\n");
    ws.put("c.txt", "c\n");
    let patch = "*** Begin Patch
*** Add File: n.txt
+n
*** Update File: a.txt
@@
-a
+A
*** Delete File: b.txt
*** Update File: c.txt
*** Move to: sub/d.txt
*** End Patch";
    let r = ws
        .intent(patch_tool(&ws), json!({ "patch": patch }))
        .unwrap();
    let got: Vec<(&str, &str, String, Risk)> = r
        .iter()
        .map(|r| {
            (
                r.action.as_str(),
                r.note.as_deref().unwrap(),
                r.resource.clone(),
                r.risk,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("edit", "add", canon(&ws.path("n.txt")), Risk::Write),
            ("edit", "update", canon(&ws.path("a.txt")), Risk::Write),
            ("edit", "delete", canon(&ws.path("b.txt")), Risk::Write),
            ("edit", "move-from", canon(&ws.path("c.txt")), Risk::Write),
            ("edit", "move-to", canon(&ws.path("sub/d.txt")), Risk::Write),
        ]
    );
}

#[tokio::test]
async fn empty_patch_is_rejected_before_running() {
    let ws = Ws::new();
    for patch in ["", "   \n", "*** Begin Patch\n*** End Patch\n"] {
        let e = err(apply(&ws, patch).await);
        assert!(e.starts_with("prepare:"), "{e}");
        assert!(
            e.contains("empty") || e.contains("no file operations"),
            "{e}"
        );
    }
    let e = err(apply(&ws, "*** Begin Patch\n*** Add File: a\n+x\n").await);
    assert!(
        e.contains("patch line 3") && e.contains("*** End Patch"),
        "{e}"
    );
}

#[tokio::test]
async fn missing_context_names_file_and_hunk_line_and_changes_nothing() {
    let ws = Ws::new();
    ws.put("first.txt", "one\n");
    ws.put("second.txt", "alpha\nbeta\n");
    let patch = "*** Begin Patch
*** Update File: first.txt
@@
-one
+ONE
*** Update File: second.txt
@@
 alpha
-gamma
+GAMMA
*** End Patch";
    let e = err(apply(&ws, patch).await);
    assert!(e.contains("second.txt"), "{e}");
    assert!(e.contains("patch line 7"), "{e}");
    assert!(e.contains("gamma"), "{e}");
    assert!(e.contains("nothing was changed"), "{e}");
    assert_eq!(ws.get("first.txt"), "one\n");
    assert_eq!(ws.get("second.txt"), "alpha\nbeta\n");
}

#[tokio::test]
async fn missing_anchor_is_reported() {
    let ws = Ws::new();
    ws.put("f.rs", "fn a() {\n    x\n}\n");
    let e = err(apply(
        &ws,
        "*** Begin Patch\n*** Update File: f.rs\n@@ fn zzz() {\n-    x\n+    y\n*** End Patch",
    )
    .await);
    assert!(e.contains("`@@ fn zzz() {` was not found"), "{e}");
    assert!(e.contains("f.rs (patch line 3)"), "{e}");
}

#[tokio::test]
async fn failure_on_the_third_file_restores_everything() {
    let ws = Ws::new();
    ws.put("one.txt", "original one\n");
    ws.put("gone.txt", "will be deleted then restored\n");
    // The third write fails for real: its parent path is a regular file.
    ws.put("blocker", "a regular file\n");
    let patch = "*** Begin Patch
*** Update File: one.txt
@@
-original one
+changed one
*** Add File: newdir/deep/two.txt
+created two
*** Delete File: gone.txt
*** Add File: blocker/three.txt
+never written
*** End Patch";
    let e = err(apply(&ws, patch).await);
    assert!(e.contains("blocker/three.txt"), "{e}");
    assert!(e.contains("3 earlier change(s) were rolled back"), "{e}");
    assert_eq!(ws.get("one.txt"), "original one\n");
    assert_eq!(ws.get("gone.txt"), "will be deleted then restored\n");
    assert!(
        !ws.path("newdir").exists(),
        "created directories are removed"
    );
    assert_eq!(ws.get("blocker"), "a regular file\n");
    // No temporary files are left behind.
    let names: Vec<String> = std::fs::read_dir(ws.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut names = names;
    names.sort();
    assert_eq!(names, ["blocker", "gone.txt", "one.txt"]);
}

#[tokio::test]
async fn lenient_matching_reports_its_level() {
    let ws = Ws::new();
    ws.put("t.txt", "let a = 1;   \nkeep\n");
    ws.put("u.txt", "say(\u{201C}hi\u{201D}) \u{2014} ok\n");
    let patch = "*** Begin Patch
*** Update File: t.txt
@@
-let a = 1;
+let a = 2;
*** Update File: u.txt
@@
-say(\"hi\") - ok
+say(\"bye\")
*** End Patch";
    let out = apply(&ws, patch).await.unwrap();
    assert_eq!(ws.get("t.txt"), "let a = 2;\nkeep\n");
    assert_eq!(ws.get("u.txt"), "say(\"bye\")\n");
    let s = &out.structured;
    assert_eq!(s["files"][0]["match_level"], "trailing_whitespace");
    assert_eq!(s["files"][1]["match_level"], "unicode");
    assert_eq!(s["match_level"], "unicode");
}

#[tokio::test]
async fn keeps_crlf_and_bom_and_honours_end_of_file() {
    let ws = Ws::new();
    ws.put("w.txt", "\u{feff}x\r\nend\r\nx\r\n");
    let patch =
        "*** Begin Patch\n*** Update File: w.txt\n@@\n-x\n+y\n*** End of File\n*** End Patch";
    apply(&ws, patch).await.unwrap();
    assert_eq!(ws.get("w.txt"), "\u{feff}x\r\nend\r\ny\r\n");
}

#[tokio::test]
async fn bad_targets_are_clear_errors() {
    let ws = Ws::new();
    ws.put("exists.txt", "x\n");
    std::fs::create_dir(ws.path("dir")).unwrap();
    let cases = [
        (
            "*** Begin Patch\n*** Add File: exists.txt\n+y\n*** End Patch",
            "already exists",
        ),
        (
            "*** Begin Patch\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch",
            "file not found",
        ),
        (
            "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch",
            "file not found",
        ),
        (
            "*** Begin Patch\n*** Delete File: dir\n*** End Patch",
            "is a directory",
        ),
        (
            "*** Begin Patch\n*** Update File: exists.txt\n@@\n-x\n+y\n*** Delete File: exists.txt\n*** End Patch",
            "more than once",
        ),
        (
            "*** Begin Patch\n*** Update File: exists.txt\n*** Move to: exists.txt2\n@@\n?x\n*** End Patch",
            "patch line 5",
        ),
    ];
    for (patch, want) in cases {
        let e = err(apply(&ws, patch).await);
        assert!(e.contains(want), "{patch}: {e}");
    }
    assert_eq!(ws.get("exists.txt"), "x\n");
    let e = err(ws.call(patch_tool(&ws), json!({"diff": "x"})).await);
    assert!(e.contains("unknown field"), "{e}");
}

#[tokio::test]
async fn symlink_escape_patches_the_resolved_target() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("o.txt"), "outer\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path("ext")).unwrap();
    let patch = "*** Begin Patch\n*** Update File: ext/o.txt\n@@\n-outer\n+patched\n*** End Patch";
    let r = ws
        .intent(patch_tool(&ws), json!({ "patch": patch }))
        .unwrap();
    assert_eq!(r[0].resource, canon(&outside.path().join("o.txt")));
    apply(&ws, patch).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(outside.path().join("o.txt")).unwrap(),
        "patched\n"
    );
}
