//! The error type of the store.

use std::path::PathBuf;

/// Errors from opening, writing or reading a store file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file exists but is not a toolgate file of the expected kind.
    #[error("{path} is not a toolgate {expected}: {detail}")]
    NotOurs {
        /// The file.
        path: PathBuf,
        /// What it should have been (`event log`, `state database`).
        expected: &'static str,
        /// What was found instead.
        detail: String,
    },
    /// The file was written by a newer toolgate with a schema this one does not know.
    #[error("{path} has schema version {found}; this toolgate understands up to {supported}")]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// The log records a hash-chain format this build cannot verify (written by
    /// a newer toolgate, or a damaged `log_formats` table).
    #[error(
        "the event log uses hash-chain format {format} from event {first_seq}; this toolgate knows formats 1 and 2"
    )]
    UnknownLogFormat {
        /// The format number in the log.
        format: i64,
        /// The first seq recorded for it.
        first_seq: i64,
    },
    /// The log file does not exist (reading never creates it).
    #[error("no event log at {0}")]
    Missing(PathBuf),
    /// A stored row cannot be decoded.
    #[error("event {seq} in the log is corrupt: {detail}")]
    CorruptEvent {
        /// The row's sequence number.
        seq: i64,
        /// What is wrong with it.
        detail: String,
    },
    /// SQLite failed.
    #[error("{context}: {source}")]
    Sqlite {
        /// What was being done.
        context: String,
        /// The SQLite error.
        source: rusqlite::Error,
    },
    /// A filesystem operation failed.
    #[error("{context} {path}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The log's tail file (events not yet moved into the database) holds a
    /// line that is not an event the log wrote. Nothing is appended after it.
    #[error(
        "the event log's tail {path} is damaged at byte {offset}: {detail} (run `toolgate log verify`)"
    )]
    DamagedTail {
        /// The tail file.
        path: PathBuf,
        /// Where the bad line starts.
        offset: u64,
        /// What is wrong with it.
        detail: String,
    },
    /// Another process held the event log's tail longer than the busy timeout.
    #[error("the event log's tail {0} stayed locked by another process past the busy timeout")]
    TailBusy(PathBuf),
    /// The background writer has stopped.
    #[error("the event log writer has stopped")]
    WriterStopped,
    /// The team store's settings are wrong (a bad URL, an inline password).
    #[error("{0}")]
    PgConfig(String),
    /// PostgreSQL failed or cannot be reached.
    #[cfg(feature = "postgres")]
    #[error("{context} {target}: {detail}")]
    Postgres {
        /// What was being done.
        context: String,
        /// The database (its URL without any password).
        target: String,
        /// The client's error in words: the server's message for an error
        /// the server answered, else the client's own.
        detail: String,
        /// The client's error.
        source: postgres::Error,
    },
    /// An event's payload cannot be serialised.
    #[error("an event payload cannot be serialised: {0}")]
    Serialize(#[source] serde_json::Error),
}

impl StoreError {
    /// Wraps a SQLite error with what was being done.
    pub(crate) fn sqlite(context: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> StoreError {
        let context = context.into();
        move |source| StoreError::Sqlite { context, source }
    }
}
