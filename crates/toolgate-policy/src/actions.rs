//! The actions rules and approvals name: the policy's own vocabulary, each
//! with the kind of resource it is about (which decides how its patterns read).
//!
//! These are permissions, not tools: any tool may ask for `read` or `edit`,
//! and how a request is judged follows its own [`ResourceKind`]. Tools proxied
//! from MCP servers (`server__tool`) and wildcard actions are accepted besides.
//!
//! ```
//! use toolgate_core::ResourceKind;
//! use toolgate_policy::actions::kind_of;
//! assert_eq!(kind_of("edit"), Some(ResourceKind::Path));
//! assert_eq!(kind_of("bash"), Some(ResourceKind::Command));
//! assert_eq!(kind_of("nope"), None);
//! ```

use toolgate_core::ResourceKind;

/// Every action a rule may name, with the kind of its resources.
pub const ACTIONS: &[(&str, ResourceKind)] = &[
    ("read", ResourceKind::Path),
    ("list", ResourceKind::Path),
    ("glob", ResourceKind::Path),
    ("grep", ResourceKind::Path),
    ("edit", ResourceKind::Path),
    ("bash", ResourceKind::Command),
    ("webfetch", ResourceKind::Url),
    ("websearch", ResourceKind::Other),
    ("todowrite", ResourceKind::Other),
    ("question", ResourceKind::Other),
    ("skill", ResourceKind::Other),
    ("external_directory", ResourceKind::Path),
    // A call to an upstream MCP server's tool; the resource is `NAME__tool`.
    ("mcp", ResourceKind::Other),
];

/// The action that asks to write a path (file edits, shell redirects).
pub const EDIT: &str = "edit";

/// The kind of resource `action` is about, when it is one of [`ACTIONS`].
pub fn kind_of(action: &str) -> Option<ResourceKind> {
    ACTIONS
        .iter()
        .find(|(name, _)| *name == action)
        .map(|&(_, kind)| kind)
}

/// The names of [`ACTIONS`], for messages.
pub fn names() -> impl Iterator<Item = &'static str> {
    ACTIONS.iter().map(|&(name, _)| name)
}
