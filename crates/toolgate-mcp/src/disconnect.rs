//! Noticing that an HTTP client went away while its call runs.
//!
//! In session mode the MCP SDK keeps a call running when its response stream
//! drops (the client could resume it). toolgate instead stops the tool: the
//! HTTP guard puts a [`ClientGone`] token into each request's extensions and
//! cancels it when the response body is dropped before it was sent in full.
//! The connection handler links that token to the call's cancellation.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use http_body::{Body as HttpBody, Frame, SizeHint};
use tokio_util::sync::CancellationToken;

/// Cancelled when the client of one HTTP request disconnected before its
/// response was complete.
#[derive(Clone, Debug, Default)]
pub struct ClientGone(pub CancellationToken);

/// A response body that fires [`ClientGone`] if dropped before its end.
pub(crate) struct WatchedBody {
    inner: Body,
    gone: CancellationToken,
    finished: bool,
}

impl WatchedBody {
    pub(crate) fn new(inner: Body, gone: CancellationToken) -> Self {
        WatchedBody {
            inner,
            gone,
            finished: false,
        }
    }
}

impl HttpBody for WatchedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.finished = true;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for WatchedBody {
    fn drop(&mut self) {
        if !self.finished && !self.inner.is_end_stream() {
            self.gone.cancel();
        }
    }
}
