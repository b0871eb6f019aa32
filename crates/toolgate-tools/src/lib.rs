//! The built-in tools (being built).
