//! The page model: one page of a session, with its id, the open dialog, its last snapshot
//! and uids, its emulation state, and a slot per feature (`browser::features`) that the
//! feature's own type fills. Its fields are private to this folder: navigation, actions,
//! settling, input, screenshots, emulation and snapshots are the page's own files.

pub mod actions;
pub mod emulation;
pub mod input;
mod link;
mod navigation;
mod prepared;
pub mod screenshot;
pub mod settle;
mod slots;
pub mod snapshot;
pub mod tab;

pub use link::PageLink;
pub use prepared::Action;
pub use slots::FeatureSlots;

use crate::browser::cdp::raw::RawLink;
use crate::browser::cdp::timeouts;
use crate::snapshot::{Snapshot, UidMap};
use chromiumoxide::cdp::browser_protocol::page::{
    EventJavascriptDialogClosed, EventJavascriptDialogOpening,
};
use emulation::Emulation;
use futures::StreamExt;
use std::collections::HashMap;
use std::sync::Arc;
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

/// A page of the session: its link to Chromium (which derefs to it, and which a call may take
/// along while it waits on the page) and what the session remembers of it between calls.
pub struct McpPage {
    pub id: u32,
    pub isolated_context: Option<String>,
    link: PageLink,
    uids: UidMap,
    snapshot: Option<Snapshot>,
    /// loaderId of a cross-process frame in the last snapshot -> its target id, to reach
    /// that frame's nodes.
    frame_targets: HashMap<String, snapshot::FrameTarget>,
    /// Each feature's state on this page (collectors, a running trace, a recording...).
    features: FeatureSlots,
    listener: tokio::task::JoinHandle<()>,
}

impl std::ops::Deref for McpPage {
    type Target = PageLink;

    fn deref(&self) -> &PageLink {
        &self.link
    }
}

impl std::ops::DerefMut for McpPage {
    fn deref_mut(&mut self) -> &mut PageLink {
        &mut self.link
    }
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
            isolated_context,
            link: PageLink {
                page,
                dialog: receiver,
                emulation: Emulation::default(),
                raw,
                url_policy: None,
                url_patterns: None,
            },
            uids: UidMap::default(),
            snapshot: None,
            frame_targets: HashMap::new(),
            features: FeatureSlots::default(),
            listener,
        })
    }

    /// Opens the thin connection and this page's session on it in the background (see
    /// [`warm_raw_session`]); called once the page's features are attached.
    pub fn warm_raw_session(&self) {
        warm_raw_session(&self.raw, &self.page);
    }

    /// The page's link, to wait on Chromium without the session (see [`PageLink`]).
    pub fn link(&self) -> PageLink {
        self.link.clone()
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
