//! SQLite event log, approvals and spilled output (being built).
