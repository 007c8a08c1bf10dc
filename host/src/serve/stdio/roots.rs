//! The client's MCP roots, which widen the file sandbox, obtained the way each protocol
//! revision provides them.
//!
//! - Up to 2025-11-25 (`initialize`): the server asks `roots/list` once the client says it is
//!   initialized, and the first call waits for the answer (up to [`DEFAULT_TIMEOUT`]), as
//!   chrome-devtools-mcp 1.11.0 does, so that its file parameters are checked against them.
//! - From 2026-07-28 there is no handshake to wait for and the server may not send requests:
//!   a client that declares roots in a call's `_meta` gets, on its first call, an
//!   `InputRequiredResult` asking for `roots/list` (SEP-2322), and its retry carries the roots.
//!   One round trip on the first call only; no call ever waits on a timer.
//!
//! Roots are deprecated by SEP-2577 (hence the `allow`) but are what today's clients send, and
//! the reference honours them.
#![allow(deprecated)]

use crate::session::Session;
use rmcp::model::{CallToolRequestParams, InputRequest, InputRequiredResult, Root};
use rmcp::service::{Peer, RequestContext};
use rmcp::{RoleServer, model::ProtocolVersion};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::watch;

/// How long the first call of a legacy session waits for the client's roots, as 1.11.0 does.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Test hook: overrides [`DEFAULT_TIMEOUT`] (milliseconds). Tests make it long to prove that a
/// 2026-07-28 call never waits on it; not meant for users.
pub const TIMEOUT_ENV: &str = "DEVTOOLS_MCP_ROOTS_TIMEOUT_MS";

/// The key of our `roots/list` input request, echoed in the retry's `inputResponses`.
const INPUT_KEY: &str = "roots";

/// The roots timeout: [`TIMEOUT_ENV`] when set, else [`DEFAULT_TIMEOUT`]. A value that is not
/// a whole number of milliseconds is refused rather than ignored.
pub fn timeout_from_env() -> Result<Duration, String> {
    parse_timeout(std::env::var_os(TIMEOUT_ENV).as_deref())
}

fn parse_timeout(value: Option<&std::ffi::OsStr>) -> Result<Duration, String> {
    let Some(value) = value else {
        return Ok(DEFAULT_TIMEOUT);
    };
    value
        .to_str()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .ok_or_else(|| {
            format!(
                "{TIMEOUT_ENV}={value:?} is not a number of milliseconds (a test hook); unset it \
                 or give e.g. {TIMEOUT_ENV}=30000"
            )
        })
}

/// True when the request speaks 2026-07-28 or later (no handshake, no server requests). That
/// revision carries its version in every request's `_meta`; a session that began with
/// `initialize` speaks the version negotiated there, always older, whatever version its client
/// asked for (rmcp's `protocol_version()` falls back to the asked one, so it is not used).
pub fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .meta
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
}

/// Whether the client reads `resource_link` content (protocol 2025-06-18 and later).
/// Over HTTP a legacy session's version is in each request's `MCP-Protocol-Version` header.
pub fn reads_resource_links(context: &RequestContext<RoleServer>) -> bool {
    let from_header = || {
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-protocol-version"))
            .and_then(|value| value.to_str().ok())
            .map(str::to_string)
    };
    context
        .protocol_version()
        .map(|version| version.as_str().to_string())
        .or_else(from_header)
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2025_06_18.as_str())
}

/// One connection's roots: whether they arrived (legacy) or were asked for (2026-07-28).
pub struct ClientRoots {
    timeout: Duration,
    /// Legacy: true once the roots asked for after `initialized` are in the sandbox (or the
    /// client offers none, or did not answer).
    ready: watch::Sender<bool>,
    /// 2026-07-28: true once a call brought the client's answer to our `roots/list`.
    received: AtomicBool,
}

impl ClientRoots {
    pub fn new(timeout: Duration) -> ClientRoots {
        ClientRoots {
            timeout,
            ready: watch::channel(false).0,
            received: AtomicBool::new(false),
        }
    }

    /// Legacy: the first call waits until the roots are in (at most the timeout).
    pub async fn wait_until_ready(&self) {
        let mut ready = self.ready.subscribe();
        let _waited = tokio::time::timeout(self.timeout, ready.wait_for(|ready| *ready)).await;
    }

