//! # toolgate-mcp
//!
//! The MCP server of toolgate: every tool of a [`toolgate_core::Engine`] behind
//! the gate, served over stdio ([`serve_stdio`]) or streamable HTTP
//! ([`serve_http`]), with approvals through MCP elicitation
//! ([`ElicitationChannel`]).

#![deny(missing_docs)]

pub mod approval;
pub mod convert;
pub mod server;

pub use approval::ElicitationChannel;
pub use server::{ToolgateConnection, ToolgateServer};
pub mod error;
pub mod frame;
pub mod mrtr;
pub mod stdio;

pub use error::ServeError;
pub use stdio::{StdioOptions, serve_stdio, serve_stdio_on};
pub mod auth;
pub mod disconnect;
pub mod http;
pub mod origin;

pub use auth::{TOKEN_FILE, generate_token, write_token_file};
pub use http::{BoundHttp, HttpAuth, HttpOptions, MCP_PATH, bind_http, serve_http};
pub use origin::AllowedPeers;
