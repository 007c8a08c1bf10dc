//! `--blockedUrlPattern` / `--allowedUrlPattern` enforced by the browser itself, as the
//! reference 1.11.0 does it (Puppeteer's `blocklist`/`allowlist`): every target gets
//! `Network.emulateNetworkConditionsByRule`, whose URL patterns Chrome matches on each request
//! (navigations, each hop of a redirect, subresources, a worker's fetches).
//!
//! A connection of our own auto-attaches to every target of the browser, and to every target
//! under those (cross-process frames, workers), with `waitForDebuggerOnStart`: a new target is
//! held before its first request until its rules are set, then let go. A popup, a frame or a
//! worker is thus restricted before it loads anything, whoever created it (a page, a tool,
//! Lighthouse's own connection). A target the rules cannot be set on is never let go.
//!
//! The rules belong to this connection's sessions: if it closes, Chrome drops them, so its
//! end marks the browser connection dead and the session opens a new one (with a new guard)
//! rather than go on unprotected. Targets already open at a refused URL when the guard
//! connects are left alone and hidden from the page list, as 1.11.0 detaches from them.

use crate::browser::cdp::timeouts;
use crate::policy::url_patterns::{Restriction, UrlPatterns};
use async_tungstenite::tokio::connect_async;
use async_tungstenite::tungstenite::Message;
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// The first Chrome whose network rules can allow a pattern and refuse the rest.
const ALLOWLIST_CHROME: u32 = 149;

/// The running guard; dropping it ends its connection (and with it the rules).
pub struct UrlGuard {
    hidden: Arc<Mutex<HashSet<String>>>,
    tasks: [JoinHandle<()>; 2],
}

impl Drop for UrlGuard {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Commands on the guard's connection, answered by the reader task.
struct Link {
    outgoing: mpsc::UnboundedSender<String>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>,
    next_id: AtomicU64,
}

impl Link {
    async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst) + 1;
        let (sender, answer) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id, sender);
        }
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        self.outgoing
            .send(message.to_string())
            .map_err(|_| CLOSED.to_string())?;
        match tokio::time::timeout(timeouts::COMMAND, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(CLOSED.to_string()),
            Err(_) => Err(format!(
                "The browser did not answer {method} within {} s.",
                timeouts::COMMAND.as_secs()
            )),
        }
    }

    fn answer(&self, message: &Value, id: u64) {
        let sender = self.pending.lock().ok().and_then(|mut p| p.remove(&id));
        if let Some(sender) = sender {
            let result = match message.get("error") {
                Some(error) => Err(error["message"]
                    .as_str()
                    .unwrap_or("Protocol error")
                    .to_string()),
                None => Ok(message["result"].clone()),
            };
            let _delivered = sender.send(result);
        }
    }
}

const CLOSED: &str = "The URL-pattern guard's DevTools connection closed.";

