//! Per-page console and network collectors, printed as the reference's `list_console_messages`,
//! `get_console_message`, `list_network_requests` and `get_network_request` print them.
//!
//! The collectors listen on a session of their own: a non-flat `Target.attachToTarget` from the
//! page's session, whose traffic arrives as `Target.receivedMessageFromTarget` events on one
//! stream. That keeps every domain's events in browser order (navigations split buckets between
//! the right messages), reads events as plain JSON, and lets the collectors enable `Debugger`
//! (for DevTools-like stack frames, with pauses skipped) without touching the page's session.

mod session;

pub use devtools_collectors::{NetworkDetail, Page};

use crate::browser::cdp::timeouts;
use devtools_collectors::{Collected, MessageRecord, NOTHING_SELECTED, Pending, RequestRecord};
use futures::StreamExt;
use serde_json::{Value, json};
use session::Session;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The console and network collectors of one page; dropping it stops them.
pub struct Collectors {
    shared: Arc<Shared>,
    tasks: Vec<JoinHandle<()>>,
}

struct Shared {
    state: Mutex<Collected>,
    session: Session,
    redact: AtomicBool,
    /// Read-backs queued for the resolver; beyond `MAX_BACKLOG` new ones are dropped (their
    /// arguments then print as no longer available).
    backlog: AtomicUsize,
}

const MAX_BACKLOG: usize = 1_000;

impl Shared {
    fn state(&self) -> MutexGuard<'_, Collected> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Collectors {
    /// Attaches a collecting session to the page and enables `Page`, `Runtime`, `Log`, `Network`
    /// and `Debugger` on it. Attach right after the page is created to miss nothing.
    pub async fn attach(page: &chromiumoxide::Page) -> Result<Collectors, String> {
        let (session, mut events) = Session::attach(page).await?;
        let shared = Arc::new(Shared {
            state: Mutex::new(Collected::default()),
            session,
            redact: AtomicBool::new(false),
            backlog: AtomicUsize::new(0),
        });
        let (jobs, job_queue) = mpsc::unbounded_channel();
        let listener = {
            let shared = shared.clone();
            tokio::spawn(async move {
                while let Some(event) = events.next().await {
                    if event.session_id.as_ref() == shared.session.id() {
                        shared.received(&event.message, &jobs);
                    }
                }
            })
        };
        let resolver = tokio::spawn(session::resolve(shared.clone(), job_queue));
        let collectors = Collectors {
            shared,
            tasks: vec![listener, resolver],
        };
        collectors.enable().await?;
        Ok(collectors)
    }

    async fn enable(&self) -> Result<(), String> {
        let session = &self.shared.session;
        session
            .send("Page.enable", json!({}), timeouts::COMMAND)
            .await?;
        let tree = session
            .send("Page.getFrameTree", json!({}), timeouts::COMMAND)
            .await?;
        self.shared
            .state()
            .main_frame(&tree["frameTree"]["frame"], false);
        // Skip pauses right behind `Debugger.enable`, in the same burst, so `debugger;` never stops
        // the page; a pause that still happens is resumed when it is reported.
        let (enabled, _, _) = tokio::join!(
            session.send("Debugger.enable", json!({}), timeouts::COMMAND),
            session.send(
                "Debugger.setSkipAllPauses",
                json!({"skip": true}),
                timeouts::COMMAND
            ),
            session.send(
                "Debugger.setAsyncCallStackDepth",
                json!({"maxDepth": 32}),
                timeouts::COMMAND
            ),
        );
        match enabled {
            Ok(result) => session.set_debugger_id(result["debuggerId"].as_str()),
            Err(error) => tracing::debug!(%error, "collectors run without the Debugger domain"),
        }
        for domain in ["Network.enable", "Runtime.enable", "Log.enable"] {
            session.send(domain, json!({}), timeouts::COMMAND).await?;
        }
        // DevTools issues, listed as console messages as 1.11.0 lists them.
        if let Err(error) = session
            .send("Audits.enable", json!({}), timeouts::COMMAND)
            .await
        {
            tracing::debug!(%error, "collectors run without DevTools issues");
        }
        Ok(())
    }

    /// Prints header values as `<redacted>` unless DevTools allows them (`--redactNetworkHeaders`).
    /// The collectors of `page` (every tracked page has them, see `features::attach`).
    pub fn of(page: &crate::browser::McpPage) -> Result<&Collectors, String> {
        page.features()
            .get::<Collectors>()
            .ok_or_else(|| "This page has no console or network collectors.".to_string())
    }

    pub fn set_redact_network_headers(&self, redact: bool) {
        self.shared.redact.store(redact, Ordering::Relaxed);
    }

