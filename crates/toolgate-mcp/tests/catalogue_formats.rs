//! A catalogue in the three wire formats: MCP (`tools/list`), OpenAI and
//! Anthropic. Moved from core with its assertions when the converters left it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use toolgate_core::test_util::Echo;
use toolgate_core::{Registry, ToolSet};
use toolgate_mcp::convert::mcp_tools;
use toolgate_mcp::model_api_tools::{anthropic_tools, openai_tools};

#[test]
fn catalogue_exports_three_formats() {
    let process = Registry::new();
    let _echo = process.register("echo", Echo::plain()).unwrap();
    let cat = ToolSet::new(process, Registry::new()).materialize(|_| true);
    let mcp = serde_json::to_value(mcp_tools(&cat)).unwrap();
    assert_eq!(mcp[0]["name"], "echo");
    assert_eq!(mcp[0]["inputSchema"]["type"], "object");
    assert!(mcp[0]["inputSchema"]["properties"]["text"].is_object());
    assert_eq!(mcp[0]["inputSchema"]["required"], json!(["text"]));
    assert!(mcp[0]["outputSchema"]["properties"]["text"].is_object());
    assert_eq!(openai_tools(&cat)[0]["function"]["name"], "echo");
    assert_eq!(openai_tools(&cat)[0]["type"], "function");
    assert_eq!(anthropic_tools(&cat)[0]["input_schema"]["type"], "object");
}
