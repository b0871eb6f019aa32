//! The event-query port of core ([`EventQuery`]) over the SQLite log: on an
//! open [`EventReader`] or [`EventLog`], and on a file that may not exist yet
//! ([`LogQuery`]). Each keeps one connection for all its queries.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use toolgate_core::Failure;
use toolgate_core::event_query::{EventFilter, EventQuery, QueryError, StoredEvent, VerifyReport};

use super::EventLog;
use super::reader::EventReader;
use crate::error::StoreError;

fn failed(e: StoreError) -> QueryError {
    QueryError::Failed(Failure::of(e))
}

impl EventQuery for EventReader {
    fn query(&self, filter: &EventFilter) -> Result<Vec<StoredEvent>, QueryError> {
        EventReader::query(self, filter).map_err(failed)
    }

    fn verify(&self) -> Result<VerifyReport, QueryError> {
        EventReader::verify(self).map_err(failed)
    }
}

/// Reads through the log's own reading connection (no file is reopened).
impl EventQuery for EventLog {
    fn query(&self, filter: &EventFilter) -> Result<Vec<StoredEvent>, QueryError> {
        EventLog::query(self, filter).map_err(failed)
    }

    fn verify(&self) -> Result<VerifyReport, QueryError> {
        EventLog::verify(self).map_err(failed)
    }
}

/// The log at a path, read-only, opened on the first query that finds the file
/// and kept open from then on. Until the file exists every query is
/// [`QueryError::NoLog`]; it is never created from here.
///
/// ```
/// use toolgate_core::event_query::{EventFilter, EventQuery, QueryError};
/// use toolgate_store::{Durability, EventLog, LogQuery};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("events.db");
/// let query = LogQuery::new(&path);
/// assert!(matches!(query.verify(), Err(QueryError::NoLog(_))));
/// EventLog::open(&path, Durability::Normal).unwrap().close().unwrap();
/// assert_eq!(query.verify().unwrap().to_string(), "ok: 0 events");
/// assert!(query.query(&EventFilter::default()).unwrap().is_empty());
/// ```
#[derive(Debug)]
pub struct LogQuery {
    path: PathBuf,
    reader: Mutex<Option<Arc<EventReader>>>,
}

impl LogQuery {
    /// Reads the log at `path` once it exists.
    pub fn new(path: impl AsRef<Path>) -> LogQuery {
        LogQuery {
            path: path.as_ref().to_path_buf(),
            reader: Mutex::new(None),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open reader, opening it now if the file has appeared.
    fn reader(&self) -> Result<Arc<EventReader>, QueryError> {
        // Only the `Option` is guarded, and it is never left half-set.
        let mut slot = self.reader.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(reader) = slot.as_ref() {
            return Ok(Arc::clone(reader));
        }
        let reader = match EventReader::open(&self.path) {
            Ok(r) => Arc::new(r),
            Err(StoreError::Missing(path)) => {
                return Err(QueryError::NoLog(path.display().to_string()));
            }
            Err(e) => return Err(failed(e)),
        };
        *slot = Some(Arc::clone(&reader));
        Ok(reader)
    }
}

impl EventQuery for LogQuery {
    fn query(&self, filter: &EventFilter) -> Result<Vec<StoredEvent>, QueryError> {
        EventQuery::query(&*self.reader()?, filter)
    }

    fn verify(&self) -> Result<VerifyReport, QueryError> {
        EventQuery::verify(&*self.reader()?)
    }
}
