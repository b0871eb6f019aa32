//! The two-layer registry: names, guards, layering, catalogue and stale calls.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate_core::test_util::*;
use toolgate_core::*;

fn engine(tools: ToolSet) -> (Engine, Arc<MemorySink>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let sink = Arc::new(MemorySink::default());
    let engine = Engine::new(
        tools,
        ScriptedGate::new(Effect::Allow, Effect::Allow),
        sink.clone(),
        Arc::new(DirSpill(dir.path().to_path_buf())),
    );
    (engine, sink, dir)
}

fn loc(dir: &tempfile::TempDir) -> Arc<Location> {
    Arc::new(Location::new(dir.path()).unwrap())
}

#[test]
fn names_are_checked_at_registration() {
    let r = Registry::new();
    for bad in ["", "1abc", "_x", "a b", "a.b", "ä", &"a".repeat(65), "a/b"] {
        let err = r.register(bad, Echo::new("x").0).unwrap_err();
        assert!(matches!(err, RegistryError::InvalidName(_)), "{bad:?}");
        assert!(err.to_string().contains("invalid tool name"));
    }
    for good in [
        "a",
        "read",
        "apply_patch",
        "mcp-server_tool9",
        &"a".repeat(64),
    ] {
        r.register(good, Echo::new("x").0).unwrap().leak();
    }
}

#[test]
fn newest_registration_wins_and_dropping_its_guard_reveals_the_previous() {
    let process = Registry::new();
    let tools = ToolSet::new(process.clone(), Registry::new());
    let g1 = process.register("echo", Echo::new("v1").0).unwrap();
    let g2 = process.register("echo", Echo::new("v2").0).unwrap();
    assert_eq!(tools.active("echo").unwrap().id, g2.id());
    drop(g2);
    assert_eq!(tools.active("echo").unwrap().id, g1.id());
    assert_eq!(
        tools.active("echo").unwrap().handler.spec().description,
        "echo (v1)"
    );
    // Dropping an older guard removes only that one.
    let g3 = process.register("echo", Echo::new("v3").0).unwrap();
    drop(g1);
    assert_eq!(tools.active("echo").unwrap().id, g3.id());
    drop(g3);
    assert!(tools.active("echo").is_none());
}

#[test]
fn location_layer_beats_process_layer() {
    let process = Registry::new();
    let location = Registry::new();
    let tools = ToolSet::new(process.clone(), location.clone());
    let _p = process.register("echo", Echo::new("process").0).unwrap();
    let l = location.register("echo", Echo::new("location").0).unwrap();
    // A newer process registration still loses to the location layer.
    let _p2 = process.register("echo", Echo::new("process2").0).unwrap();
    assert_eq!(
        tools.active("echo").unwrap().handler.spec().description,
        "echo (location)"
    );
    drop(l);
    assert_eq!(
        tools.active("echo").unwrap().handler.spec().description,
        "echo (process2)"
    );
}

/// The catalogue's wire formats (MCP, OpenAI, Anthropic) are toolgate-mcp's:
/// see its `catalogue_formats` test.
#[test]
fn catalogue_hides_wholesale_denied_tools() {
    let process = Registry::new();
    let tools = ToolSet::new(process.clone(), Registry::new());
    let _a = process.register("echo", Echo::new("v1").0).unwrap();
    let _b = process.register("forbidden", Echo::new("v1").0).unwrap();
    let (engine, _, _d) = engine(tools);
    let cat = engine.materialize();
    let names: Vec<_> = cat.entries().iter().map(|e| e.name.clone()).collect();
    assert_eq!(names, vec!["echo"]);
}

/// `materialize_one` is the one entry `materialize` would have: the same
/// registration and definition for a shown tool, nothing for a hidden or an
/// unknown one.
#[test]
fn one_tools_catalogue_is_its_entry_of_the_whole() {
    let process = Registry::new();
    let tools = ToolSet::new(process.clone(), Registry::new());
    let _a = process.register("echo", Echo::new("v1").0).unwrap();
    let _b = process.register("forbidden", Echo::new("v1").0).unwrap();
    let (engine, _, _d) = engine(tools);
    let whole = engine.materialize();
    let one = engine.materialize_one("echo");
    assert_eq!(one.entries().len(), 1);
    let (a, b) = (&one.entries()[0], whole.get("echo").unwrap());
    assert_eq!(
        (a.id, &a.name, &a.spec.description),
        (b.id, &b.name, &b.spec.description)
    );
    assert_eq!(a.spec.input_schema, b.spec.input_schema);
    assert!(engine.materialize_one("forbidden").is_empty());
    assert!(engine.materialize_one("nothing").is_empty());
}

#[tokio::test]
async fn a_call_after_re_registration_is_stale_and_never_runs_the_new_tool() {
    let process = Registry::new();
    let tools = ToolSet::new(process.clone(), Registry::new());
    let (engine, _sink, dir) = engine(tools);
    let (v1, runs1) = Echo::new("v1");
    let g1 = process.register("echo", v1).unwrap();
    let cat = engine.materialize();
    let (v2, runs2) = Echo::new("v2");
    let _g2 = process.register("echo", v2).unwrap();
    let err = engine
        .settle(
            &cat,
            call("echo", json!({"text": "x"}), "c1"),
            loc(&dir),
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Stale tool call: echo");
    assert_eq!(*runs1.lock().unwrap() + *runs2.lock().unwrap(), 0);
    // Removed since advertised: stale too.
    drop(g1);
    let cat = engine.materialize();
    drop(_g2);
    let err = engine
        .settle(
            &cat,
            call("echo", json!({"text": "x"}), "c2"),
            loc(&dir),
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Stale tool call: echo");
}

#[tokio::test]
async fn a_name_never_advertised_is_unknown() {
    let process = Registry::new();
    let tools = ToolSet::new(process.clone(), Registry::new());
    let (engine, _, dir) = engine(tools);
    let cat = engine.materialize();
    // Registered after the catalogue was made: still unknown to this catalogue.
    let _g = process.register("echo", Echo::new("v1").0).unwrap();
    for name in ["echo", "nope", ""] {
        let err = engine
            .settle(
                &cat,
                call(name, json!({"text": "x"}), "c1"),
                loc(&dir),
                CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), format!("Unknown tool: {name}"));
    }
}

#[tokio::test]
async fn an_in_flight_call_is_unaffected_by_later_registry_changes() {
    let process = Registry::new();
    let tools = ToolSet::new(process.clone(), Registry::new());
    let (engine, _, dir) = engine(tools);
    let release = Arc::new(tokio::sync::Notify::new());
    let started = Arc::new(tokio::sync::Notify::new());
    let g1 = process
        .register(
            "slow",
            Slow {
                release: release.clone(),
                started: started.clone(),
                label: "first",
            },
        )
        .unwrap();
    let cat = engine.materialize();
    let location = loc(&dir);
    let task = {
        let engine = engine.clone();
        tokio::spawn(async move {
            engine
                .settle(
                    &cat,
                    call("slow", json!({}), "c1"),
                    location,
                    CancellationToken::new(),
                )
                .await
        })
    };
    started.notified().await;
    // Replace and remove the registration while the call runs.
    let _g2 = process
        .register(
            "slow",
            Slow {
                release: Arc::new(tokio::sync::Notify::new()),
                started: Arc::new(tokio::sync::Notify::new()),
                label: "second",
            },
        )
        .unwrap();
    drop(g1);
    release.notify_one();
    let out = task.await.unwrap().unwrap();
    assert_eq!(out.structured, Some(json!({"text": "first"})));
}
