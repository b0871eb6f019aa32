//! A tool's error keeps the error underneath it as its source, while the
//! model still reads the same message.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::error::Error;

use toolgate_core::ToolError;
use toolgate_tools::session_tools::{SessionToolsConfig, TodoWriteTool};

#[test]
fn a_corrupt_todo_list_keeps_the_json_error() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TodoWriteTool::new(&SessionToolsConfig {
        data_dir: dir.path().to_path_buf(),
        ..SessionToolsConfig::default()
    });
    let path = tool.list_path("s1");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{ not json").unwrap();
    let err = tool.load("s1").unwrap_err();
    assert!(matches!(err, ToolError::Caused(_)), "{err:?}");
    let mut cause = err.source();
    let mut json = None;
    while let Some(e) = cause {
        json = json.or(e.downcast_ref::<serde_json::Error>());
        cause = e.source();
    }
    let json = json.unwrap_or_else(|| panic!("no JSON cause: {err}"));
    assert_eq!(
        err.to_string(),
        format!("todo list {} is corrupt: {json}", path.display())
    );
}
