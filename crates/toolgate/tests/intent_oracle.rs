//! The policy's copy of the built-in intents (a test oracle for the policy
//! crate; `toolgate check` asks the tools themselves) against the tools' own
//! intents: same actions, resources and risks.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use toolgate_core::{Location, Registry, ToolSet};
use toolgate_policy::intent::{BUILTIN_TOOLS, builtin_intent};

fn workspace() -> (tempfile::TempDir, Location) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.rs"), "fn a() {}\n").unwrap();
    let loc = Location::new(dir.path()).unwrap();
    (dir, loc)
}

/// The policy's copy of the built-in intents agrees with the tools' own on what
/// is judged: actions, resources and risks.
#[test]
fn builtin_intents_agree_with_the_tools() {
    let (_d, loc) = workspace();
    let registry = Registry::new();
    let _guards =
        toolgate_tools::register_builtins(&registry, &toolgate_tools::BuiltinConfig::default())
            .unwrap();
    let tools = ToolSet::new(Registry::new(), registry);
    let patch = "*** Begin Patch\n*** Add File: src/n.rs\n+x\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-fn a() {}\n+fn b() {}\n*** Delete File: src/old.rs\n*** End Patch\n";
    let inputs = [
        ("read", json!({"path": "src/a.rs"})),
        ("read", json!({"path": "/etc/hostname"})),
        ("write", json!({"path": "src/a.rs", "content": "x"})),
        ("write", json!({"path": "src/new.rs", "content": "x"})),
        (
            "edit",
            json!({"path": "src/a.rs", "old_string": "a", "new_string": "b"}),
        ),
        ("apply_patch", json!({ "patch": patch })),
        ("bash", json!({"command": "ls -la", "workdir": "src"})),
        ("list", json!({})),
        ("glob", json!({"pattern": "**/*.rs"})),
        ("grep", json!({"pattern": "fn", "path": "src"})),
        ("webfetch", json!({"url": "https://docs.rs/regex"})),
        ("websearch", json!({"query": "rust regex"})),
        ("todowrite", json!({"todos": []})),
        ("question", json!({"questions": [{"question": "ok?"}]})),
        ("skill", json!({"name": "review"})),
    ];
    let mut compared = 0;
    for (tool, input) in inputs {
        assert!(BUILTIN_TOOLS.contains(&tool));
        let Some(t) = tools.active(tool) else {
            continue;
        };
        let Ok(prepared) = t.handler.prepare(&input, &loc) else {
            continue;
        };
        let ours = builtin_intent(tool, &input, &loc).unwrap();
        let key =
            |r: &toolgate_core::PermissionRequest| (r.action.clone(), r.resource.clone(), r.risk);
        let theirs: Vec<_> = prepared.requests.iter().map(key).collect();
        let mine: Vec<_> = ours.iter().map(key).collect();
        assert_eq!(mine, theirs, "{tool} {input}");
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} tools could be compared");
}