    /// The `## Console messages` section and the structured keys (`consoleMessages`, `pagination`)
    /// to merge into structured content (an empty object when there are no messages).
    pub fn console_list(
        &self,
        page: Page,
        types: Option<&[String]>,
        include_preserved: bool,
        include_stack_traces: bool,
    ) -> (Vec<String>, Value) {
        self.shared
            .state()
            .console_list(page, types, include_preserved, include_stack_traces)
    }

    /// The requests as data, header values redacted as `get_network_request` redacts them.
    pub fn network_records(&self, include_preserved: bool) -> Vec<RequestRecord> {
        let redact = self.shared.redact.load(Ordering::Relaxed);
        self.shared
            .state()
            .network_records(include_preserved, redact)
    }

    /// The console messages as data.
    pub fn console_records(&self, include_preserved: bool) -> Vec<MessageRecord> {
        self.shared.state().console_records(include_preserved)
    }

    /// One message (`ID: n`, `Message: …`, `### Arguments`, `### Stack trace`, or an issue's
    /// description and affected resources) and its `consoleMessage` key, or the reference's
    /// not-found error. `node` names an issue's elements by their uid in the page's last
    /// snapshot (`None`: none was taken).
    pub fn console_detail(
        &self,
        msgid: u64,
        node: Option<&dyn Fn(i64) -> Option<String>>,
    ) -> Result<(Vec<String>, Value), String> {
        self.shared.state().console_detail(msgid, node)
    }

    /// The `## Network requests` section and the structured keys (`networkRequests`, `pagination`).
    pub fn network_list(
        &self,
        page: Page,
        resource_types: Option<&[String]>,
        include_preserved: bool,
    ) -> (Vec<String>, Value) {
        self.shared
            .state()
            .network_list(page, resource_types, include_preserved)
    }

    /// One request with headers and bodies (read from the browser now), or the not-found error.
    /// Without a `reqid` (or with 0) the reference reports the request selected in a DevTools
    /// window; there is none here, so this gives its plain (non-error) line for that case.
    pub async fn network_detail(
        &self,
        _page: &chromiumoxide::Page,
        reqid: Option<u64>,
    ) -> Result<NetworkDetail, String> {
        let redact = self.shared.redact.load(Ordering::Relaxed);
        let Some(reqid) = reqid.filter(|id| *id != 0) else {
            return Ok(NetworkDetail::nothing_selected(NOTHING_SELECTED, redact));
        };
        let snapshot = self.shared.state().network_snapshot(reqid)?;
        let session = &self.shared.session;
        let request_body = match (&snapshot.post_data, snapshot.has_post_data) {
            (Some(data), true) => Some(data.clone()),
            (None, true) => session
                .send(
                    "Network.getRequestPostData",
                    json!({"requestId": snapshot.cdp_id}),
                    timeouts::COMMAND,
                )
                .await
                .ok()
                .and_then(|result| result["postData"].as_str().map(str::to_string)),
            (_, false) => None,
        }
        .filter(|data| !data.is_empty())
        .map(String::into_bytes);
        let response_body = if snapshot.has_response() && !snapshot.redirect {
            let result = session
                .send(
                    "Network.getResponseBody",
                    json!({"requestId": snapshot.cdp_id}),
                    timeouts::COMMAND,
                )
                .await
                .ok();
            result.and_then(|result| {
                let body = result["body"].as_str()?;
                if result["base64Encoded"] == true {
                    devtools_collectors::base64_decode(body)
                } else {
                    Some(body.as_bytes().to_vec())
                }
            })
        } else {
            None
        };
        let (lines, structured) = snapshot.render(
            request_body.as_deref(),
            response_body.as_deref(),
            (None, None),
            redact,
        );
        Ok(NetworkDetail::new(
            lines,
            structured,
            request_body,
            response_body,
            snapshot,
            redact,
        ))
    }
}

impl Drop for Collectors {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        self.shared.session.detach();
    }
}

impl Shared {
    /// One message of the collecting session: a command's answer or an event.
    fn received(self: &Arc<Self>, message: &str, jobs: &mpsc::UnboundedSender<Pending>) {
        let Ok(message) = serde_json::from_str::<Value>(message) else {
            return;
        };
        if self.session.answer(&message) {
            return;
        }
        let method = message["method"].as_str().unwrap_or_default();
        if method == "Debugger.paused" {
            let shared = self.clone();
            tokio::spawn(async move {
                let _ = shared
                    .session
                    .send("Debugger.resume", json!({}), timeouts::COMMAND)
                    .await;
            });
            return;
        }
        for job in self.state().dispatch(method, &message["params"]) {
            if self.backlog.fetch_add(1, Ordering::Relaxed) < MAX_BACKLOG {
                let _ = jobs.send(job);
            } else {
                self.backlog.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }
}
