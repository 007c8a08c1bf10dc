//! Per-page console and network collectors, printed as the reference's `list_console_messages`,
//! `get_console_message`, `list_network_requests` and `get_network_request` print them.
//!
//! The collectors listen on a session of their own: a non-flat `Target.attachToTarget` from the
//! page's session, whose traffic arrives as `Target.receivedMessageFromTarget` events on one
//! stream. That keeps every domain's events in browser order (navigations split buckets between
//! the right messages), reads events as plain JSON, and lets the collectors enable `Debugger`
//! (for DevTools-like stack frames, with pauses skipped) without touching the page's session.

mod buckets;
mod console;
mod console_output;
mod detail;
mod http;
mod network;
mod pagination;
mod session;
mod stack;
mod urls;
mod values;

pub use detail::NetworkDetail;
pub use pagination::Page;

use buckets::Buckets;
use console::{Console, Pending};
use futures::StreamExt;
use network::{NOTHING_SELECTED, Network};
use serde_json::{Value, json};
use session::{COMMAND_TIMEOUT, Session};
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
    state: Mutex<State>,
    session: Session,
    redact: AtomicBool,
    /// Read-backs queued for the resolver; beyond `MAX_BACKLOG` new ones are dropped (their
    /// arguments then print as no longer available).
    backlog: AtomicUsize,
}

