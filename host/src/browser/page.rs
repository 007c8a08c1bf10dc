//! One page of a session: its id, the open dialog, its snapshot uids, and the actions tools
//! ask for (navigate, click, evaluate, snapshot).

use super::cdp::raw::RawLink;
use super::cdp::{cdp, send};
use super::collectors::Collectors;
use super::emulation::Emulation;
use super::trace::{Recording, TraceSummary};
use crate::snapshot::{Snapshot, UidMap};
use chromiumoxide::cdp::browser_protocol::page::{
    EventFrameNavigated, EventJavascriptDialogClosed, EventJavascriptDialogOpening,
    EventLoadEventFired, NavigationType,
};
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Default wait for one protocol answer.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq)]
pub struct DialogInfo {
    pub kind: String,
    pub message: String,
    pub default_value: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Navigated {
    pub url: String,
    pub before_unload_handled: bool,
}

pub enum Target {
    Url(String),
    Back,
    Forward,
    Reload { ignore_cache: bool },
}

pub struct McpPage {
    pub id: u32,
    pub page: chromiumoxide::Page,
    pub isolated_context: Option<String>,
    pub(super) dialog: watch::Receiver<Option<DialogInfo>>,
    pub(super) uids: UidMap,
    pub(super) snapshot: Option<Snapshot>,
    pub(super) emulation: Emulation,
    pub(super) collectors: Collectors,
    /// The running performance trace, and the summary of the last one.
    pub(super) trace: Option<Recording>,
    pub(super) last_trace: Option<TraceSummary>,
    /// The browser's thin CDP connection, for snapshots (see `cdp::raw`).
    pub(super) raw: Arc<RawLink>,
    /// loaderId of a cross-process frame in the last snapshot -> its target id, to reach
    /// that frame's nodes.
    pub(super) frame_targets: HashMap<String, super::page_snapshot::FrameTarget>,
    /// The running screencast recording.
    pub(super) screencast: Option<super::screencast::Recording>,
    /// A tenant's URL policy, checked on every navigation to a URL (`None`: stdio's user).
    pub url_policy: Option<crate::policy::tenant_urls::UrlPolicy>,
    listener: tokio::task::JoinHandle<()>,
}

impl Drop for McpPage {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

impl McpPage {
    /// Starts tracking a page: its dialogs are watched from now on. Its id is 0 until the
    /// session numbers it, which it does only once the page is tracked (no holes in the ids).
    pub async fn attach(
        page: chromiumoxide::Page,
        isolated_context: Option<String>,
        redact_network_headers: bool,
        raw: Arc<RawLink>,
    ) -> Result<McpPage, String> {
        let opened = page
            .event_listener::<EventJavascriptDialogOpening>()
            .await
            .map_err(|error| error.to_string())?;
        let closed = page
            .event_listener::<EventJavascriptDialogClosed>()
            .await
            .map_err(|error| error.to_string())?;
        let (sender, receiver) = watch::channel(None);
        let listener = tokio::spawn(watch_dialogs(opened, closed, sender));
        let collectors = Collectors::attach(&page).await?;
        collectors.set_redact_network_headers(redact_network_headers);
        warm_raw_session(&raw, &page);
        Ok(McpPage {
            id: 0,
            page,
            isolated_context,
            dialog: receiver,
            uids: UidMap::default(),
            snapshot: None,
            emulation: Emulation::default(),
            collectors,
            trace: None,
            last_trace: None,
            raw,
            frame_targets: HashMap::new(),
            screencast: None,
            url_policy: None,
            listener,
        })
    }

    pub fn emulation(&self) -> &Emulation {
        &self.emulation
    }

    pub fn collectors(&self) -> &Collectors {
        &self.collectors
    }

    /// The default wait for an action, scaled by CPU emulation.
    pub fn action_timeout(&self) -> Duration {
        self.emulation.action_timeout()
    }

    pub fn dialog(&self) -> Option<DialogInfo> {
        self.dialog.borrow().clone()
    }

    pub(super) fn dialog_watch(&self) -> watch::Receiver<Option<DialogInfo>> {
        self.dialog.clone()
    }

    /// Waits until no dialog is open (after handling one), at most `limit`.
    pub async fn wait_dialog_closed(&self, limit: Duration) {
        let mut dialogs = self.dialog_watch();
        let _closed = tokio::time::timeout(limit, dialogs.wait_for(Option::is_none)).await;
    }

