//! The acknowledgement of a submitted batch, which also decides when it is
//! committed: group commit for calls in flight at the same time.
//!
//! A submitter that committed at once would commit alone: with several calls
//! in flight on one event loop, each would pay a whole transaction (the file
//! locks, the WAL frames of the head page) for one or two events. So the ack
//! steps aside once before committing: the calls that are ready to run on the
//! same loop go first, queue their own batches, and whoever commits then takes
//! them all in one transaction. Alone on the loop, the step aside costs one
//! re-poll and no syscall.
//!
//! Durability does not change: the ack is ready only once the transaction that
//! holds the batch has committed (or failed). An ack dropped before it
//! committed (a call dropped mid-flight) still has its batch committed, inline
//! or by the writer thread.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::sync::oneshot;
use toolgate_core::SinkError;

use super::writer::Shared;

/// Where a batch is on its way to the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Queued; nobody has been asked to commit it yet.
    Queued,
    /// Queued, and the submitter has stepped aside once.
    SteppedAside,
    /// Committed inline, or the writer thread was woken for it.
    HandedOver,
}

/// Ready with the last event's seq once the batch is committed.
pub(crate) struct Committed {
    shared: Arc<Shared>,
    done: oneshot::Receiver<Result<u64, SinkError>>,
    stage: Stage,
}

impl Committed {
    pub(crate) fn new(
        shared: Arc<Shared>,
        done: oneshot::Receiver<Result<u64, SinkError>>,
    ) -> Self {
        Committed {
            shared,
            done,
            stage: Stage::Queued,
        }
    }

    /// Commits the queue here when nothing has to be waited for, else wakes the
    /// writer thread. False when the log is closed.
    fn hand_over(&mut self) -> bool {
        self.stage = Stage::HandedOver;
        self.shared.commit_inline() || self.shared.wake_writer()
    }
}

impl Future for Committed {
    type Output = Result<u64, SinkError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if this.stage != Stage::HandedOver {
            // Another submitter may already have committed this batch with its own.
            if let Poll::Ready(r) = Pin::new(&mut this.done).poll(cx) {
                this.stage = Stage::HandedOver;
                return Poll::Ready(r.map_err(|_| SinkError::Closed)?);
            }
            if this.stage == Stage::Queued {
                this.stage = Stage::SteppedAside;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            if !this.hand_over() {
                return Poll::Ready(Err(SinkError::Closed));
            }
        }
        Pin::new(&mut this.done)
            .poll(cx)
            .map(|r| r.map_err(|_| SinkError::Closed)?)
    }
}

impl Drop for Committed {
    fn drop(&mut self) {
        if self.stage != Stage::HandedOver {
            // Nobody waits for it any more, but it must still be stored.
            self.hand_over();
        }
    }
}
