//! One page of a session: its id, the open dialog, its snapshot uids, and the actions tools
//! ask for (navigate, click, evaluate, snapshot).

use super::cdp::{cdp, send};
use super::settle;
use crate::snapshot::{AxNode, AxTree, Snapshot, UidMap};
use chromiumoxide::cdp::browser_protocol::page::{
    EventJavascriptDialogClosed, EventJavascriptDialogOpening, EventLoadEventFired,
};
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;
use tokio::sync::watch;

/// Default wait for one protocol answer.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);
/// The reference's default navigation timeout.
pub const NAVIGATION_TIMEOUT: Duration = Duration::from_secs(10);
/// Nested iframes followed by a snapshot.
const MAX_FRAME_DEPTH: usize = 8;

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
    dialog: watch::Receiver<Option<DialogInfo>>,
    uids: UidMap,
    snapshot: Option<Snapshot>,
    listener: tokio::task::JoinHandle<()>,
}

impl Drop for McpPage {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

impl McpPage {
    /// Starts tracking a page: its dialogs are watched from now on.
    pub async fn attach(
        id: u32,
        page: chromiumoxide::Page,
        isolated_context: Option<String>,
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
        Ok(McpPage {
            id,
            page,
            isolated_context,
            dialog: receiver,
            uids: UidMap::default(),
            snapshot: None,
            listener,
        })
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
        let timeout = timeout.unwrap_or(NAVIGATION_TIMEOUT);
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

    /// Takes a fresh snapshot (descending into same-process iframes, as the reference's
    /// `includeIframes` does); later uid lookups use it.
    pub async fn take_snapshot(
        &mut self,
        snapshot_id: u64,
        verbose: bool,
    ) -> Result<&Snapshot, String> {
        let frames = send(
            &self.page,
            cdp("Page.getFrameTree", json!({})),
            COMMAND_TIMEOUT,
        )
        .await
        .map_err(|error| error.to_string())?;
        let mut loaders = HashMap::new();
        collect_loaders(&frames["frameTree"], &mut loaders);
        let main_frame = frames["frameTree"]["frame"]["id"]
            .as_str()
            .unwrap_or_default();
        let loader_id = loaders.get(main_frame).cloned().unwrap_or_default();
        let root = self
            .frame_snapshot(None, !verbose, &loaders, 0)
            .await?
            .ok_or("Failed to create accessibility snapshot")?;
        let snapshot = Snapshot::build(root, &loader_id, snapshot_id, verbose, &mut self.uids);
        Ok(self.snapshot.insert(snapshot))
    }

    /// One frame's serialized tree, with its child frames attached under their `Iframe` nodes.
    fn frame_snapshot<'a>(
        &'a self,
        frame_id: Option<String>,
        interesting_only: bool,
        loaders: &'a HashMap<String, String>,
        depth: usize,
    ) -> futures::future::BoxFuture<'a, Result<Option<AxNode>, String>> {
        Box::pin(async move {
            let params = match &frame_id {
                Some(id) => json!({ "frameId": id }),
                None => json!({}),
            };
            let tree = send(
                &self.page,
                cdp("Accessibility.getFullAXTree", params),
                COMMAND_TIMEOUT,
            )
            .await
            .map_err(|error| error.to_string())?;
            let nodes = tree["nodes"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            let Some(mut tree) = AxTree::from_cdp(nodes) else {
                return Ok(None);
            };
            if depth < MAX_FRAME_DEPTH {
                for backend_node_id in tree.iframe_backend_node_ids() {
                    let described = send(
                        &self.page,
                        cdp(
                            "DOM.describeNode",
                            json!({ "backendNodeId": backend_node_id }),
                        ),
                        COMMAND_TIMEOUT,
                    )
                    .await;
                    let Some(child) = described
                        .ok()
                        .and_then(|node| node["node"]["frameId"].as_str().map(String::from))
                    else {
                        continue;
                    };
                    // A cross-process frame has its own session; it stays a bare Iframe node.
                    if let Ok(Some(mut frame)) = self
                        .frame_snapshot(Some(child.clone()), interesting_only, loaders, depth + 1)
                        .await
                    {
                        frame.loader_id = loaders.get(&child).cloned();
                        tree.attach_iframe(backend_node_id, frame);
                    }
                }
            }
            Ok(tree.serialize(interesting_only))
        })
    }

    /// The DOM node behind a uid of the latest snapshot, with the reference's messages.
    async fn resolve_uid(&self, uid: &str) -> Result<String, String> {
        let snapshot = self.snapshot.as_ref().ok_or_else(|| {
            format!(
                "No snapshot found for page {}. Use take_snapshot to capture one.",
                self.id
            )
        })?;
        let backend_node_id = snapshot
            .find(uid)
            .and_then(|node| node.backend_node_id)
            .ok_or_else(|| format!("Element uid \"{uid}\" not found on page {}.", self.id))?;
        let resolved = send(
            &self.page,
            cdp(
                "DOM.resolveNode",
                json!({ "backendNodeId": backend_node_id }),
            ),
            COMMAND_TIMEOUT,
        )
        .await
        .map_err(|_| format!("Element with uid {uid} no longer exists on the page."))?;
        resolved["object"]["objectId"]
            .as_str()
            .map(String::from)
            .ok_or_else(|| format!("Element with uid {uid} no longer exists on the page."))
    }

