//! `builtin_intent` (one tool built alone, no registry, no schema) gives what a
//! registered tool's `prepare` gives: the same requests, or the same refusal.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use toolgate_core::{Location, Registry, ToolSet};
use toolgate_tools::{BUILTIN_TOOL_NAMES, BuiltinConfig, builtin_intent, register_builtins};

#[test]
fn a_tool_alone_prepares_like_the_registered_tool() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.rs"), "fn a() {}\n").unwrap();
    let loc = Location::new(dir.path()).unwrap();
    let config = BuiltinConfig::default();
    let registry = Registry::new();
    let _guards = register_builtins(&registry, &config).unwrap();
    let tools = ToolSet::new(Registry::new(), registry);
    let patch = "*** Begin Patch\n*** Add File: src/n.rs\n+x\n*** End Patch\n";
    let inputs: Vec<(&str, Value)> = vec![
        ("read", json!({"path": "src/a.rs"})),
        ("read", json!({"path": "src/a.rs", "offset": 0})),
        ("write", json!({"path": "src/a.rs", "content": "x"})),
        ("write", json!({"content": "x"})),
        (
            "edit",
            json!({"path": "src/a.rs", "old_string": "a", "new_string": "b"}),
        ),
        (
            "edit",
            json!({"path": "src/a.rs", "old_string": "a", "new_string": "a"}),
        ),
        ("apply_patch", json!({ "patch": patch })),
        ("apply_patch", json!({"patch": "nope"})),
        ("bash", json!({"command": "ls", "workdir": "src"})),
        ("bash", json!({"command": ""})),
        ("list", json!({"ignore": ["target"]})),
        ("list", json!({"ignore": ["a["]})),
        ("glob", json!({"pattern": "**/*.rs"})),
        ("glob", json!({"pattern": "/abs/*"})),
        ("grep", json!({"pattern": "fn", "include": "*.rs"})),
        ("grep", json!({"pattern": "("})),
        ("webfetch", json!({"url": "https://docs.rs/regex"})),
        ("webfetch", json!({"url": "http://127.0.0.1/"})),
        ("websearch", json!({"query": "rust regex"})),
        ("websearch", json!({"query": " "})),
        ("todowrite", json!({"todos": []})),
        ("todowrite", json!({"todos": 1})),
        ("question", json!({"questions": [{"question": "ok?"}]})),
        ("question", json!({"questions": []})),
        ("skill", json!({"name": "review"})),
        ("skill", json!({"name": ""})),
    ];
    for name in BUILTIN_TOOL_NAMES {
        assert!(
            inputs.iter().filter(|(t, _)| t == name).count() >= 2,
            "{name}"
        );
    }
    for (name, input) in &inputs {
        let registered = tools.active(name).unwrap().handler.prepare(input, &loc);
        let alone = builtin_intent(name, input, &loc, &config).unwrap();
        match (registered, alone) {
            (Ok(prepared), Ok(requests)) => {
                assert_eq!(prepared.requests, requests, "{name} {input}");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name} {input}"),
            (a, b) => panic!(
                "{name} {input}: registered {:?}, alone {:?}",
                a.map(|p| p.requests),
                b
            ),
        }
    }
    assert!(builtin_intent("nope", &json!({}), &loc, &config).is_none());
}
