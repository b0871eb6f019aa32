//! The team store: the event log and saved approvals in one PostgreSQL
//! database that many toolgate processes on many machines share (feature
//! `postgres`).
//!
//! - [`PgEventLog`] keeps the same hash chain as the SQLite log (the same
//!   rows, the same RFC 8785 format 2 hash, a head row and a formats table),
//!   so the same verifier walks it. Appends are group commits on the log's
//!   writer thread: each one moves the head row from the value its rows were
//!   chained after, in the same statement that inserts them (or locks the
//!   head row first, `SELECT … FOR UPDATE`, after another writer got there
//!   first), so writers anywhere serialise on the head and the chain never
//!   forks or skips a seq. An event is acknowledged only after its transaction has
//!   committed; when the database cannot be reached the acknowledgement is an
//!   error naming the database, so the step the event describes does not go
//!   on (fail closed). The next batch connects again.
//! - [`PgApprovals`] keeps saved approvals with who approved and where; a
//!   revocation anywhere is seen by every process within
//!   [`APPROVALS_TTL`].
//!
//! Spilled outputs stay in the local data directory. Every database call
//! runs on a thread of the store's own (the client is synchronous), never on
//! an async runtime's worker.

mod approvals;
mod conn;
mod log;
mod schema;

pub use approvals::{APPROVALS_TTL, PgApprovals};
pub use conn::PgConfig;
pub use log::{AppendMode, PgEventLog};
