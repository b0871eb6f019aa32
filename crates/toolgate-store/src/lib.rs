//! # toolgate-store
//!
//! Durable state for toolgate, in the data directory:
//!
//! - [`EventLog`]: the audit log, a SQLite file in WAL mode and its tail (a
//!   file of the events appended since the database's last one), where every
//!   event stores `hash = sha256(RFC 8785 canonical JSON of the event and the
//!   previous hash)`, so
//!   [`verify`] finds any edited, deleted, reordered or inserted event. It
//!   implements [`toolgate_core::EventSink`]: `submit` (or `submit_batch`)
//!   queues the events, and everything waiting is appended to the tail in one
//!   write, by the submitter itself when the tail is free (with
//!   [`Durability::Normal`]; cheaper than waking a thread), else by the log's
//!   writer thread; a fold thread moves the tail into the database a few
//!   hundred events at a time. The returned ack resolves only after the write. See
//!   [`Durability`] for what "durable" means. It, [`EventReader`] and
//!   [`LogQuery`] (a file that may not exist yet) implement
//!   [`toolgate_core::EventQuery`], each over one connection kept open.
//! - [`SpillStore`]: full tool outputs under `tool-output/`, implementing
//!   [`toolgate_core::OutputStore`], with a retention [`sweep`](SpillStore::sweep).
//! - [`SqliteApprovals`]: saved `always` approvals, implementing
//!   [`toolgate_policy::approvals::ApprovalStore`].
//! - [`AskQueue`]: asks a short process (an agent's hook) hands over to a
//!   long-lived channel (the approval page, the terminal watcher), and their
//!   answers.
//!
//! ## What "durable" means
//!
//! An [`EventLog`] acknowledges an event only after it is written to the log's
//! tail. With [`Durability::Normal`] (the default) an acknowledged event
//! survives the process being killed at any point; a power loss or OS crash
//! may lose the last writes but never corrupts the log. [`Durability::Full`]
//! also syncs every write to disk before acknowledging it, so acknowledged
//! events survive power loss too, at the cost of one sync per group commit.
//!
//! ## The chain
//!
//! Each row stores `hash = hex(sha256(JCS({call_id, format, kind, payload,
//! prev_hash, seq, session_id, ts_ms})))`, where JCS is the RFC 8785 canonical
//! JSON (see [`canonical`]); the first event's `prev_hash` is 64 zeros, and a
//! one-row head table records the last `(seq, hash)` so that events removed
//! from the end are detected too. Logs written before format 2 hash a slightly
//! different canonical form (format 1); a table records from which seq each
//! format applies, so those logs, and logs that continue them, still verify.
//! `docs/audit-log.md` in the repository describes the format for verifiers in
//! other languages. The hash is not keyed: it detects edits, gaps, reordering
//! and insertions by anyone who
//! does not also rewrite every later hash and the head.
//!
//! ```
//! use toolgate_core::{Event, EventKind, EventPayload, EventSink};
//! use toolgate_store::{Durability, EventFilter, EventLog, verify};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("events.db");
//! let log = EventLog::open(&path, Durability::Normal)?;
//! let event = Event::now(EventKind::SessionStarted, "s1", "", EventPayload::default());
//! let seq = log.submit(event).await?; // committed when this resolves
//! assert_eq!(seq, 1);
//! let events = log.query(&EventFilter { session: Some("s1".into()), ..Default::default() })?;
//! assert_eq!(events[0].event.kind, EventKind::SessionStarted);
//! log.close()?;
//! assert_eq!(verify(&path)?.to_string(), "ok: 1 events");
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

mod approvals;
mod ask_queue;
pub mod canonical;
mod error;
mod log;
#[cfg(feature = "postgres")]
mod pg;
mod spill;
mod sqlite;

pub use approvals::SqliteApprovals;
pub use ask_queue::{AskQueue, QueuedAnswer, QueuedAsk};
pub use error::StoreError;
pub use log::{
    Durability, EventFilter, EventLog, EventReader, LogQuery, LogStats, Problem, StoredEvent,
    VerifyReport, append_before_exit, append_once, verify,
};
#[cfg(feature = "postgres")]
pub use pg::{APPROVALS_TTL, AppendMode, PgApprovals, PgConfig, PgEventLog};
pub use spill::{DEFAULT_RETENTION, SWEEP_INTERVAL, SpillStore, SweepHandle};
pub use sqlite::tune_for_short_process;
