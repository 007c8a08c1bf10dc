//! The page model: one page of a session, with its id, the open dialog, its last snapshot
//! and uids, its emulation state, and a slot per feature (`browser::features`) that the
//! feature's own type fills. Its fields are private to this folder: navigation, actions,
//! settling, input, screenshots, emulation and snapshots are the page's own files.

pub mod actions;
pub mod emulation;
pub mod input;
mod navigation;
pub mod screenshot;
pub mod settle;
mod slots;
pub mod snapshot;
pub mod tab;
pub mod vision;

pub use slots::FeatureSlots;

use crate::browser::cdp::raw::RawLink;
use crate::browser::cdp::{cdp, send, timeouts};
use crate::snapshot::{Snapshot, UidMap};
use chromiumoxide::cdp::browser_protocol::page::{
    EventJavascriptDialogClosed, EventJavascriptDialogOpening,
};
use emulation::Emulation;
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

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
    page: chromiumoxide::Page,
    pub isolated_context: Option<String>,
    dialog: watch::Receiver<Option<DialogInfo>>,
    uids: UidMap,
    snapshot: Option<Snapshot>,
    emulation: Emulation,
    /// The browser's thin CDP connection, for snapshots (see `cdp::raw`).
    raw: Arc<RawLink>,
    /// loaderId of a cross-process frame in the last snapshot -> its target id, to reach
    /// that frame's nodes.
    frame_targets: HashMap<String, snapshot::FrameTarget>,
    /// Each feature's state on this page (collectors, a running trace, a recording...).
    features: FeatureSlots,
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
    /// Features attach their state afterwards (`browser::features::attach`).
    pub async fn attach(
        page: chromiumoxide::Page,
        isolated_context: Option<String>,
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
        Ok(McpPage {
            id: 0,
            page,
            isolated_context,
            dialog: receiver,
            uids: UidMap::default(),
            snapshot: None,
            emulation: Emulation::default(),
            raw,
            frame_targets: HashMap::new(),
            features: FeatureSlots::default(),
            url_policy: None,
            listener,
        })
    }

    /// Opens the thin connection and this page's session on it in the background (see
    /// [`warm_raw_session`]); called once the page's features are attached.
    pub fn warm_raw_session(&self) {
        warm_raw_session(&self.raw, &self.page);
    }

    /// The page's DevTools session, for the commands of features.
    pub fn cdp(&self) -> &chromiumoxide::Page {
        &self.page
    }

    /// The browser's thin connection (large replies, the page's execution contexts).
    pub fn raw(&self) -> &Arc<RawLink> {
        &self.raw
    }

    /// The last snapshot taken of this page, if any.
    pub fn last_snapshot(&self) -> Option<&Snapshot> {
        self.snapshot.as_ref()
    }

    pub fn features(&self) -> &FeatureSlots {
        &self.features
    }

    pub fn features_mut(&mut self) -> &mut FeatureSlots {
        &mut self.features
    }

    pub fn emulation(&self) -> &Emulation {
        &self.emulation
    }

    /// The default wait for an action, scaled by CPU emulation.
    pub fn action_timeout(&self) -> Duration {
        self.emulation.action_timeout()
    }

    pub fn dialog(&self) -> Option<DialogInfo> {
        self.dialog.borrow().clone()
    }

    pub fn dialog_watch(&self) -> watch::Receiver<Option<DialogInfo>> {
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
            timeouts::COMMAND,
        )
        .await
        .map(|_| ())
        .map_err(|error| error.to_string())
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
            Ok(client) => match client.session(&target, timeouts::COMMAND).await {
                Ok(session) => client.children(&session, timeouts::COMMAND).await.map(drop),
                Err(error) => Err(error),
            },
            Err(error) => Err(error),
        };
        if let Err(error) = warmed {
            tracing::debug!(%error, "could not open the page's session on the thin connection");
        }
    });
}
