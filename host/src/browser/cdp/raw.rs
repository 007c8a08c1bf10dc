//! A thin CDP client of our own: a second connection to the browser, for the commands whose
//! replies are large. chromiumoxide parses every message it reads into its typed `Message`
//! (an untagged enum, so serde first buffers the whole document) and then into a
//! `serde_json::Value`; for the 3.7 MB `Accessibility.getFullAXTree` of a 4,000-element page
//! that was most of the snapshot's CPU and all of its memory peak. Here a reply is routed by
//! its `id` without being parsed and handed over as text, which the snapshot engine then
//! parses once, in place.
//!
//! The connection runs over the browser's DevTools pipe in CBOR mode when this server
//! launched the browser (`cbor_pipe`: the browser then skips converting megabytes to JSON,
//! and a reply is converted here only if its reader wants text), and over a WebSocket of our
//! own otherwise (`socket`, which reads a reply of megabytes into one buffer of its size).
//!
//! The connection attaches its own flat sessions to the targets it is asked about (a page,
//! or a cross-process iframe) and enables no domain, so it receives no events to speak of
//! but those of its attachments (see `attachments`).

mod attachments;
mod batch;
mod cbor_pipe;
mod socket;

use super::CdpError;
use attachments::Attachments;
pub use attachments::Child;
use serde_json::{Value, json};
use socket::Payload;
use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex, OnceLock};
use std::time::Duration;
use tokio::net::unix::pipe;
use tokio::sync::{Mutex, oneshot};

type Waiters = Arc<StdMutex<HashMap<u64, oneshot::Sender<Message>>>>;

/// One whole message, in the form it crossed the wire in.
struct Message {
    payload: Payload,
    /// CBOR from the pipe; JSON text otherwise.
    cbor: bool,
}

/// How to reach the browser, and our connection once made.
pub struct RawLink {
    route: Route,
    client: Mutex<Option<Arc<RawClient>>>,
}

enum Route {
    /// A WebSocket address, connected on first use and again after a drop.
    WebSocket(String),
    /// The pipe of a browser this server launched: connected from the start, and never
    /// again once closed (the browser exits with it).
    Pipe,
}

impl RawLink {
    pub fn new(url: String) -> Arc<RawLink> {
        Arc::new(RawLink {
            route: Route::WebSocket(url),
            client: Mutex::new(None),
        })
    }

    /// The connection over the browser's DevTools pipe (in CBOR mode), our ends of it.
    pub fn over_pipe(to_browser: pipe::Sender, from_browser: pipe::Receiver) -> Arc<RawLink> {
        let client = RawClient::start(
            Incoming::Pipe(cbor_pipe::Reader::new(from_browser)),
            Outgoing::Pipe(cbor_pipe::Writer::new(to_browser)),
        );
        Arc::new(RawLink {
            route: Route::Pipe,
            client: Mutex::new(Some(Arc::new(client))),
        })
    }

    /// The live connection, connecting (again) when there is none.
    pub async fn client(&self) -> Result<Arc<RawClient>, CdpError> {
        let mut client = self.client.lock().await;
        if let Some(live) = client.as_ref().filter(|c| c.alive.load(Ordering::SeqCst)) {
            return Ok(live.clone());
        }
        let Route::WebSocket(url) = &self.route else {
            return Err(CdpError::Protocol(
                "The browser's DevTools pipe is closed.".to_string(),
            ));
        };
        let (reader, writer) = socket::connect(url).await.map_err(|error| {
            CdpError::Protocol(format!("cannot open a DevTools connection: {error}"))
        })?;
        let connected = Arc::new(RawClient::start(
            Incoming::Socket(reader),
            Outgoing::Socket(writer),
        ));
        *client = Some(connected.clone());
        Ok(connected)
    }
}

/// Where replies and events come from.
enum Incoming {
    Socket(socket::Reader),
    Pipe(cbor_pipe::Reader),
}

impl Incoming {
    async fn next(&mut self) -> io::Result<Option<Message>> {
        let (payload, cbor) = match self {
            Incoming::Socket(reader) => (reader.next_text().await?, false),
            Incoming::Pipe(reader) => (reader.next_message().await?, true),
        };
        Ok(payload.map(|payload| Message { payload, cbor }))
    }
}

impl Message {
    /// The `id` of a reply (`None` for an event), read without parsing the rest.
    fn reply_id(&self) -> Option<u64> {
        match self.cbor {
            true => devtools_cbor::reply_id(self.payload.bytes()),
            false => reply_id(self.payload.bytes()),
        }
    }
}

/// Where commands go.
enum Outgoing {
    Socket(socket::Writer),
    Pipe(cbor_pipe::Writer),
}

impl Outgoing {
    async fn send(&mut self, message: &Value) -> io::Result<()> {
        match self {
            Outgoing::Socket(writer) => writer.send_text(&message.to_string()).await,
            Outgoing::Pipe(writer) => writer.send(message).await,
        }
    }
}

