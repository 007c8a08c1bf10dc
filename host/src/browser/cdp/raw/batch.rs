//! Commands sent together on a target's session, answered in order: what a page's input events
//! need. The browser handles a target's commands in the order they arrive, so sending them all
//! at once keeps their order and saves a round trip each; on the thin connection each answer
//! also skips chromiumoxide's message routing (a `fill` typing "Ada Lovelace", 24 key events:
//! 15-27 ms over chromiumoxide's WebSocket, 11-27 ms here; Chromium alone, with no server in
//! between: `bench/probes/key-events.py`).

use super::{RawClient, RawLink};
use crate::browser::cdp::CdpError;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The browser's answer to a command on a session it no longer has.
const STALE_SESSION: &str = "Session with given id not found";

impl RawLink {
    /// Sends `commands` in order on our session with `target_id` and waits for all their
    /// results; the first failure is the error. A stale session (its target was swapped or
    /// detached, so the browser ran none of them) is attached afresh once and the commands
    /// sent again.
    pub async fn run_in_order(
        &self,
        target_id: &str,
        commands: &[(&'static str, Value)],
        timeout: Duration,
    ) -> Result<Vec<Value>, CdpError> {
        let client = self.client().await?;
        let session = client.session(target_id, timeout).await?;
        match send_all(&client, &session, commands, timeout).await {
            Err(CdpError::Protocol(message)) if message.contains(STALE_SESSION) => {
                client.forget_session(target_id);
                let session = client.session(target_id, timeout).await?;
                send_all(&client, &session, commands, timeout).await
            }
            answers => answers,
        }
    }
}

/// `try_join_all` polls the calls in order, and each takes the connection's writer in turn
/// (a fair lock), so the commands leave in order.
async fn send_all(
    client: &Arc<RawClient>,
    session: &str,
    commands: &[(&'static str, Value)],
    timeout: Duration,
) -> Result<Vec<Value>, CdpError> {
    let calls = commands.iter().map(|(method, params)| async move {
        client
            .call(Some(session), method, params.clone(), timeout)
            .await?
            .result()
    });
    futures::future::try_join_all(calls).await
}
