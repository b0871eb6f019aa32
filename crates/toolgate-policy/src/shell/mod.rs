//! Shell analysis (being built).