    /// The reference's `throwIfDialogOpen` text.
    pub fn ensure_no_dialog(&self) -> Result<(), String> {
        match self.dialog() {
            Some(dialog) => Err(format!(
                "A dialog is open ({}: {}).",
                dialog.kind, dialog.message
            )),
            None => Ok(()),
        }
    }

    pub async fn url(&self) -> String {
        self.page.url().await.ok().flatten().unwrap_or_default()
    }

    /// `document.title`, or empty when the page does not answer within `limit`.
    pub async fn title(&self, limit: Duration) -> String {
        let answer = send(
            &self.page,
            cdp(
                "Runtime.evaluate",
                json!({ "expression": "document.title", "returnByValue": true }),
            ),
            limit,
        )
        .await;
        match answer {
            Ok(value) => value["result"]["value"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            Err(_) => String::new(),
        }
    }

    pub async fn handle_dialog(
        &self,
        accept: bool,
        prompt_text: Option<&str>,
    ) -> Result<(), String> {
        let mut params = json!({ "accept": accept });
        if let Some(text) = prompt_text {
            params["promptText"] = Value::from(text);
        }
        send(
            &self.page,
            cdp("Page.handleJavaScriptDialog", params),
            COMMAND_TIMEOUT,
        )
        .await
        .map(|_| ())
        .map_err(|error| error.to_string())
    }

    /// Navigates and waits for the load event; a `beforeunload` dialog on the way is accepted or
    /// dismissed as asked.
    pub async fn navigate(
        &self,
        target: Target,
        timeout: Option<Duration>,
        accept_before_unload: bool,
        init_script: Option<&str>,
    ) -> Result<Navigated, String> {
        let timeout = timeout.unwrap_or_else(|| self.emulation.navigation_timeout());
        // A tenant's URL is parsed and checked here, and the browser gets the checked text.
        let target = match (target, self.url_policy) {
            (Target::Url(url), Some(policy)) => Target::Url(
                policy
                    .check(&url)
                    .map_err(|refusal| refusal.to_string())?
                    .to_string(),
            ),
            (target, _) => target,
        };
        if init_script.is_some() && self.url_policy.is_some_and(|policy| !policy.script) {
            return Err(
                "initScript runs script in the page, and this tenant may not run script (evaluate_script is not allowed for it).".into(),
            );
        }
        let script_id = match init_script {
            Some(source) => send(
                &self.page,
                cdp(
                    "Page.addScriptToEvaluateOnNewDocument",
                    json!({ "source": source }),
                ),
                COMMAND_TIMEOUT,
            )
            .await
            .ok()
            .and_then(|value| value["identifier"].as_str().map(String::from)),
            None => None,
        };
        let outcome = self
            .navigate_and_wait(target, timeout, accept_before_unload)
            .await;
        if let Some(identifier) = script_id {
            let removed = send(
                &self.page,
                cdp(
                    "Page.removeScriptToEvaluateOnNewDocument",
                    json!({ "identifier": identifier }),
                ),
                COMMAND_TIMEOUT,
            )
            .await;
            if let Err(error) = removed {
                tracing::debug!(%error, "failed to remove init script");
            }
        }
        let before_unload_handled = outcome?;
        Ok(Navigated {
            url: self.url().await,
            before_unload_handled,
        })
    }

    async fn navigate_and_wait(
        &self,
        target: Target,
        timeout: Duration,
        accept_before_unload: bool,
    ) -> Result<bool, String> {
        let mut loads = self
            .page
            .event_listener::<EventLoadEventFired>()
            .await
            .map_err(|error| error.to_string())?;
        // A page restored from the back/forward cache fires no load event.
        let mut restores = self
            .page
            .event_listener::<EventFrameNavigated>()
            .await
            .map_err(|error| error.to_string())?;
        let mut dialogs = self.dialog_watch();
        let mut before_unload_handled = false;
        let start = async {
            let started = match target {
                Target::Url(url) => {
                    let result = send(
                        &self.page,
                        cdp("Page.navigate", json!({ "url": url })),
                        timeout,
                    )
                    .await
                    .map_err(|error| error.to_string())?;
                    if let Some(error) =
                        result["errorText"].as_str().filter(|text| !text.is_empty())
                    {
                        return Err(format!("{error} at {url}"));
                    }
                    // A same-document navigation has no loader and no load event.
                    result.get("loaderId").is_some_and(|id| !id.is_null())
                }
                Target::Back | Target::Forward => {
                    let offset = if matches!(target, Target::Back) {
                        -1
                    } else {
                        1
                    };
                    self.go_in_history(offset, timeout).await?
                }
                Target::Reload { ignore_cache } => {
                    send(
                        &self.page,
                        cdp("Page.reload", json!({ "ignoreCache": ignore_cache })),
                        timeout,
                    )
                    .await
                    .map_err(|error| error.to_string())?;
                    true
                }
            };
            Ok::<bool, String>(started)
        };
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(start, deadline);
        let mut waiting_for_load = false;
        loop {
            tokio::select! {
                started = &mut start, if !waiting_for_load => {
                    if !started? {
                        return Ok(before_unload_handled);
                    }
                    waiting_for_load = true;
                }
                _ = loads.next(), if waiting_for_load => return Ok(before_unload_handled),
                Some(navigated) = restores.next(), if waiting_for_load => {
                    let main = navigated.frame.parent_id.is_none();
                    if main && navigated.r#type == NavigationType::BackForwardCacheRestore {
                        return Ok(before_unload_handled);
                    }
                }
                changed = dialogs.changed() => {
                    if changed.is_err() {
                        return Err("The page was closed.".into());
                    }
                    let dialog = dialogs.borrow_and_update().clone();
                    match dialog {
                        Some(dialog) if dialog.kind == "beforeunload" => {
                            self.handle_dialog(accept_before_unload, None).await?;
                            before_unload_handled = true;
                            if !accept_before_unload {
                                return Ok(true);
                            }
                        }
                        // Another dialog stalls the page; report it rather than time out.
                        Some(_) => return Ok(before_unload_handled),
                        None => {}
                    }
                }
                _ = &mut deadline => {
                    return Err(format!("Navigation timeout of {} ms exceeded", timeout.as_millis()));
                }
            }
        }
    }

