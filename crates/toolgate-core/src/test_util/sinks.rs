//! Event sinks for tests: one that keeps every event, one that keeps none.

use std::sync::Mutex;

use futures::FutureExt;

use super::lock;
use crate::{Event, EventAck, EventKind, EventSink, SinkError};

/// Keeps events in memory, in order, assigning sequence numbers from 1;
/// fails every submission (as a full disk would) while `fail` is set.
#[derive(Default)]
pub struct MemorySink {
    /// Every event accepted so far, oldest first.
    pub events: Mutex<Vec<Event>>,
    /// When set, submissions fail with a storage error and keep nothing.
    pub fail: Mutex<bool>,
}

impl EventSink for MemorySink {
    fn submit(&self, event: Event) -> EventAck {
        let fail = *lock(&self.fail);
        let mut events = lock(&self.events);
        let result = if fail {
            Err(SinkError::Storage("disk full".into()))
        } else {
            events.push(event);
            Ok(events.len() as u64)
        };
        async move { result }.boxed()
    }
}

impl MemorySink {
    /// The kinds of the events kept, in order.
    pub fn kinds(&self) -> Vec<EventKind> {
        lock(&self.events).iter().map(|e| e.kind).collect()
    }

    /// The newest event kept.
    ///
    /// # Panics
    /// When nothing was kept: the test expected an event that never came.
    #[allow(clippy::expect_used)] // a test fixture: no event is the test failing
    pub fn last(&self) -> Event {
        lock(&self.events)
            .last()
            .cloned()
            .expect("the sink has an event")
    }
}

/// Acknowledges every event at once and keeps nothing (sequence number 0),
/// so a benchmark measures the pipeline without an audit log.
pub struct DiscardSink;

impl EventSink for DiscardSink {
    fn submit(&self, _: Event) -> EventAck {
        Box::pin(async { Ok(0) })
    }
}
