//! The process, web and session tools are registered under their built-in names with exactly
//! the documented input fields.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::collections::BTreeSet;

use support::Env;
use toolgate_core::{Registry, ToolSet};
use toolgate_tools::{process_tools, session_tools, web_tools};

#[test]
fn names_and_input_fields_match_the_design() {
    let env = Env::new();
    let process = Registry::new();
    let mut guards = process_tools::register(&process, &env.config).unwrap();
    guards.extend(web_tools::register(&process, &env.web).unwrap());
    guards.extend(session_tools::register(&process, &env.session).unwrap());
    let catalogue = ToolSet::new(process, Registry::new()).materialize(|_| true);
    let expected: &[(&str, &[&str], &[&str])] = &[
        (
            "bash",
            &[
                "command",
                "workdir",
                "timeout_ms",
                "description",
                "unsandboxed",
                "reason",
            ],
            &["command"],
        ),
        ("question", &["questions"], &["questions"]),
        ("skill", &["name"], &["name"]),
        ("todowrite", &["todos"], &["todos"]),
        ("webfetch", &["url", "format", "timeout_ms"], &["url"]),
        ("websearch", &["query", "num_results"], &["query"]),
    ];
    let names: Vec<&str> = catalogue
        .entries()
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names, expected.iter().map(|e| e.0).collect::<Vec<_>>());
    for (name, fields, required) in expected {
        let spec = &catalogue.get(name).unwrap().spec;
        let props: BTreeSet<&str> = spec.input_schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(props, fields.iter().copied().collect(), "{name}");
        let req: BTreeSet<&str> = spec.input_schema["required"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        assert_eq!(req, required.iter().copied().collect(), "{name}");
        assert_eq!(spec.input_schema["additionalProperties"], false, "{name}");
        assert!(!spec.description.is_empty());
        assert_eq!(spec.output_schema["type"], "object", "{name}");
    }
    let bash = &catalogue.get("bash").unwrap().spec;
    assert!(!bash.traits.read_only && bash.traits.destructive);
    assert!(catalogue.get("skill").unwrap().spec.traits.read_only);
    // todos items use exactly content/status/priority.
    let todo = &catalogue.get("todowrite").unwrap().spec.input_schema;
    let text = todo.to_string();
    for s in [
        "pending",
        "in_progress",
        "completed",
        "cancelled",
        "high",
        "medium",
        "low",
    ] {
        assert!(
            text.contains(&format!("\"{s}\"")),
            "{s} missing from {text}"
        );
    }
}
