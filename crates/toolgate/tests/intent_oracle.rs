//! The built-in tools' own intents, as the registry prepares them (what
//! `toolgate check` judges and a real call runs with), against what each call
//! must ask for: same actions, resources, kinds, risks and notes. Every case is
//! compared; a tool missing from the registry or refusing its input fails.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use toolgate_core::{Location, Registry, ResourceKind, Risk, ToolSet};

fn workspace() -> (tempfile::TempDir, Location) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.rs"), "fn a() {}\n").unwrap();
    let loc = Location::new(dir.path()).unwrap();
    (dir, loc)
}

/// Every built-in tool's intent gives what is judged: actions, resources,
/// kinds, risks and notes (`create` or `overwrite`, what a patch does to each
/// file).
#[test]
fn builtin_intents_agree_with_the_tools() {
    let (_d, loc) = workspace();
    let registry = Registry::new();
    let _guards =
        toolgate_tools::register_builtins(&registry, &toolgate_tools::BuiltinConfig::default())
            .unwrap();
    let tools = ToolSet::new(Registry::new(), registry);
    let root = loc.root().display().to_string();
    let at = |rel: &str| format!("{root}/{rel}");
    let patch = "*** Begin Patch\n*** Add File: src/n.rs\n+x\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-fn a() {}\n+fn b() {}\n*** Delete File: src/old.rs\n*** End Patch\n";
    let path = ResourceKind::Path;
    let other = ResourceKind::Other;
    let cases = [
        (
            "read",
            json!({"path": "src/a.rs"}),
            vec![("read", at("src/a.rs"), path, Risk::Read, None)],
        ),
        (
            "read",
            json!({"path": "/etc/hostname"}),
            vec![("read", "/etc/hostname".into(), path, Risk::Read, None)],
        ),
        (
            "write",
            json!({"path": "src/a.rs", "content": "x"}),
            vec![("edit", at("src/a.rs"), path, Risk::Write, Some("overwrite"))],
        ),
        (
            "write",
            json!({"path": "src/new.rs", "content": "x"}),
            vec![("edit", at("src/new.rs"), path, Risk::Write, Some("create"))],
        ),
        (
            "edit",
            json!({"path": "src/a.rs", "old_string": "a", "new_string": "b"}),
            vec![("edit", at("src/a.rs"), path, Risk::Write, Some("overwrite"))],
        ),
        (
            "apply_patch",
            json!({ "patch": patch }),
            [
                ("src/n.rs", "add"),
                ("src/a.rs", "move-from"),
                ("src/b.rs", "move-to"),
                ("src/old.rs", "delete"),
            ]
            .iter()
            .map(|&(p, note)| ("edit", at(p), path, Risk::Write, Some(note)))
            .collect(),
        ),
        (
            "bash",
            json!({"command": "ls -la", "workdir": "src"}),
            vec![(
                "bash",
                "ls -la".into(),
                ResourceKind::Command,
                Risk::Execute,
                None,
            )],
        ),
        (
            "list",
            json!({}),
            vec![("list", root.clone(), path, Risk::Read, None)],
        ),
        (
            "glob",
            json!({"pattern": "**/*.rs"}),
            vec![("glob", root.clone(), path, Risk::Read, None)],
        ),
        (
            "grep",
            json!({"pattern": "fn", "path": "src"}),
            vec![("grep", at("src"), path, Risk::Read, None)],
        ),
        (
            "webfetch",
            json!({"url": "https://docs.rs/regex"}),
            vec![(
                "webfetch",
                "https://docs.rs/regex".into(),
                ResourceKind::Url,
                Risk::Network,
                None,
            )],
        ),
        (
            "websearch",
            json!({"query": "rust regex"}),
            vec![("websearch", "rust regex".into(), other, Risk::Network, None)],
        ),
        (
            "todowrite",
            json!({"todos": []}),
            vec![(
                "todowrite",
                "session todo list".into(),
                other,
                Risk::Read,
                None,
            )],
        ),
        (
            "question",
            json!({"questions": [{"question": "ok?"}]}),
            vec![("question", "ok?".into(), other, Risk::Read, None)],
        ),
        (
            "skill",
            json!({"name": "review"}),
            vec![("skill", "review".into(), other, Risk::Read, None)],
        ),
    ];
    for name in toolgate_tools::BUILTIN_TOOL_NAMES {
        assert!(
            cases.iter().any(|(t, _, _)| t == name),
            "{name} has no case"
        );
    }
    for (tool, input, expected) in cases {
        let t = tools
            .active(tool)
            .unwrap_or_else(|| panic!("{tool} is not registered"));
        let prepared = t
            .handler
            .prepare(&input, &loc)
            .unwrap_or_else(|e| panic!("{tool} {input} was refused: {e}"));
        let theirs: Vec<_> = prepared
            .requests
            .iter()
            .map(|r| {
                let note = r.note.as_deref();
                (r.action.as_str(), r.resource.clone(), r.kind, r.risk, note)
            })
            .collect();
        assert_eq!(theirs, expected, "{tool} {input}");
    }
}
