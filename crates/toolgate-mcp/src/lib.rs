//! # toolgate-mcp
//!
//! The MCP server of toolgate: every tool of a [`toolgate_core::Engine`] behind
//! the gate, for any MCP client.
//!
//! - [`ToolgateServer`] lists the engine's catalogue (schemas, and annotations
//!   from each tool's traits) and settles `tools/call` through the core
//!   pipeline. Each connection ([`ToolgateConnection`]) is a session in the
//!   audit log. Tool errors — invalid input, deny, reject, failures — are
//!   results with `isError: true`; an unknown tool is JSON-RPC `-32602`.
//! - Transports: [`serve_stdio`] and streamable HTTP ([`serve_http`]) with a
//!   bearer token, `--no-auth` on loopback only, and DNS-rebinding protection.
//! - [`convert::mcp_tools`] is the one MCP form of a catalogue (the server's
//!   `tools/list`); [`model_api_tools`] gives the OpenAI and Anthropic forms.
//! - [`ElicitationChannel`] is the policy's approval channel through MCP
//!   elicitation (server-to-client requests up to 2025-11-25, input-required
//!   results on 2026-07-28).
//! - [`ToolListSignal`] tells every connected client its tool list changed
//!   (`notifications/tools/list_changed`; the server advertises
//!   `tools.listChanged`), as the gateway does after an upstream's re-check.
//! - [`ElicitationChannel::ask_questions`] shows the `question` tool's
//!   questions to the client as one form (see [`question`]).
//!
//! Protocol versions 2024-11-05 to 2025-11-25 (with `initialize`) and
//! 2026-07-28 (per-request metadata) are served, through `rmcp` 3.11.
//!
//! ```
//! use std::sync::Arc;
//! use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
//! use toolgate_core::{Engine, Location, Registry, ToolSet};
//! use toolgate_mcp::{ElicitationChannel, StdioOptions, ToolgateServer, serve_stdio_on};
//! use toolgate_policy::{gate::PolicyGate, policy::{Policy, PolicySources}};
//! use toolgate_store::{Durability, EventLog, SpillStore, SqliteApprovals};
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let policy = Policy::load(&PolicySources::bare(dir.path(), dir.path()))?;
//! let elicitation = ElicitationChannel::new();
//! let gate = PolicyGate::new(
//!     policy,
//!     Arc::new(SqliteApprovals::open(dir.path().join("state.db"))?),
//!     Arc::new(elicitation.clone()),
//! );
//! let tools = Registry::new();
//! let _guards = toolgate_tools::register_builtins(&tools, &Default::default())?;
//! let engine = Engine::new(
//!     ToolSet::new(Registry::new(), tools),
//!     Arc::new(gate),
//!     Arc::new(EventLog::open(dir.path().join("audit.db"), Durability::Normal)?),
//!     Arc::new(SpillStore::new(dir.path())),
//! );
//! let location = Arc::new(Location::new(dir.path())?);
//! let server = ToolgateServer::with_elicitation(engine, location, elicitation);
//!
//! // A client on the other end of a pipe (a real one would spawn `toolgate mcp`).
//! let (client, server_io) = tokio::io::duplex(1 << 16);
//! let (server_in, server_out) = tokio::io::split(server_io);
//! let serving = tokio::spawn(async move {
//!     serve_stdio_on(&server, server_in, server_out, StdioOptions::default()).await
//! });
//! let (client_in, mut client_out) = tokio::io::split(client);
//! let mut replies = BufReader::new(client_in).lines();
//! client_out.write_all(concat!(
//!     r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
//!     r#""capabilities":{},"clientInfo":{"name":"doc","version":"1"}}}"#, "\n",
//!     r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, "\n",
//!     r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, "\n",
//! ).as_bytes()).await?;
//! let init: serde_json::Value = serde_json::from_str(&replies.next_line().await?.unwrap())?;
//! assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
//! let list: serde_json::Value = serde_json::from_str(&replies.next_line().await?.unwrap())?;
//! let read = list["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "read").unwrap();
//! assert_eq!(read["annotations"]["readOnlyHint"], true);
//! client_out.shutdown().await?; // the client hangs up: the session ends
//! serving.await??;
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

pub mod approval;
mod call_request;
pub mod convert;
pub mod gateway;
pub mod list_changed;
#[cfg(test)]
mod member_combinations;
pub mod model_api_tools;
pub mod server;

pub use approval::ElicitationChannel;
pub use list_changed::ToolListSignal;
pub use question::QuestionFormError;
pub use server::{ToolgateConnection, ToolgateServer};
pub mod error;
pub mod frame;
pub mod mrtr;
pub mod question;
pub mod stdio;

pub use error::ServeError;
pub use stdio::{StdioOptions, serve_stdio, serve_stdio_on};
pub mod auth;
pub mod disconnect;
pub mod http;

pub use auth::{TOKEN_FILE, generate_token, write_token_file};
pub use http::{BoundHttp, HttpAuth, HttpOptions, MCP_PATH, bind_http, serve_http};
pub use toolgate_http_guard::AllowedPeers;
