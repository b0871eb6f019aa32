//! The base requests of a built-in tool call, computed by the tool itself
//! through the registry exactly as a real call prepares it: the tests judge
//! what the tools really ask for, not a copy of it.

#![allow(dead_code)]

use std::sync::OnceLock;

use serde_json::Value;
use toolgate_core::{Location, PermissionRequest, Registry, ToolSet};
use toolgate_tools::{BuiltinConfig, register_builtins};

/// Why the intent of a call could not be computed: an unknown tool, or the
/// tool refused the input (the message a real call would give).
#[derive(Debug)]
pub struct IntentError(pub String);

impl std::fmt::Display for IntentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for IntentError {}

/// The built-in tools with the default configuration, registered once.
fn tools() -> &'static ToolSet {
    static TOOLS: OnceLock<ToolSet> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let registry = Registry::new();
        for guard in register_builtins(&registry, &BuiltinConfig::default()).unwrap() {
            guard.leak();
        }
        ToolSet::new(Registry::new(), registry)
    })
}

/// The requests the built-in tool `tool` makes for `input` in `location`.
pub fn builtin_intent(
    tool: &str,
    input: &Value,
    location: &Location,
) -> Result<Vec<PermissionRequest>, IntentError> {
    let active = tools()
        .active(tool)
        .ok_or_else(|| IntentError(format!("unknown tool {tool:?}")))?;
    active
        .handler
        .prepare(input, location)
        .map(|prepared| prepared.requests)
        .map_err(|e| IntentError(format!("{tool}: {e}")))
}
