//! Errors from serving.

/// Why a server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Reading or writing the transport failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The MCP session could not start.
    #[error("MCP session failed to start: {0}")]
    Start(String),
    /// The configuration is not allowed (for example `--no-auth` off loopback).
    #[error("{0}")]
    Config(String),
}

impl ServeError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        ServeError::Io {
            context: context.into(),
            source,
        }
    }
}
