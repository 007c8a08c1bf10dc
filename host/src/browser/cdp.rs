//! Reaching Chromium: launching or connecting ([`connection`], [`launch`], [`shared`]), the
//! DevTools pipe ([`pipe`]), our thin socket for large replies ([`raw`]), short side
//! connections ([`side`], [`ws_headers`]), the browser's own enforcement of URL patterns
//! ([`url_guard`]), and here the one command helper: raw CDP commands as JSON, without the
//! generated types' ceremony, each bounded by a row of [`timeouts`].

pub mod connection;
pub mod launch;
pub mod pipe;
pub mod raw;
pub mod renderer_processes;
pub mod shared;
pub mod side;
pub mod url_guard;
pub mod ws_headers;

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

/// How long the browser gets to answer one command, by what the command asks of it: every
/// command the host sends names one row, so no page holds a call past it.
pub mod timeouts {
    use std::time::Duration;

    /// An ordinary command: a DOM lookup, an input event, an emulation setting, a dialog.
    pub const COMMAND: Duration = Duration::from_secs(10);
    /// Work that grows with the page or the browser: a capture, trace and heap-profiler
    /// control, the `PWA` and `Extensions` domains.
    pub const CAPTURE: Duration = Duration::from_secs(30);
    /// A probe the server makes on its own (the memory watch, console read-backs): nothing
    /// waits on it, so it gives up early.
    pub const PROBE: Duration = Duration::from_secs(2);
    /// Work the page or the user supplies: a page's tool, an extension's worker, a script.
    /// No longer than [`LIBRARY`]: chromiumoxide would cut it there anyway.
    pub const PAGE_WORK: Duration = Duration::from_secs(30);
    /// chromiumoxide ends every command it sends on a page after 30 s, whatever the caller's
    /// timeout (a fixed delay in its command future): a longer wait on one command is this in
    /// effect, and [`super::send`] reports it as the timeout it is.
    pub const LIBRARY: Duration = Duration::from_secs(30);
}

/// Sends one command on the page's session with the ordinary timeout; a failure becomes its
/// message.
pub async fn run(
    page: &chromiumoxide::Page,
    method: &'static str,
    params: Value,
) -> Result<Value, String> {
    run_within(page, method, params, timeouts::COMMAND).await
}

/// [`run`] with another row of [`timeouts`].
pub async fn run_within(
    page: &chromiumoxide::Page,
    method: &'static str,
    params: Value,
    timeout: Duration,
) -> Result<Value, String> {
    let answer = send(page, cdp(method, params), timeout).await;
    answer.map_err(|error| error.to_string())
}

/// Sends a command on a page's session, bounded by `timeout`.
pub async fn send(
    page: &chromiumoxide::Page,
    command: Cdp,
    timeout: Duration,
) -> Result<Value, CdpError> {
    let method = command.method;
    let started = std::time::Instant::now();
    let answer = tokio::time::timeout(timeout, page.execute(command)).await;
    let micros = started.elapsed().as_micros();
    tracing::trace!(method, micros, "page command answered");
    match answer {
        Ok(Ok(response)) => Ok(response.result),
        // chromiumoxide's own cut-off, before ours.
        Ok(Err(chromiumoxide::error::CdpError::Timeout)) => Err(CdpError::Timeout {
            method,
            seconds: timeout.min(timeouts::LIBRARY).as_secs(),
        }),
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
        timeouts::COMMAND,
    )
    .await
    .map(drop)
}

/// The browser's own message, without chromiumoxide's wrapping.
fn protocol_message(error: &chromiumoxide::error::CdpError) -> String {
    match error {
        chromiumoxide::error::CdpError::Chrome(inner) => inner.message.clone(),
        other => other.to_string(),
    }
}
