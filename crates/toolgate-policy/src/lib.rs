//! # toolgate-policy (being built)
//!
//! Rules, config layers, risk classification, shell analysis, the decision tree,
//! approvals and explain.

#![deny(missing_docs)]

pub mod approvals;
pub mod classify;
pub mod shell;
