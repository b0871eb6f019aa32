//! What the tests of the `toolgate` binary share: a user's world in a
//! temporary directory, and a `toolgate mcp` on pipes. Each test binary uses
//! the part it needs.
#![allow(dead_code)]

pub mod cli_env;
pub mod installed;
pub mod stdio_mcp;