const MAX_BACKLOG: usize = 1_000;

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Collectors {
    /// Attaches a collecting session to the page and enables `Page`, `Runtime`, `Log`, `Network`
    /// and `Debugger` on it. Attach right after the page is created to miss nothing.
    pub async fn attach(page: &chromiumoxide::Page) -> Result<Collectors, String> {
        let (session, mut events) = Session::attach(page).await?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
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
            .send("Page.enable", json!({}), COMMAND_TIMEOUT)
            .await?;
        let tree = session
            .send("Page.getFrameTree", json!({}), COMMAND_TIMEOUT)
            .await?;
        self.shared
            .state()
            .main_frame(&tree["frameTree"]["frame"], false);
        // Skip pauses right behind `Debugger.enable`, in the same burst, so `debugger;` never stops
        // the page; a pause that still happens is resumed when it is reported.
        let (enabled, _, _) = tokio::join!(
            session.send("Debugger.enable", json!({}), COMMAND_TIMEOUT),
            session.send(
                "Debugger.setSkipAllPauses",
                json!({"skip": true}),
                COMMAND_TIMEOUT
            ),
            session.send(
                "Debugger.setAsyncCallStackDepth",
                json!({"maxDepth": 32}),
                COMMAND_TIMEOUT
            ),
        );
        match enabled {
            Ok(result) => session.set_debugger_id(result["debuggerId"].as_str()),
            Err(error) => tracing::debug!(%error, "collectors run without the Debugger domain"),
        }
        for domain in ["Network.enable", "Runtime.enable", "Log.enable"] {
            session.send(domain, json!({}), COMMAND_TIMEOUT).await?;
        }
        Ok(())
    }

    /// Prints header values as `<redacted>` unless DevTools allows them (`--redactNetworkHeaders`).
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
            .console
            .list(page, types, include_preserved, include_stack_traces)
    }

    /// One message (`ID: n`, `Message: …`, `### Arguments`, `### Stack trace`) and its
    /// `consoleMessage` key, or the reference's not-found error.
    pub fn console_detail(&self, msgid: u64) -> Result<(Vec<String>, Value), String> {
        self.shared.state().console.detail(msgid)
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
            .network
            .list(page, resource_types, include_preserved)
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
        let snapshot = self.shared.state().network.snapshot(reqid)?;
        let session = &self.shared.session;
        let request_body = match (&snapshot.post_data, snapshot.has_post_data) {
            (Some(data), true) => Some(data.clone()),
            (None, true) => session
                .send(
                    "Network.getRequestPostData",
                    json!({"requestId": snapshot.cdp_id}),
                    COMMAND_TIMEOUT,
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
                    COMMAND_TIMEOUT,
                )
                .await
                .ok();
            result.and_then(|result| {
                let body = result["body"].as_str()?;
                if result["base64Encoded"] == true {
                    http::base64_decode(body)
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

/// Everything collected for one page; fed one protocol event at a time.
#[derive(Debug, Default)]
pub(crate) struct State {
    console: Console,
    network: Network,
}

impl State {
    fn main_frame(&mut self, frame: &Value, navigated: bool) {
        let url = format!(
            "{}{}",
            frame["url"].as_str().unwrap_or_default(),
            frame["urlFragment"].as_str().unwrap_or_default()
        );
        self.network.main_frame = frame["id"].as_str().unwrap_or_default().to_string();
        self.console.scripts.set_page_url(&url);
        if navigated {
            self.console.navigated();
            self.network.navigated();
        }
    }

    /// Records one event; returns what must still be read from the browser.
    pub(crate) fn dispatch(&mut self, method: &str, params: &Value) -> Vec<Pending> {
        match method {
            "Runtime.consoleAPICalled" => return self.console.api_called(params),
            "Runtime.exceptionThrown" => {
                return self.console.exception_thrown(&params["exceptionDetails"]);
            }
            "Log.entryAdded" => return self.console.log_entry(&params["entry"]),
            "Debugger.scriptParsed" => self.console.scripts.parsed(params),
            "Runtime.executionContextDestroyed" => {
                let id = params["executionContextId"].as_i64().unwrap_or_default();
                self.console.scripts.context_destroyed(id);
            }
            "Runtime.executionContextsCleared" => self.console.scripts.cleared(),
            "Page.frameNavigated"
                if params["frame"].is_object() && params["frame"].get("parentId").is_none() =>
            {
                self.main_frame(&params["frame"], true);
            }
            "Page.navigatedWithinDocument"
                if params["frameId"].as_str() == Some(&self.network.main_frame) =>
            {
                self.console
                    .scripts
                    .set_page_url(params["url"].as_str().unwrap_or_default());
                self.console.navigated();
                self.network.navigated();
            }
            _ if method.starts_with("Network.") => self.network.event(method, params),
            _ => {}
        }
        Vec::new()
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
                    .send("Debugger.resume", json!({}), COMMAND_TIMEOUT)
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

#[cfg(test)]
mod tests {
    use super::{Page, State};
    use serde_json::{Value, json};

    fn request(state: &mut State, id: &str, url: &str, kind: &str, frame: &str) {
        state.dispatch(
            "Network.requestWillBeSent",
            &json!({"requestId": id, "loaderId": if kind == "Document" { id } else { "L0" },
                    "frameId": frame, "type": kind,
                    "request": {"url": url, "method": "GET", "headers": {"User-Agent": "test"}}}),
        );
    }

    fn navigate(state: &mut State, frame: &str, parent: Option<&str>, url: &str) {
        let mut frame = json!({"id": frame, "url": url, "loaderId": "x"});
        if let Some(parent) = parent {
            frame["parentId"] = json!(parent);
        }
        state.dispatch("Page.frameNavigated", &json!({"frame": frame}));
    }

    fn network(state: &State, preserved: bool) -> Vec<String> {
        state.network.list(Page::default(), None, preserved).0
    }

    #[test]
    fn main_frame_navigations_split_buckets_and_ids_stay() {
        let mut state = State::default();
        navigate(&mut state, "F", None, "http://h/one");
        request(&mut state, "1", "http://h/one", "Document", "F");
        state.dispatch("Runtime.consoleAPICalled", &json!({"type": "log", "executionContextId": 1,
                                                          "args": [{"type": "string", "value": "one"}]}));
        request(&mut state, "2", "http://h/two", "Document", "F");
        navigate(&mut state, "F", None, "http://h/two");
        navigate(&mut state, "child", Some("F"), "http://h/frame");
        request(&mut state, "3", "http://h/two.js", "Script", "F");
        assert_eq!(
            network(&state, false)[2..],
            [
                "reqid=2 GET http://h/two [pending]",
                "reqid=3 GET http://h/two.js [pending]"
            ]
        );
        assert_eq!(network(&state, true).len(), 5);
        assert_eq!(
            state.console.list(Page::default(), None, false, false).0[1],
            "<no console messages found>"
        );
        assert_eq!(
            state.console.list(Page::default(), None, true, false).0[2],
            "msgid=1 [log] one (1 args)"
        );
        // A same-document navigation of the main frame splits too (puppeteer reports it as one).
        state.dispatch("Runtime.consoleAPICalled", &json!({"type": "log", "executionContextId": 2,
                                                          "args": [{"type": "string", "value": "two"}]}));
        state.dispatch(
            "Page.navigatedWithinDocument",
            &json!({"frameId": "F", "url": "http://h/two#x"}),
        );
        assert_eq!(network(&state, false).len(), 4);
        assert_eq!(
            state.console.list(Page::default(), None, false, false).0[1],
            "<no console messages found>"
        );
        assert_eq!(
            state.console.list(Page::default(), None, true, false).0[3],
            "msgid=2 [log] two (1 args)"
        );
        for round in 0..3 {
            request(
                &mut state,
                &format!("N{round}"),
                "http://h/next",
                "Document",
                "F",
            );
            navigate(&mut state, "F", None, "http://h/next");
        }
        assert_eq!(network(&state, true)[1], "Showing 1-3 of 3 (Page 1 of 1).");
        assert!(state.network.snapshot(3).is_err() && state.network.snapshot(4).is_ok());
        request(&mut state, "9", "http://h/four", "Other", "F");
        assert_eq!(
            network(&state, false)[2..],
            [
                "reqid=6 GET http://h/next [pending]",
                "reqid=7 GET http://h/four [pending]"
            ]
        );
    }

    #[test]
    fn odd_events_are_ignored() {
        let mut state = State::default();
        for method in [
            "Runtime.consoleAPICalled",
            "Runtime.exceptionThrown",
            "Log.entryAdded",
            "Network.responseReceived",
            "Network.loadingFailed",
            "Debugger.scriptParsed",
            "Page.frameNavigated",
            "Unknown.event",
        ] {
            state.dispatch(method, &Value::Null);
            state.dispatch(
                method,
                &json!({"requestId": 5, "frame": 1, "entry": [], "args": "x"}),
            );
        }
        let (lines, _) = state.console.list(Page::default(), None, true, true);
        assert!(lines.len() >= 2);
        assert!(
            state
                .console
                .detail(1)
                .map(|(lines, _)| lines.len())
                .unwrap_or(0)
                >= 2
        );
    }
}
