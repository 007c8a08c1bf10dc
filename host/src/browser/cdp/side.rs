//! A short DevTools connection of our own to the browser, beside chromiumoxide's, for the few
//! browser-level commands and sessions chromiumoxide does not model (tab targets, the
//! `Extensions` domain). Opened per call, bounded in time, closed after.

use async_tungstenite::tokio::connect_async;
use async_tungstenite::tungstenite::Message;
use futures::StreamExt;
use serde_json::{Value, json};
use std::future::Future;
use std::time::Duration;

pub struct SideConnection {
    socket: async_tungstenite::WebSocketStream<async_tungstenite::tokio::ConnectStream>,
    next_id: u64,
}

/// Runs `work` on a fresh connection to `ws_endpoint`, all of it within `limit`; `what` names
/// the work in the timeout message.
pub async fn with_connection<T, F, Fut>(
    ws_endpoint: &str,
    limit: Duration,
    what: &str,
    work: F,
) -> Result<T, String>
where
    F: FnOnce(SideConnection) -> Fut,
    Fut: Future<Output = (SideConnection, Result<T, String>)>,
{
    let run = async {
        let (socket, _) = connect_async(ws_endpoint).await.map_err(|error| {
            format!("Could not open a DevTools connection to the browser: {error}")
        })?;
        let (mut connection, result) = work(SideConnection { socket, next_id: 0 }).await;
        let _closed = connection.socket.close(None).await;
        result
    };
    match tokio::time::timeout(limit, run).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "Timeout {what}: the browser did not answer within {} s.",
            limit.as_secs()
        )),
    }
}

impl SideConnection {
    /// Sends one command and reads until its answer; returns the result and the events that
    /// came first. A protocol error is the browser's message.
    pub async fn call(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<(Value, Vec<Value>), String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.socket
            .send(Message::text(message.to_string()))
            .await
            .map_err(|error| error.to_string())?;
        tracing::trace!(method, ?session, "side connection: sent");
        let mut events = Vec::new();
        while let Some(frame) = self.socket.next().await {
            let frame = frame.map_err(|error| error.to_string())?;
            let Message::Text(text) = frame else {
                continue;
            };
            let Ok(value) = serde_json::from_str::<Value>(text.as_str()) else {
                continue;
            };
            if value["id"] == id {
                tracing::trace!(method, events = events.len(), "side connection: answered");
                if let Some(error) = value.get("error") {
                    let message = error["message"].as_str().unwrap_or("Protocol error");
                    return Err(message.to_string());
                }
                return Ok((value["result"].clone(), events));
            }
            if value.get("method").is_some() && events.len() < 10_000 {
                events.push(value);
            }
        }
        Err("The browser closed the DevTools connection.".into())
    }

    /// The result of a browser-level command.
    pub async fn browser(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.call(None, method, params)
            .await
            .map(|(result, _)| result)
    }
}
