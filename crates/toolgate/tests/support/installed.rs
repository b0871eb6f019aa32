//! What the project's setup scripts install for the tests (the Python MCP
//! SDK's venv, the npm MCP servers): found, or the test skips — a failure
//! when `CI=true`, where the scripts must have run.

use std::path::{Path, PathBuf};

/// `relative` (to this crate's directory) when it exists; `None` (the test
/// skips) when it does not, a failure under `CI=true` naming `setup`.
pub fn installed(relative: &str, setup: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} is missing (run `bash {setup}`)",
        path.display()
    );
    eprintln!("skipping: {} is missing", path.display());
    None
}

/// The Python of the MCP SDK's venv (`scripts/setup-python-mcp.sh`).
pub fn mcp_python() -> Option<PathBuf> {
    installed(
        "../toolgate-mcp/.venv/bin/python",
        "scripts/setup-python-mcp.sh",
    )
}

/// An npm MCP server's launcher (`scripts/setup-node-mcp.sh`).
pub fn node_server(bin: &str) -> Option<PathBuf> {
    installed(
        &format!("../toolgate-mcp/.node/node_modules/.bin/{bin}"),
        "scripts/setup-node-mcp.sh",
    )
}
