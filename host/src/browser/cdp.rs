//! Raw CDP commands as JSON: the few protocol calls the tools need, without the generated
//! types' ceremony. `raw` is a thin client of our own for commands with large replies.

pub mod raw;

use chromiumoxide::types::{Command, Method, MethodId};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::time::Duration;

/// One CDP command: a method name and its JSON parameters.
#[derive(Debug, Clone)]
pub struct Cdp {
    method: &'static str,
    params: Value,
}

/// Builds a command, e.g. `cdp("DOM.getContentQuads", json!({"backendNodeId": 7}))`.
pub fn cdp(method: &'static str, params: Value) -> Cdp {
    Cdp { method, params }
}

impl Serialize for Cdp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(serializer)
    }
}

impl Method for Cdp {
    fn identifier(&self) -> MethodId {
        Cow::Borrowed(self.method)
    }
}

impl Command for Cdp {
    type Response = Value;
}

#[derive(Debug, thiserror::Error)]
pub enum CdpError {
    #[error("{0}")]
    Protocol(String),
    #[error("The browser did not answer {method} within {seconds} s.")]
    Timeout { method: &'static str, seconds: u64 },
}

/// Sends a command on a page's session, bounded by `timeout`.
pub async fn send(
    page: &chromiumoxide::Page,
    command: Cdp,
    timeout: Duration,
) -> Result<Value, CdpError> {
    let method = command.method;
    match tokio::time::timeout(timeout, page.execute(command)).await {
        Ok(Ok(response)) => Ok(response.result),
        Ok(Err(error)) => Err(CdpError::Protocol(protocol_message(&error))),
        Err(_) => Err(CdpError::Timeout {
            method,
            seconds: timeout.as_secs(),
        }),
    }
}

/// Waits until every event the browser sent before now sits in its listener's queue.
///
/// chromiumoxide answers a command the moment it reads the reply, but hands events read in the
/// same batch to their listeners only on its next loop; a caller that drains a listener right
/// after an answer can miss events sent before it. The reply to a second command arrives in a
/// later batch, after that loop ran. `Target.getTargetInfo` is answered by the browser process,
/// so a busy or paused renderer does not delay it.
pub async fn settle_events(page: &chromiumoxide::Page) -> Result<(), CdpError> {
    send(
        page,
        cdp("Target.getTargetInfo", serde_json::json!({})),
        SETTLE_TIMEOUT,
    )
    .await
    .map(drop)
}

/// Bound on [`settle_events`]' round trip.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(10);

/// The browser's own message, without chromiumoxide's wrapping.
fn protocol_message(error: &chromiumoxide::error::CdpError) -> String {
    match error {
        chromiumoxide::error::CdpError::Chrome(inner) => inner.message.clone(),
        other => other.to_string(),
    }
}
