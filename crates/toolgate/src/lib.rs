//! toolgate as a library: the built-in tools of an AI coding agent, behind
//! one permission gate, with a hash-chained audit log and bounded output.
//!
//! A [`Builder`] takes what an embedding needs — the workspace's root (the
//! *location*), the config layers, the data directory, the channels that ask a
//! person, and how bash is confined — and gives a [`Toolgate`]:
//!
//! - [`Toolgate::catalogue`]: the tools the model may be shown;
//! - [`Toolgate::settle`]: one call through the whole pipeline (decode, judge,
//!   ask, run, bound, record);
//! - [`Toolgate::check`]: allow / ask / deny for a call, without running it.
//!
//! The `toolgate` command (`call`, `check`, `mcp`, `serve`, …) is built on the
//! same [`Builder`]. The repository's README shows a whole embedding; it runs
//! as this crate's doctest.
//!
//! The lower layers are the `toolgate-*` crates: [`toolgate_core`] (the tool
//! contract, the registry and the pipeline), [`toolgate_policy`] (rules and
//! the decision tree), [`toolgate_store`], [`toolgate_tools`] and
//! [`toolgate_sandbox`].

mod builder;
mod carried;
mod checking;
mod checkpoints;
mod data_dir;
mod engine;
mod error;
pub mod handover;
pub mod hook;
mod ids;
mod sandbox;
mod started;
pub mod team;
pub mod telemetry;
pub mod terminal;
mod upstream_writes;

pub use builder::{Builder, SandboxChoice};
pub use data_dir::DataDir;
pub use engine::Toolgate;
pub use error::{BuildError, CheckError, SettleError};
pub use ids::new_id;
pub use sandbox::{SandboxAdapter, connection_event, take_exit_report};
pub use started::Started;
pub use team::{AuditLog, Identity, StoreChoice, TeamConfig, TeamError};

pub use tokio_util::sync::CancellationToken;
pub use toolgate_core::{CallError, CallIdentity, CallRequest, CallResult, Catalogue, Content};
pub use toolgate_policy::check::CheckOutcome;
pub use toolgate_policy::config::Mode;
pub use toolgate_store::Durability;

/// The README's code blocks, compiled and run by `cargo test --doc`.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
