//! What can go wrong while reading a hook payload.

/// An error reading an agent's hook payload. Every one of them is answered
/// in the agent's blocking form: a hook never fails open.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// The agent named on the command line is not one toolgate knows.
    #[error("unknown agent `{0}` (known: {known})", known = crate::Agent::NAMES.join(", "))]
    UnknownAgent(String),
    /// The payload is not JSON.
    #[error("the hook payload is not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    /// The payload is JSON but not an object.
    #[error("the hook payload is not a JSON object")]
    NotObject,
    /// A field the protocol requires is missing or of the wrong type.
    #[error("the hook payload has no {field} (a {what})")]
    Missing {
        /// The field.
        field: &'static str,
        /// What it should be.
        what: &'static str,
    },
    /// The payload is larger than toolgate reads.
    #[error("the hook payload is larger than {0} bytes")]
    TooLarge(usize),
}
