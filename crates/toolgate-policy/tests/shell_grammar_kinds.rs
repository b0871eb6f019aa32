//! The walker has an arm for every node kind and field of tree-sitter-bash
//! (read from the grammar's own `node-types.json`), and the vendored copy of
//! that file is the crate's.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use toolgate_policy::shell::grammar;

/// The grammar's `node-types.json`, vendored from the tree-sitter-bash crate
/// this crate builds against (see `vendored_node_types_are_the_crates`).
const NODE_TYPES: &str = include_str!("grammar/node-types.json");

/// Every kind (named or not) and every field of the grammar, from its own
/// description.
/// A node kind and whether it is named.
type Kind = (String, bool);

/// A kind and one of its fields.
type Field = (String, String);

fn grammar_kinds_and_fields() -> (Vec<Kind>, Vec<Field>) {
    let types: Value = serde_json::from_str(NODE_TYPES).unwrap();
    let mut kinds = Vec::new();
    let mut fields = Vec::new();
    let visit = |t: &Value, kinds: &mut Vec<(String, bool)>| {
        let kind = t["type"].as_str().unwrap().to_string();
        let named = t["named"].as_bool().unwrap();
        if !kinds.contains(&(kind.clone(), named)) {
            kinds.push((kind, named));
        }
    };
    for t in types.as_array().unwrap() {
        visit(t, &mut kinds);
        let kind = t["type"].as_str().unwrap();
        if let Some(fs) = t["fields"].as_object() {
            for (field, spec) in fs {
                fields.push((kind.to_string(), field.clone()));
                for child in spec["types"].as_array().unwrap() {
                    visit(child, &mut kinds);
                }
            }
        }
        if let Some(children) = t["children"].as_object() {
            for child in children["types"].as_array().unwrap() {
                visit(child, &mut kinds);
            }
        }
        if let Some(subs) = t["subtypes"].as_array() {
            for s in subs {
                visit(s, &mut kinds);
            }
        }
    }
    (kinds, fields)
}

#[test]
fn every_grammar_node_kind_and_field_has_an_arm() {
    let (kinds, fields) = grammar_kinds_and_fields();
    assert!(kinds.len() > 150, "only {} kinds read", kinds.len());
    let missing: Vec<String> = kinds
        .iter()
        .filter(|(k, named)| {
            // Supertypes (`_statement`…) never appear in a tree.
            !k.starts_with('_') || !named
        })
        .filter(|(k, named)| !grammar::is_handled_kind(k, *named))
        .map(|(k, named)| format!("{k} (named: {named})"))
        .collect();
    assert!(missing.is_empty(), "kinds without an arm: {missing:?}");
    let missing: Vec<String> = fields
        .iter()
        .filter(|(k, f)| !grammar::is_handled_field(k, f))
        .map(|(k, f)| format!("{k}.{f}"))
        .collect();
    assert!(missing.is_empty(), "fields without an arm: {missing:?}");
    // And nothing is claimed that the grammar does not have: the table is the
    // grammar's, not a guess.
    for (kind, named) in grammar::handled_kinds() {
        assert!(
            kinds.iter().any(|(k, n)| k == kind && *n == named),
            "the walker has an arm for {kind:?} (named: {named}), which the grammar lacks"
        );
    }
}

#[test]
fn an_unknown_kind_or_field_is_opaque_not_invisible() {
    assert!(!grammar::is_handled_kind("brand_new_statement", true));
    assert!(!grammar::is_handled_field("command", "brand_new_field"));
    assert!(!grammar::is_handled_field("brand_new_statement", "body"));
}

/// The vendored copy is the crate's own file whenever the crate's source is on
/// this machine (cargo's registry), so a grammar upgrade cannot slip past.
#[test]
fn vendored_node_types_are_the_crates() {
    let lock =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock")).unwrap();
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"tree-sitter-bash\""))
        .and_then(|p| p.lines().find(|l| l.starts_with("version = ")))
        .map(|l| {
            l.trim_start_matches("version = ")
                .trim_matches('"')
                .to_string()
        })
        .unwrap();
    let cargo_home = std::env::var("CARGO_HOME")
        .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default()));
    let Ok(registries) = std::fs::read_dir(format!("{cargo_home}/registry/src")) else {
        eprintln!("no cargo registry sources here; the vendored copy is not compared");
        return;
    };
    let mut compared = 0;
    for registry in registries.flatten() {
        let path = registry
            .path()
            .join(format!("tree-sitter-bash-{version}/src/node-types.json"));
        if let Ok(text) = std::fs::read_to_string(&path) {
            assert_eq!(
                text,
                NODE_TYPES,
                "{} differs from tests/grammar/node-types.json: copy it and give the walker an arm for every new kind",
                path.display()
            );
            compared += 1;
        }
    }
    eprintln!("compared with {compared} copies of tree-sitter-bash {version}");
}
