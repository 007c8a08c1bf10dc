//! A deadline on reading a request's body: a client that sends its headers and then trickles
//! (or withholds) the body is cut off instead of holding its connection and a task forever.

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

pub struct Deadline<B> {
    inner: B,
    sleep: Pin<Box<Sleep>>,
    limit: Duration,
}

impl<B> Deadline<B> {
    pub fn new(inner: B, limit: Duration) -> Deadline<B> {
        Deadline {
            inner,
            sleep: Box::pin(tokio::time::sleep(limit)),
            limit,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("the request body was not received within {0:?}")]
    TimedOut(Duration),
    #[error("{0}")]
    Read(String),
}

impl<B> Body for Deadline<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(context) {
            return Poll::Ready(
                frame.map(|frame| frame.map_err(|error| BodyError::Read(error.to_string()))),
            );
        }
        match this.sleep.as_mut().poll(context) {
            Poll::Ready(()) => Poll::Ready(Some(Err(BodyError::TimedOut(this.limit)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
