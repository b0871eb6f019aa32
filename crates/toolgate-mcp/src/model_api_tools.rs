//! The catalogue as the tool lists of two model APIs, for an agent that calls a
//! model directly instead of through an MCP client: OpenAI's function tools and
//! the Anthropic Messages API's tools. (The MCP form is [`crate::convert`]'s.)
//!
//! Why here: the crate layout gives `toolgate-core` the tool contract and the
//! registry, not the ways clients spell them on the wire, and keeps logic a
//! library should own out of the `toolgate` binary. This crate is the one that
//! presents the catalogue to clients; these lists are that same job for
//! clients speaking a model API, and like it they need only `toolgate-core`.
//!
//! ```
//! use toolgate_core::{Registry, ToolSet};
//! use toolgate_mcp::model_api_tools::{anthropic_tools, openai_tools};
//! let catalogue = ToolSet::new(Registry::new(), Registry::new()).materialize(|_| true);
//! assert_eq!(openai_tools(&catalogue), serde_json::json!([]));
//! assert_eq!(anthropic_tools(&catalogue), serde_json::json!([]));
//! ```

use serde_json::{Value, json};
use toolgate_core::{Catalogue, CatalogueEntry};

/// OpenAI function-tool entries: `{"type": "function", "function": {name,
/// description, parameters}}`, the input schema as the parameters.
pub fn openai_tools(catalogue: &Catalogue) -> Value {
    each_entry(catalogue, |e| {
        json!({
            "type": "function",
            "function": {
                "name": e.name,
                "description": e.spec.description,
                "parameters": e.spec.input_schema,
            }
        })
    })
}

/// Anthropic Messages API tool entries: `{name, description, input_schema}`.
pub fn anthropic_tools(catalogue: &Catalogue) -> Value {
    each_entry(catalogue, |e| {
        json!({
            "name": e.name,
            "description": e.spec.description,
            "input_schema": e.spec.input_schema,
        })
    })
}

/// A JSON array of one value per catalogue entry, in catalogue order.
fn each_entry(catalogue: &Catalogue, entry: impl Fn(&CatalogueEntry) -> Value) -> Value {
    Value::Array(catalogue.entries().iter().map(entry).collect())
}
