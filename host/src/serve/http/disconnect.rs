//! Noticing a client that hung up mid-call. rmcp keeps a stateful session's request running
//! when its HTTP response is dropped (the client could resume the stream), but a tool call
//! holds its tenant's lock: the response body here cancels a token when it is dropped before
//! its end, and the handler stops the call, which releases the lock.

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, combinators::BoxBody};
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio_util::sync::{CancellationToken, DropGuard};

/// Put in the request's extensions: cancelled when the client stops reading the response.
#[derive(Clone)]
pub struct Disconnected(pub CancellationToken);

/// The response side of [`Disconnected`].
pub struct Watch {
    guard: DropGuard,
}

pub fn watch() -> (Watch, Disconnected) {
    let token = CancellationToken::new();
    (
        Watch {
            guard: token.clone().drop_guard(),
        },
        Disconnected(token),
    )
}

impl Watch {
    /// The response body, watched; `keep` lives as long as the body (a session's activity).
    pub fn wrap<K: Send + Sync + 'static>(
        self,
        body: BoxBody<Bytes, Infallible>,
        keep: Option<K>,
    ) -> BoxBody<Bytes, Infallible> {
        WatchedBody {
            inner: body,
            guard: Some(self.guard),
            _keep: keep.map(|keep| Box::new(keep) as Box<dyn Send + Sync>),
        }
        .boxed()
    }
}

struct WatchedBody {
    inner: BoxBody<Bytes, Infallible>,
    /// Dropped (cancelling the token) with the body, unless the body ended first.
    guard: Option<DropGuard>,
    _keep: Option<Box<dyn Send + Sync>>,
}

impl Body for WatchedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(context);
        if let Poll::Ready(None) = polled
            && let Some(guard) = this.guard.take()
        {
            // Sent in full: nothing to cancel.
            let _token = guard.disarm();
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
