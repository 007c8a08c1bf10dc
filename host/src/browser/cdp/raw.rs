//! A thin CDP client of our own: a second WebSocket to the browser, for the commands whose
//! replies are large. chromiumoxide parses every message it reads into its typed `Message`
//! (an untagged enum, so serde first buffers the whole document) and then into a
//! `serde_json::Value`; for the 3.7 MB `Accessibility.getFullAXTree` of a 4,000-element page
//! that was most of the snapshot's CPU and all of its memory peak. Here a reply is routed by
//! its `id` without being parsed and handed over as text, which the snapshot engine then
//! parses once, in place. The WebSocket itself is ours too (`socket`), to read a reply of
//! megabytes into one buffer of its size.
//!
//! The connection attaches its own flat sessions to the targets it is asked about (a page,
//! or a cross-process iframe) and enables no domain, so it receives no events to speak of
//! but those of its attachments (see `attachments`).

mod attachments;
mod socket;

use super::CdpError;
use attachments::Attachments;
pub use attachments::Child;
use serde_json::{Value, json};
use socket::{Payload, Writer};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;
use tokio::sync::{Mutex, oneshot};

type Waiters = Arc<StdMutex<HashMap<u64, oneshot::Sender<Payload>>>>;

/// Where the browser's DevTools WebSocket is, and our connection to it once made.
pub struct RawLink {
    url: String,
    client: Mutex<Option<Arc<RawClient>>>,
}

impl RawLink {
    pub fn new(url: String) -> Arc<RawLink> {
        Arc::new(RawLink {
            url,
            client: Mutex::new(None),
        })
    }

    /// The live connection, connecting (again) when there is none.
    pub async fn client(&self) -> Result<Arc<RawClient>, CdpError> {
        let mut client = self.client.lock().await;
        if let Some(live) = client.as_ref().filter(|c| c.alive.load(Ordering::SeqCst)) {
            return Ok(live.clone());
        }
        let connected = Arc::new(RawClient::connect(&self.url).await?);
        *client = Some(connected.clone());
        Ok(connected)
    }
}

/// One WebSocket to the browser: commands go out through `writer`, and a reader task hands
/// each reply's text to the caller waiting for its `id`.
pub struct RawClient {
    writer: Mutex<Writer>,
    waiters: Waiters,
    next_id: AtomicU64,
    alive: Arc<AtomicBool>,
    /// target id -> our session attached to it.
    sessions: StdMutex<HashMap<String, String>>,
    /// Held while attaching, so that two first uses of a target (a page's warm-up and its
    /// first snapshot) attach one session, not two.
    attaching: Mutex<()>,
    /// The targets the browser attached to our sessions, and what became of the sessions.
    attachments: Arc<StdMutex<Attachments>>,
    /// Sessions on which the browser was asked to attach children.
    auto_attached: StdMutex<HashSet<String>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for RawClient {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// A reply's whole message (`{"id":…,"result":…}`), not parsed yet.
pub struct RawReply(Payload);

impl RawReply {
    /// The message's text; checked for UTF-8 here, where it is read, and nowhere before.
    pub fn text(&self) -> Result<&str, CdpError> {
        std::str::from_utf8(self.0.bytes())
            .map_err(|error| CdpError::Protocol(format!("unreadable reply: {error}")))
    }

    /// The `result` as JSON, for small replies; the browser's error message otherwise.
    pub fn result(&self) -> Result<Value, CdpError> {
        let mut message: Value = serde_json::from_str(self.text()?)
            .map_err(|error| CdpError::Protocol(format!("unreadable reply: {error}")))?;
        if let Some(error) = message.get("error") {
            let text = error["message"].as_str().unwrap_or("protocol error");
            return Err(CdpError::Protocol(text.to_string()));
        }
        Ok(message["result"].take())
    }
}

impl RawClient {
    async fn connect(url: &str) -> Result<RawClient, CdpError> {
        let (mut reader, writer) = socket::connect(url).await.map_err(|error| {
            CdpError::Protocol(format!("cannot open a DevTools connection: {error}"))
        })?;
        let waiters: Waiters = Arc::default();
        let alive = Arc::new(AtomicBool::new(true));
        let attachments: Arc<StdMutex<Attachments>> = Arc::default();
        let (routes, flag, seen) = (waiters.clone(), alive.clone(), attachments.clone());
        let reader = tokio::spawn(async move {
            while let Ok(Some(message)) = reader.next_text().await {
                let Some(id) = reply_id(message.bytes()) else {
                    if let Ok(mut seen) = seen.lock() {
                        seen.observe(message.bytes());
                    }
                    continue;
                };
                let waiter = routes.lock().ok().and_then(|mut w| w.remove(&id));
                if let Some(waiter) = waiter {
                    let _gone = waiter.send(message);
                }
            }
            flag.store(false, Ordering::SeqCst);
            // Dropping the senders fails every call still waiting.
            if let Ok(mut waiting) = routes.lock() {
                waiting.clear();
            }
        });
        Ok(RawClient {
            writer: Mutex::new(writer),
            waiters,
            next_id: AtomicU64::new(1),
            alive,
            sessions: StdMutex::default(),
            attaching: Mutex::new(()),
            attachments,
            auto_attached: StdMutex::default(),
            reader,
        })
    }

    /// Sends `method` (on `session`, or to the browser) and waits for its reply's text.
    pub async fn call(
        &self,
        session: Option<&str>,
        method: &'static str,
        params: Value,
        timeout: Duration,
    ) -> Result<RawReply, CdpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = Value::from(session);
        }
        let (sender, receiver) = oneshot::channel();
        if let Ok(mut waiters) = self.waiters.lock() {
            waiters.insert(id, sender);
        }
        let closed = || CdpError::Protocol("The DevTools connection closed.".to_string());
        let exchange = async {
            self.writer
                .lock()
                .await
                .send_text(&message.to_string())
                .await
                .map_err(|_| closed())?;
            receiver.await.map_err(|_| closed())
        };
        let answer = tokio::time::timeout(timeout, exchange).await;
        if let Ok(mut waiters) = self.waiters.lock() {
            waiters.remove(&id);
        }
        match answer {
            Ok(reply) => reply.map(RawReply),
            Err(_) => Err(CdpError::Timeout {
                method,
                seconds: timeout.as_secs(),
            }),
        }
    }

