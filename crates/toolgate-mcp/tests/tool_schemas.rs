//! The schemas `tools/list` advertises for every built-in tool, as clients'
//! validators read them. The MCP conformance suite's client (the TypeScript
//! SDK, whose validator is Ajv) printed "unknown format \"uint\" ignored" for
//! each unsigned field that `schemars` marks with its own `uint*` formats.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use toolgate_core::{Registry, ToolSet};
use toolgate_mcp::convert::mcp_tools;
use toolgate_tools::BuiltinConfig;

/// Formats a JSON Schema validator knows: JSON Schema 2020-12's own, and the
/// numeric ones of OpenAPI that Ajv's format set also has.
const KNOWN_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
    "int32",
    "int64",
    "float",
    "double",
];

/// Every `format` keyword under `schema` whose value no validator knows, with
/// its path. Data keywords (`default`, `examples`, `const`, `enum`) are values,
/// not schemas, and are not looked into.
fn unknown_formats(schema: &Value, path: &str, found: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(f)) = map.get("format")
                && !KNOWN_FORMATS.contains(&f.as_str())
            {
                found.push(format!("{path}: {f}"));
            }
            for (k, v) in map {
                if !matches!(k.as_str(), "default" | "examples" | "const" | "enum") {
                    unknown_formats(v, &format!("{path}/{k}"), found);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                unknown_formats(v, &format!("{path}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn built_in_tools_advertise_only_formats_validators_know() {
    let data = tempfile::tempdir().unwrap();
    let tools = Registry::new();
    let mut config = BuiltinConfig::default();
    config.set_data_dir(data.path());
    let _registrations = toolgate_tools::register_builtins(&tools, &config).unwrap();
    let catalogue = ToolSet::new(Registry::new(), tools).materialize(|_| true);
    let listed = serde_json::to_value(mcp_tools(&catalogue)).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"bash") && names.contains(&"read"),
        "{names:?}"
    );
    let mut found = Vec::new();
    unknown_formats(&listed, "", &mut found);
    assert!(found.is_empty(), "unknown formats advertised: {found:#?}");
    // The bounds the dropped formats stood for are still there.
    let bash = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "bash")
        .unwrap();
    assert_eq!(
        bash["inputSchema"]["properties"]["timeout_ms"]["minimum"], 0,
        "{bash}"
    );
}