    /// Legacy: after `notifications/initialized`, ask for the roots and let calls go on.
    pub async fn fetch_after_initialized(&self, session: &Session, peer: &Peer<RoleServer>) {
        self.fetch(session, peer).await;
        self.ready.send_replace(true);
    }

    /// `notifications/roots/list_changed`: a legacy client is asked again at once; a
    /// 2026-07-28 client (which should not send it) is asked on its next call.
    pub async fn changed(&self, session: &Session, peer: &Peer<RoleServer>) {
        match peer.peer_info() {
            Some(_) => self.fetch(session, peer).await,
            None => self.received.store(false, Ordering::Relaxed),
        }
    }

    /// Legacy: adds the client's `file://` roots to the sandbox.
    async fn fetch(&self, session: &Session, peer: &Peer<RoleServer>) {
        let supports_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !supports_roots {
            return;
        }
        let roots = match tokio::time::timeout(self.timeout, peer.list_roots()).await {
            Ok(Ok(result)) => result.roots,
            Ok(Err(error)) => {
                tracing::warn!(%error, "the client did not list its roots");
                return;
            }
            Err(_) => {
                tracing::warn!(timeout = ?self.timeout, "the client did not answer roots/list in time");
                return;
            }
        };
        add_to_sandbox(session, roots).await;
    }

    /// 2026-07-28, before a call of a client that declares roots: the roots its retry carries
    /// go into the sandbox; its first call is answered with a request for them instead.
    pub async fn before_modern_call(
        &self,
        session: &Session,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Option<InputRequiredResult> {
        let offers_roots = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.roots.is_some());
        if !offers_roots {
            return None;
        }
        let responses = request.input_responses.as_ref();
        if let Some(answer) = responses.and_then(|responses| responses.get(INPUT_KEY)) {
            // Asked once per connection: a malformed answer is logged, not asked for again.
            self.received.store(true, Ordering::Relaxed);
            match serde_json::from_value::<rmcp::model::ListRootsResult>(answer.clone()) {
                Ok(listed) => add_to_sandbox(session, listed.roots).await,
                Err(error) => tracing::warn!(%error, "the client's roots/list answer is malformed"),
            }
            return None;
        }
        // A retry without our key answers someone else's request: never ask in a loop.
        if responses.is_some() || self.received.load(Ordering::Relaxed) {
            return None;
        }
        let ask = InputRequest::ListRoots(rmcp::model::ListRootsRequest::default());
        Some(InputRequiredResult::from_input_requests(BTreeMap::from([
            (INPUT_KEY.to_string(), ask),
        ])))
    }
}

async fn add_to_sandbox(session: &Session, roots: Vec<Root>) {
    let mut state = session.lock().await;
    for root in roots {
        let Some(path) = root.uri.strip_prefix("file://") else {
            continue;
        };
        let path = percent_decode(path);
        if let Err(error) = state.sandbox.add_root(std::path::Path::new(&path)) {
            tracing::warn!(root = %root.uri, %error, "ignoring a client root");
        }
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(hex) = text.get(index + 1..index + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            decoded.push(byte);
            index += 3;
            continue;
        }
        decoded.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_uris_are_percent_decoded() {
        assert_eq!(percent_decode("/tmp/my%20dir"), "/tmp/my dir");
        assert_eq!(percent_decode("/tmp/100%"), "/tmp/100%");
    }

    #[test]
    fn the_timeout_hook_takes_milliseconds_and_refuses_anything_else() {
        use std::ffi::OsStr;
        assert_eq!(parse_timeout(None), Ok(DEFAULT_TIMEOUT));
        assert_eq!(
            parse_timeout(Some(OsStr::new("30000"))),
            Ok(Duration::from_secs(30))
        );
        let refused = parse_timeout(Some(OsStr::new("30s"))).expect_err("not milliseconds");
        assert!(
            refused.contains(TIMEOUT_ENV) && refused.contains("30000"),
            "{refused}"
        );
    }

    #[test]
    fn the_roots_request_is_what_a_client_expects() {
        let ask = InputRequest::ListRoots(rmcp::model::ListRootsRequest::default());
        let result = InputRequiredResult::from_input_requests(BTreeMap::from([(
            INPUT_KEY.to_string(),
            ask,
        )]));
        assert_eq!(
            serde_json::to_value(result).expect("serializes"),
            serde_json::json!({
                "resultType": "input_required",
                "inputRequests": {"roots": {"method": "roots/list"}},
            })
        );
    }
}