    /// Our session on `target_id` (a page, or a cross-process iframe, whose target id is its
    /// frame id), attached on first use. Fails when there is no such target.
    pub async fn session(&self, target_id: &str, timeout: Duration) -> Result<String, CdpError> {
        let known = || {
            self.sessions
                .lock()
                .ok()
                .and_then(|s| s.get(target_id).cloned())
        };
        if let Some(known) = known() {
            return Ok(known);
        }
        let _attaching = self.attaching.lock().await;
        if let Some(known) = known() {
            return Ok(known);
        }
        let params = json!({ "targetId": target_id, "flatten": true });
        let answer = self
            .call(None, "Target.attachToTarget", params, timeout)
            .await?
            .result()?;
        let session = answer["sessionId"]
            .as_str()
            .ok_or_else(|| CdpError::Protocol("Target.attachToTarget gave no session".into()))?
            .to_string();
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.insert(target_id.to_string(), session.clone());
        }
        Ok(session)
    }

    /// Forgets a session that stopped answering (its target went away or was swapped).
    pub fn forget_session(&self, target_id: &str) {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.remove(target_id);
        }
    }

    /// The targets attached under `session` (its workers and cross-process iframes), asking
    /// the browser on first use to attach them, and those started later, to it. Handled by
    /// the browser, so it answers while the target's own thread is busy.
    pub async fn children(&self, session: &str, timeout: Duration) -> Result<Vec<Child>, CdpError> {
        self.forget_detached();
        let asked = self
            .auto_attached
            .lock()
            .map(|asked| asked.contains(session))
            .unwrap_or(false);
        if !asked {
            let params =
                json!({ "autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true });
            self.call(Some(session), "Target.setAutoAttach", params, timeout)
                .await?
                .result()?;
            if let Ok(mut asked) = self.auto_attached.lock() {
                asked.insert(session.to_string());
            }
            // What it reported before answering was there before we watched.
            if let Ok(mut seen) = self.attachments.lock() {
                seen.mark_existing(session);
            }
        }
        // The browser reports the children it has before it answers, so they are known now.
        Ok(self
            .attachments
            .lock()
            .map(|seen| seen.children(session))
            .unwrap_or_default())
    }

    /// Whether the renderer of `session`'s target crashed (or was ended).
    pub fn crashed(&self, session: &str) -> bool {
        self.attachments
            .lock()
            .map(|seen| seen.crashed(session))
            .unwrap_or(false)
    }

    /// Drops what we knew of sessions the browser detached (their targets closed).
    fn forget_detached(&self) {
        let detached = match self.attachments.lock() {
            Ok(mut seen) => seen.take_detached(),
            Err(_) => return,
        };
        if detached.is_empty() {
            return;
        }
        if let Ok(mut asked) = self.auto_attached.lock() {
            for session in &detached {
                asked.remove(session);
            }
        }
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.retain(|_, session| !detached.contains(session));
        }
    }
}

/// The `id` of a reply. Chromium writes it first (`{"id":12,…`), which is read without
/// scanning the rest; any other shape is read as a whole envelope.
fn reply_id(message: &[u8]) -> Option<u64> {
    if let Some(rest) = message.strip_prefix(b"{\"id\":") {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && rest[digits..].starts_with(b",") {
            return std::str::from_utf8(&rest[..digits]).ok()?.parse().ok();
        }
    }
    devtools_snapshot::cdp::Envelope::read(std::str::from_utf8(message).ok()?)?.id
}

#[cfg(test)]
mod tests {
    use super::{RawReply, reply_id, socket};

    #[test]
    fn replies_are_routed_by_their_id() {
        assert_eq!(reply_id(br#"{"id":42,"result":{}}"#), Some(42));
        assert_eq!(reply_id(br#"{"result":{},"id":7}"#), Some(7));
        assert_eq!(
            reply_id(br#"{"method":"Target.detachedFromTarget","params":{}}"#),
            None
        );
        assert_eq!(reply_id(b"not json"), None);
        // Routed by its id without reading the rest: its caller learns that the text is
        // unreadable instead of waiting for a reply that never comes.
        let broken = b"{\"id\":1,\xff}";
        assert_eq!(reply_id(broken), Some(1));
        let reply = RawReply(socket::Payload::Heap(broken.to_vec()));
        let error = reply.text().expect_err("not UTF-8");
        assert!(error.to_string().contains("unreadable reply"), "{error}");
    }
}
