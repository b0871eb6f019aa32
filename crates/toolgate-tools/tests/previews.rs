//! What the built-in tools show a person asked about a call: the command and
//! where it runs, the diff of an edit, the whole content of a write, the patch.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use toolgate_core::{Location, Preview, PreviewBody, Registry, ToolSet};
use toolgate_tools::{BuiltinConfig, register_builtins};

struct Tools {
    _dir: tempfile::TempDir,
    location: Location,
    tools: ToolSet,
    _registrations: Vec<toolgate_core::Registration>,
}

fn tools() -> Tools {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    let registry = Registry::new();
    let registrations = register_builtins(&registry, &BuiltinConfig::default()).unwrap();
    Tools {
        _dir: dir,
        location: Location::new(&root).unwrap(),
        tools: ToolSet::new(Registry::new(), registry),
        _registrations: registrations,
    }
}

impl Tools {
    fn preview(&self, tool: &str, input: Value) -> Option<Preview> {
        let handler = self.tools.active(tool).unwrap().handler;
        handler.preview(&input, &self.location)
    }
}

fn body(preview: &Preview) -> &PreviewBody {
    preview.body.as_ref().unwrap()
}

fn field<'a>(preview: &'a Preview, label: &str) -> Option<&'a str> {
    preview
        .fields
        .iter()
        .find(|f| f.label == label)
        .map(|f| f.value.as_str())
}

#[test]
fn edit_shows_a_unified_diff() {
    let t = tools();
    let p = t
        .preview(
            "edit",
            json!({"path": "src/a.rs", "old_string": "let x = 1;\n", "new_string": "let x = 2;\n"}),
        )
        .unwrap();
    assert_eq!(p.title, "Edit");
    let PreviewBody::Diff(diff) = body(&p) else {
        panic!("not a diff: {p:?}");
    };
    let lines: Vec<&str> = diff.lines().collect();
    for want in ["--- src/a.rs", "+++ src/a.rs", "-let x = 1;", "+let x = 2;"] {
        assert!(lines.contains(&want), "{want:?} missing from\n{diff}");
    }
    let every = t
        .preview(
            "edit",
            json!({"path": "a", "old_string": "x", "new_string": "y", "replace_all": true}),
        )
        .unwrap();
    assert_eq!(every.title, "Edit (every occurrence)");
}

#[test]
fn bash_shows_the_command_where_it_runs_and_why() {
    let t = tools();
    let p = t
        .preview(
            "bash",
            json!({"command": "echo '<b>' && rm -rf /tmp/x", "workdir": "src", "description": "clean up"}),
        )
        .unwrap();
    assert_eq!(p.title, "Command");
    assert_eq!(
        body(&p),
        &PreviewBody::Command("echo '<b>' && rm -rf /tmp/x".into())
    );
    let src = t.location.root().join("src").display().to_string();
    assert_eq!(field(&p, "in"), Some(src.as_str()));
    assert_eq!(field(&p, "the model says"), Some("clean up"));
    // Without a workdir the command starts at the root.
    let p = t.preview("bash", json!({"command": "ls"})).unwrap();
    let root = t.location.root().display().to_string();
    assert_eq!(field(&p, "in"), Some(root.as_str()));
    assert_eq!(field(&p, "the model says"), None);
}

#[test]
fn write_shows_the_path_the_size_and_every_new_line() {
    let t = tools();
    let content = "x\n".repeat(2005);
    let p = t
        .preview("write", json!({"path": "big.txt", "content": content}))
        .unwrap();
    assert_eq!(p.title, "Write");
    assert_eq!(field(&p, "path"), Some("big.txt"));
    assert_eq!(field(&p, "size"), Some("4010 bytes, 2005 lines"));
    let PreviewBody::Diff(diff) = body(&p) else {
        panic!("not a diff: {p:?}");
    };
    assert_eq!(diff.lines().next(), Some("+++ big.txt (whole new content)"));
    assert_eq!(diff.lines().filter(|l| *l == "+x").count(), 2005);
}

#[test]
fn apply_patch_shows_the_patch() {
    let t = tools();
    let patch = "*** Begin Patch\n*** Add File: n.txt\n+hi\n*** End Patch\n";
    let p = t.preview("apply_patch", json!({"patch": patch})).unwrap();
    assert_eq!(p.title, "Patch");
    assert_eq!(body(&p), &PreviewBody::Diff(patch.into()));
}

#[test]
fn tools_without_a_preview_and_bad_inputs_give_none() {
    let t = tools();
    assert_eq!(t.preview("read", json!({"path": "src"})), None);
    assert_eq!(t.preview("bash", json!({"command": 7})), None);
}