impl UrlGuard {
    /// Connects to `ws_endpoint` and restricts every target of the browser from now on.
    /// `alive` is the browser connection's: cleared when the guard's connection ends.
    pub async fn start(
        ws_endpoint: &str,
        patterns: Arc<UrlPatterns>,
        alive: Arc<AtomicBool>,
    ) -> Result<UrlGuard, String> {
        let (socket, _) = tokio::time::timeout(timeouts::COMMAND, connect_async(ws_endpoint))
            .await
            .map_err(|_| "the browser did not accept a DevTools connection in time".to_string())?
            .map_err(|error| format!("cannot open a DevTools connection: {error}"))?;
        let (mut sink, mut stream) = socket.split();
        let (outgoing, mut queue) = mpsc::unbounded_channel::<String>();
        let writer = tokio::spawn(async move {
            while let Some(text) = queue.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
        });
        let link = Arc::new(Link {
            outgoing,
            pending: Mutex::default(),
            next_id: AtomicU64::new(0),
        });
        let hidden: Arc<Mutex<HashSet<String>>> = Arc::default();
        let reader = {
            let (link, hidden, patterns) = (link.clone(), hidden.clone(), patterns.clone());
            tokio::spawn(async move {
                // Targets attached before the browser answers the first auto-attach were open
                // already (Chrome reports them first).
                let mut connecting = true;
                while let Some(Ok(frame)) = stream.next().await {
                    let Message::Text(text) = frame else { continue };
                    let Ok(message) = serde_json::from_str::<Value>(text.as_str()) else {
                        continue;
                    };
                    if let Some(id) = message["id"].as_u64() {
                        connecting &= id != AUTO_ATTACH_ID;
                        link.answer(&message, id);
                    } else if message["method"] == "Target.attachedToTarget" {
                        let params = message["params"].clone();
                        let existing = connecting;
                        let (link, hidden, patterns) =
                            (link.clone(), hidden.clone(), patterns.clone());
                        tokio::spawn(async move {
                            protect(&link, &patterns, &hidden, params, existing).await;
                        });
                    }
                }
                alive.store(false, Ordering::SeqCst);
                if let Ok(mut pending) = link.pending.lock() {
                    pending.clear();
                }
                tracing::error!(
                    "the URL-pattern guard's DevTools connection closed: the browser connection is dropped so that no page runs without --blockedUrlPattern/--allowedUrlPattern"
                );
            })
        };
        let guard = UrlGuard {
            hidden,
            tasks: [reader, writer],
        };
        if patterns.restriction == Restriction::Allowed {
            let version = link.call(None, "Browser.getVersion", json!({})).await?;
            let product = version["product"].as_str().unwrap_or_default();
            let major: u32 = product
                .chars()
                .skip_while(|c| !c.is_ascii_digit())
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .unwrap_or(0);
            if major < ALLOWLIST_CHROME {
                return Err("The allowlist option require Chrome 149 or greater.".into());
            }
        }
        // The id the reader waits for to tell open targets from new ones.
        link.next_id.store(AUTO_ATTACH_ID - 1, Ordering::SeqCst);
        link.call(None, "Target.setAutoAttach", auto_attach())
            .await
            .map_err(|error| format!("cannot watch the browser's targets: {error}"))?;
        Ok(guard)
    }

    /// Whether a target was open at a refused URL when the guard connected: it is not listed.
    pub fn hides(&self, target_id: &str) -> bool {
        self.hidden
            .lock()
            .map(|hidden| hidden.contains(target_id))
            .unwrap_or(true)
    }
}

/// Far above the few commands sent before it.
const AUTO_ATTACH_ID: u64 = 1_000;

fn auto_attach() -> Value {
    json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true })
}

/// Sets a target's rules, then lets it run.
async fn protect(
    link: &Link,
    patterns: &UrlPatterns,
    hidden: &Mutex<HashSet<String>>,
    params: Value,
    existing: bool,
) {
    let (Some(session), Some(target_id)) = (
        params["sessionId"].as_str(),
        params["targetInfo"]["targetId"].as_str(),
    ) else {
        return;
    };
    let kind = params["targetInfo"]["type"].as_str().unwrap_or_default();
    let url = params["targetInfo"]["url"].as_str().unwrap_or_default();
    if existing && !patterns.is_url_allowed(url) {
        if let Ok(mut hidden) = hidden.lock() {
            hidden.insert(target_id.to_string());
        }
        let detach = json!({ "sessionId": session });
        let _left = link.call(None, "Target.detachFromTarget", detach).await;
        return;
    }
    if kind != "service_worker"
        && let Err(error) = link
            .call(Some(session), "Target.setAutoAttach", auto_attach())
            .await
    {
        tracing::debug!(%error, kind, "cannot watch a target's children");
    }
    // A worker's requests are matched only while its Network domain is on (as Puppeteer does).
    if matches!(kind, "worker" | "shared_worker" | "service_worker")
        && let Err(error) = link.call(Some(session), "Network.enable", json!({})).await
    {
        tracing::debug!(%error, kind, "cannot enable a worker's network domain");
    }
    let rules = patterns.network_conditions();
    if let Err(error) = link
        .call(
            Some(session),
            "Network.emulateNetworkConditionsByRule",
            rules,
        )
        .await
    {
        // Never let go: a target held before its first request loads nothing.
        tracing::warn!(%error, kind, url, "cannot restrict a target's network; it is kept paused");
        return;
    }
    if params["waitingForDebugger"].as_bool() == Some(true)
        && let Err(error) = link
            .call(Some(session), "Runtime.runIfWaitingForDebugger", json!({}))
            .await
    {
        tracing::debug!(%error, kind, "cannot resume a target");
    }
}