    /// Moves `offset` entries in the history; false when there is no such entry.
    async fn go_in_history(&self, offset: i64, timeout: Duration) -> Result<bool, String> {
        let history = send(
            &self.page,
            cdp("Page.getNavigationHistory", json!({})),
            timeout,
        )
        .await
        .map_err(|error| error.to_string())?;
        let current = history["currentIndex"].as_i64().unwrap_or(0);
        let Some(entry) = history["entries"]
            .as_array()
            .and_then(|entries| entries.get(usize::try_from(current + offset).ok()?))
        else {
            return Ok(false);
        };
        send(
            &self.page,
            cdp(
                "Page.navigateToHistoryEntry",
                json!({ "entryId": entry["id"] }),
            ),
            timeout,
        )
        .await
        .map_err(|error| error.to_string())?;
        Ok(true)
    }
}

async fn watch_dialogs(
    mut opened: chromiumoxide::listeners::EventStream<EventJavascriptDialogOpening>,
    mut closed: chromiumoxide::listeners::EventStream<EventJavascriptDialogClosed>,
    sender: watch::Sender<Option<DialogInfo>>,
) {
    loop {
        tokio::select! {
            event = opened.next() => match event {
                Some(event) => {
                    let kind = event.r#type.as_ref().to_string();
                    let default_value = (kind == "prompt").then(|| event.default_prompt.clone().unwrap_or_default());
                    sender.send_replace(Some(DialogInfo { kind, message: event.message.clone(), default_value }));
                }
                None => return,
            },
            event = closed.next() => match event {
                Some(_) => { sender.send_replace(None); }
                None => return,
            },
        }
    }
}

/// Opens the thin connection and this page's session on it in the background: snapshots and
/// screenshots go through it, and connecting (a WebSocket handshake, then an attach) on the
/// first of them cost that call 15-20 ms. The page's workers and cross-process iframes are
/// attached to that session from now on, so the session watch can measure and stop them and
/// knows when each started.
fn warm_raw_session(raw: &Arc<RawLink>, page: &chromiumoxide::Page) {
    let (raw, target) = (raw.clone(), page.target_id().as_ref().to_string());
    tokio::spawn(async move {
        let warmed = match raw.client().await {
            Ok(client) => match client.session(&target, COMMAND_TIMEOUT).await {
                Ok(session) => client.children(&session, COMMAND_TIMEOUT).await.map(drop),
                Err(error) => Err(error),
            },
            Err(error) => Err(error),
        };
        if let Err(error) = warmed {
            tracing::debug!(%error, "could not open the page's session on the thin connection");
        }
    });
}
