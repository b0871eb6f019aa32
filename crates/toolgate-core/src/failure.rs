//! The payload of a port's error: a message that names what failed, and the
//! error underneath it, kept as the [`std::error::Error::source`] so a caller can
//! walk the chain (`toolgate` prints it; a test can find the `io::Error`).
//!
//! Ports are generic (a sink may be SQLite or a file, a channel a terminal or a
//! web page), so the source is type-erased. It is shared (`Arc`) because one
//! failure can be reported to several waiters, as a failed commit is.

use std::error::Error;
use std::fmt;
use std::sync::Arc;

/// What failed, in words, with the error that caused it when there is one.
///
/// It reads as its message: `Display`, `Deref<Target = str>` and comparison
/// with a `&str` all use the message, which already names the cause.
///
/// ```
/// use std::error::Error;
/// use toolgate_core::Failure;
///
/// let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "read-only");
/// let failure = Failure::caused("saving the approval", io);
/// assert_eq!(failure, "saving the approval: read-only");
/// assert!(failure.source().unwrap().downcast_ref::<std::io::Error>().is_some());
/// ```
#[derive(Debug, Clone)]
pub struct Failure {
    message: String,
    source: Option<Arc<dyn Error + Send + Sync + 'static>>,
}

impl Failure {
    /// A failure with no error underneath (the message says everything).
    pub fn new(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            source: None,
        }
    }

    /// `what` failed because of `source`; reads `"{what}: {source}"`.
    pub fn caused<E>(what: impl fmt::Display, source: E) -> Self
    where
        E: Error + Send + Sync + 'static,
    {
        Failure::new(format!("{what}: {source}")).because(source)
    }

    /// An error reported in its own words, kept as the source.
    pub fn of<E>(source: E) -> Self
    where
        E: Error + Send + Sync + 'static,
    {
        Failure::new(source.to_string()).because(source)
    }

    /// Keeps `source` as the cause; the message, which must already say what
    /// the cause was, is unchanged.
    #[must_use]
    pub fn because<E>(mut self, source: E) -> Self
    where
        E: Error + Send + Sync + 'static,
    {
        self.source = Some(Arc::new(source));
        self
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl Error for Failure {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn Error + 'static))
    }
}

impl std::ops::Deref for Failure {
    type Target = str;

    fn deref(&self) -> &str {
        &self.message
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::new(message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Failure::new(message)
    }
}

impl PartialEq<str> for Failure {
    fn eq(&self, other: &str) -> bool {
        self.message == other
    }
}

impl PartialEq<&str> for Failure {
    fn eq(&self, other: &&str) -> bool {
        self.message == *other
    }
}

impl PartialEq<String> for Failure {
    fn eq(&self, other: &String) -> bool {
        &self.message == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_is_kept_and_named() {
        let io = std::io::Error::other("disk full");
        let f = Failure::caused("committing 2 event(s) failed", io);
        assert_eq!(f.to_string(), "committing 2 event(s) failed: disk full");
        let source = f.source().map(ToString::to_string);
        assert_eq!(source.as_deref(), Some("disk full"));
        assert!(Failure::new("no terminal").source().is_none());
    }

    #[test]
    fn a_shared_failure_keeps_its_cause_in_every_copy() {
        let f = Failure::new("x: y").because(std::io::Error::other("y"));
        let copy = f.clone();
        assert!(copy.source().is_some());
    }
}