/// One connection to the browser: commands go out through `writer`, and a reader task hands
/// each reply's text to the caller waiting for its `id`.
pub struct RawClient {
    writer: Mutex<Outgoing>,
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
pub struct RawReply {
    message: Message,
    /// The JSON text of a CBOR reply, made on first ask.
    converted: OnceLock<Result<String, String>>,
}

impl RawReply {
    fn new(message: Message) -> RawReply {
        RawReply {
            message,
            converted: OnceLock::new(),
        }
    }

    /// The message's text; checked for UTF-8 (or converted from CBOR) here, where it is
    /// read, and nowhere before.
    pub fn text(&self) -> Result<&str, CdpError> {
        let bytes = self.message.payload.bytes();
        let unreadable = |error: &dyn std::fmt::Display| {
            CdpError::Protocol(format!("unreadable reply: {error}"))
        };
        if !self.message.cbor {
            return std::str::from_utf8(bytes).map_err(|error| unreadable(&error));
        }
        let converted = self.converted.get_or_init(|| {
            let text = devtools_cbor::to_json(bytes).map_err(|error| error.to_string())?;
            String::from_utf8(text).map_err(|error| error.to_string())
        });
        converted.as_deref().map_err(|error| unreadable(&error))
    }

    /// The message as the browser's CBOR pipe carried it, when it came that way: readers
    /// of large replies deserialize it directly (see `devtools_cbor::from_message_seed`).
    pub fn cbor(&self) -> Option<&[u8]> {
        self.message.cbor.then(|| self.message.payload.bytes())
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
    /// Starts the task that routes what `incoming` reads to the callers waiting for it.
    fn start(mut incoming: Incoming, writer: Outgoing) -> RawClient {
        let waiters: Waiters = Arc::default();
        let alive = Arc::new(AtomicBool::new(true));
        let attachments: Arc<StdMutex<Attachments>> = Arc::default();
        let (routes, flag, seen) = (waiters.clone(), alive.clone(), attachments.clone());
        let reader = tokio::spawn(async move {
            while let Ok(Some(message)) = incoming.next().await {
                let Some(id) = message.reply_id() else {
                    let event = RawReply::new(message);
                    if let (Ok(text), Ok(mut seen)) = (event.text(), seen.lock()) {
                        seen.observe(text.as_bytes());
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
        RawClient {
            writer: Mutex::new(writer),
            waiters,
            next_id: AtomicU64::new(1),
            alive,
            sessions: StdMutex::default(),
            attaching: Mutex::new(()),
            attachments,
            auto_attached: StdMutex::default(),
            reader,
        }
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
                .send(&message)
                .await
                .map_err(|_| closed())?;
            receiver.await.map_err(|_| closed())
        };
        let started = std::time::Instant::now();
        let answer = tokio::time::timeout(timeout, exchange).await;
        if let Ok(mut waiters) = self.waiters.lock() {
            waiters.remove(&id);
        }
        let micros = started.elapsed().as_micros();
        tracing::trace!(method, micros, "thin connection answered");
        match answer {
            Ok(reply) => reply.map(RawReply::new),
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
    use super::{Message, RawReply, reply_id, socket};
    use serde_json::json;

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
        let reply = RawReply::new(Message {
            payload: socket::Payload::Heap(broken.to_vec()),
            cbor: false,
        });
        let error = reply.text().expect_err("not UTF-8");
        assert!(error.to_string().contains("unreadable reply"), "{error}");
    }

    #[test]
    fn a_cbor_reply_reads_as_its_json_or_says_why_not() {
        let good = devtools_cbor::from_json(&json!({ "id": 4, "result": { "a": 1, "b": "é" } }))
            .expect("encodes");
        let message = Message {
            payload: socket::Payload::Heap(good.clone()),
            cbor: true,
        };
        assert_eq!(message.reply_id(), Some(4));
        let reply = RawReply::new(message);
        assert_eq!(reply.result().expect("result"), json!({ "a": 1, "b": "é" }));
        assert_eq!(reply.cbor(), Some(good.as_slice()));

        let broken = devtools_cbor::from_json(&json!({ "id": 5, "result": { "a": 1 } }));
        let mut broken = broken.expect("encodes");
        let value_at = broken.len() - 3;
        broken[value_at] = 0xc1;
        let message = Message {
            payload: socket::Payload::Heap(broken),
            cbor: true,
        };
        // Routed to its caller by its id, who learns why it cannot be read.
        assert_eq!(message.reply_id(), Some(5));
        let error = RawReply::new(message).text().expect_err("unreadable");
        assert!(
            error
                .to_string()
                .starts_with("unreadable reply: unexpected CBOR byte 0xc1"),
            "{error}"
        );
    }
}
