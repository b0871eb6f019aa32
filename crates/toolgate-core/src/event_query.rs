//! The event-query port: reading the audit log back. Implemented by
//! `toolgate-store` (the SQLite log); the audit viewer and `toolgate log` read
//! through it, so they never depend on how events are stored.
//!
//! ```
//! use toolgate_core::event_query::{EventFilter, EventQuery, QueryError, StoredEvent, VerifyReport};
//!
//! /// A log that has not been written yet.
//! struct Nothing;
//! impl EventQuery for Nothing {
//!     fn query(&self, _: &EventFilter) -> Result<Vec<StoredEvent>, QueryError> {
//!         Err(QueryError::NoLog("memory".into()))
//!     }
//!     fn verify(&self) -> Result<VerifyReport, QueryError> {
//!         Err(QueryError::NoLog("memory".into()))
//!     }
//! }
//! let log: std::sync::Arc<dyn EventQuery> = std::sync::Arc::new(Nothing);
//! assert!(matches!(log.query(&EventFilter::default()), Err(QueryError::NoLog(_))));
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::event::{Event, EventKind};
use crate::failure::Failure;

/// Which events to read. The default reads the whole log, oldest first.
///
/// `--follow` is a loop of queries with `after_seq` set to the last seq seen.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventFilter {
    /// Only events of this session.
    pub session: Option<String>,
    /// Only events of this call.
    pub call_id: Option<String>,
    /// Only events of this kind.
    pub kind: Option<EventKind>,
    /// Only events recorded for this person (the payload's `person`).
    pub person: Option<String>,
    /// Only events recorded on this machine (the payload's `machine`).
    pub machine: Option<String>,
    /// Only events of calls from this agent (the payload's `agent`).
    pub agent: Option<String>,
    /// Only events with a larger seq.
    pub after_seq: Option<u64>,
    /// At most this many events.
    pub limit: Option<usize>,
    /// With `limit`: the newest matching events instead of the oldest (still
    /// returned oldest first), as `toolgate log` shows by default.
    pub tail: bool,
}

/// One event as stored, with its place in the chain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredEvent {
    /// Its sequence number (1-based, gapless in an intact log).
    pub seq: u64,
    /// The event.
    #[serde(flatten)]
    pub event: Event,
    /// The previous event's hash (64 zeros for the first).
    pub prev_hash: String,
    /// The SHA-256 of the event and `prev_hash` in the log's canonical form, hex.
    pub hash: String,
}

/// What is wrong at the first broken event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    /// The event's content (or its stored hash) was changed after it was written.
    Edited,
    /// One or more events are missing: a gap in seq, rows deleted and the rest
    /// renumbered, or events removed from the end.
    Missing,
    /// Events are not in the order they were written.
    OutOfOrder,
    /// An event that was never written by the log was inserted.
    Inserted,
    /// The stored hashes are malformed or do not link, and nothing else explains it.
    BadHash,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Problem::Edited => "edited",
            Problem::Missing => "missing",
            Problem::OutOfOrder => "out of order",
            Problem::Inserted => "inserted",
            Problem::BadHash => "bad hash",
        })
    }
}

/// The outcome of walking the hash chain (`toolgate log verify`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum VerifyReport {
    /// Every event links to the previous one and matches its hash.
    Ok {
        /// How many events the log holds.
        events: u64,
    },
    /// The chain is broken.
    Broken {
        /// The first broken seq.
        seq: u64,
        /// What kind of damage.
        problem: Problem,
        /// Details for a person.
        detail: String,
    },
}

impl VerifyReport {
    /// Whether the chain is intact.
    pub fn is_ok(&self) -> bool {
        matches!(self, VerifyReport::Ok { .. })
    }
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyReport::Ok { events } => write!(f, "ok: {events} events"),
            VerifyReport::Broken {
                seq,
                problem,
                detail,
            } => write!(f, "broken at seq {seq} ({problem}): {detail}"),
        }
    }
}

/// Errors from reading the log.
#[derive(Debug, Clone, thiserror::Error)]
pub enum QueryError {
    /// Nothing has been recorded yet: there is no log at this place (a file
    /// path, for people).
    #[error("no audit log yet at {0}")]
    NoLog(String),
    /// The log could not be read.
    #[error("cannot read the audit log: {0}")]
    Failed(#[source] Failure),
}

/// Reading the audit log: filtered queries and the chain's verdict.
///
/// Both methods block (a store reads a file); async callers run them through
/// `spawn_blocking`. An implementation keeps its handle to the log open
/// between calls rather than reopening it for each.
pub trait EventQuery: Send + Sync {
    /// The events matching `filter`, oldest first.
    fn query(&self, filter: &EventFilter) -> Result<Vec<StoredEvent>, QueryError>;

    /// Walks the whole chain and names the first broken event, if any.
    fn verify(&self) -> Result<VerifyReport, QueryError>;
}