    /// Clicks the element's centre `count` times, then waits for the page to settle. Returns the
    /// URL it navigated to, if it did.
    pub async fn click(&self, uid: &str, count: u32) -> Result<Option<String>, String> {
        let object_id = self.resolve_uid(uid).await?;
        let interaction_failed = || {
            format!(
                "Failed to interact with the element with uid {uid}. The element did not become interactive within the configured timeout."
            )
        };
        let (_, navigated) = settle::after_action(self, async {
            let (x, y) = self.clickable_point(&object_id).await.map_err(|error| {
                tracing::debug!(%error, "element not clickable");
                interaction_failed()
            })?;
            self.mouse_clicks(x, y, count).await.map_err(|error| {
                tracing::debug!(%error, "click failed");
                interaction_failed()
            })
        })
        .await?;
        Ok(navigated)
    }

    async fn clickable_point(&self, object_id: &str) -> Result<(f64, f64), String> {
        let scroll = cdp(
            "DOM.scrollIntoViewIfNeeded",
            json!({ "objectId": object_id }),
        );
        send(&self.page, scroll, COMMAND_TIMEOUT)
            .await
            .map_err(|error| error.to_string())?;
        let quads = send(
            &self.page,
            cdp("DOM.getContentQuads", json!({ "objectId": object_id })),
            COMMAND_TIMEOUT,
        )
        .await
        .map_err(|error| error.to_string())?;
        let quad: Vec<f64> = quads["quads"][0]
            .as_array()
            .map(|points| points.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        if quad.len() != 8 {
            return Err("the element has no visible box".into());
        }
        let x = (quad[0] + quad[2] + quad[4] + quad[6]) / 4.0;
        let y = (quad[1] + quad[3] + quad[5] + quad[7]) / 4.0;
        Ok((x, y))
    }

    async fn mouse_clicks(&self, x: f64, y: f64, count: u32) -> Result<(), String> {
        let mouse = |kind: &str, click_count: u32| {
            cdp(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": click_count }),
            )
        };
        let moved = cdp(
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseMoved", "x": x, "y": y }),
        );
        send(&self.page, moved, COMMAND_TIMEOUT)
            .await
            .map_err(|error| error.to_string())?;
        for click_count in 1..=count.max(1) {
            for kind in ["mousePressed", "mouseReleased"] {
                send(&self.page, mouse(kind, click_count), COMMAND_TIMEOUT)
                    .await
                    .map_err(|error| error.to_string())?;
            }
        }
        Ok(())
    }

    /// Runs a function declaration with elements (by uid) as arguments and returns the JSON text
    /// of its awaited result, then waits for the page to settle.
    pub async fn evaluate(
        &self,
        function: &str,
        arg_uids: &[String],
    ) -> Result<(String, Option<String>), String> {
        let mut object_ids = Vec::with_capacity(arg_uids.len());
        for uid in arg_uids {
            object_ids.push(self.resolve_uid(uid).await?);
        }
        let wrapper = format!(
            "async function(...args) {{ return JSON.stringify(await ({function})(...args)); }}"
        );
        let params = match object_ids.first() {
            Some(first) => json!({
                "functionDeclaration": wrapper,
                "objectId": first,
                "arguments": object_ids.iter().map(|id| json!({ "objectId": id })).collect::<Vec<_>>(),
                "awaitPromise": true,
                "returnByValue": true,
            }),
            None => {
                let global = send(
                    &self.page,
                    cdp("Runtime.evaluate", json!({ "expression": "globalThis" })),
                    COMMAND_TIMEOUT,
                )
                .await
                .map_err(|error| error.to_string())?;
                json!({
                    "functionDeclaration": wrapper,
                    "objectId": global["result"]["objectId"],
                    "awaitPromise": true,
                    "returnByValue": true,
                })
            }
        };
        let evaluation = async {
            send(
                &self.page,
                cdp("Runtime.callFunctionOn", params),
                Duration::from_secs(60),
            )
            .await
            .map_err(|error| error.to_string())
        };
        let (result, navigated) =
            settle::after_action(self, settle::accepting_dialogs(self, evaluation)).await?;
        let result = result.ok_or("A dialog opened during the evaluation and is still open.")?;
        if let Some(exception) = result.get("exceptionDetails") {
            return Err(exception_message(exception));
        }
        let text = match &result["result"]["value"] {
            Value::String(json) => json.clone(),
            _ => "undefined".to_string(),
        };
        Ok((text, navigated))
    }
}

/// frame id -> loaderId for the whole frame tree.
fn collect_loaders(tree: &Value, loaders: &mut HashMap<String, String>) {
    if let (Some(id), Some(loader)) = (
        tree["frame"]["id"].as_str(),
        tree["frame"]["loaderId"].as_str(),
    ) {
        loaders.insert(id.to_string(), loader.to_string());
    }
    for child in tree["childFrames"].as_array().into_iter().flatten() {
        collect_loaders(child, loaders);
    }
}

/// The message of a thrown error, as Puppeteer reports it (`x is not defined`).
fn exception_message(details: &Value) -> String {
    let description = details["exception"]["description"]
        .as_str()
        .or_else(|| details["text"].as_str())
        .unwrap_or("Evaluation failed");
    let first_line = description.lines().next().unwrap_or(description);
    match first_line.split_once(": ") {
        Some((name, message)) if name.ends_with("Error") => message.to_string(),
        _ => first_line.to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exception_messages_drop_the_error_name() {
        let details = json!({"exception": {"description": "ReferenceError: nope is not defined\n    at <anonymous>:1:1"}});
        assert_eq!(exception_message(&details), "nope is not defined");
        let details = json!({"exception": {"description": "boom"}, "text": "Uncaught"});
        assert_eq!(exception_message(&details), "boom");
        let details = json!({"text": "Uncaught"});
        assert_eq!(exception_message(&details), "Uncaught");
    }
}
