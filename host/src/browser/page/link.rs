//! A page's link to Chromium: its DevTools session, the thin connection, its open dialog, its
//! emulation and its tenant's URL policy. It is owned and cheap to clone, so a call can take it
//! out of the session and wait on Chromium (a load, a script, a capture) while the session
//! serves calls on other pages (`--experimentalParallelPages`); what the page remembers between
//! calls (uids, the last snapshot, features) stays on `McpPage`.

use super::DialogInfo;
use super::emulation::Emulation;
use crate::browser::cdp::raw::RawLink;
use crate::browser::cdp::{cdp, send, timeouts};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

#[derive(Clone)]
pub struct PageLink {
    pub(super) page: chromiumoxide::Page,
    pub(super) dialog: watch::Receiver<Option<DialogInfo>>,
    pub(super) emulation: Emulation,
    /// The browser's thin CDP connection, for snapshots (see `cdp::raw`).
    pub(super) raw: Arc<RawLink>,
    /// A tenant's URL policy, checked on every navigation to a URL (`None`: stdio's user).
    pub url_policy: Option<crate::policy::tenant_urls::UrlPolicy>,
    /// `--blockedUrlPattern`/`--allowedUrlPattern`: a navigation to a URL they refuse is
    /// refused before it starts, as Puppeteer's `goto` does (the browser refuses the rest).
    pub url_patterns: Option<Arc<crate::policy::url_patterns::UrlPatterns>>,
}

impl PageLink {
    /// The page's DevTools session, for the commands of features.
    pub fn cdp(&self) -> &chromiumoxide::Page {
        &self.page
    }

    /// The browser's thin connection (large replies, the page's execution contexts).
    pub fn raw(&self) -> &Arc<RawLink> {
        &self.raw
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

    /// The main frame's URL and document (its loaderId): a navigation or a reload changes
    /// them, which ends what was valid for the page as it was (an answer's cursor).
    pub async fn document(&self) -> Result<(String, String), String> {
        let tree = send(
            &self.page,
            cdp("Page.getFrameTree", json!({})),
            timeouts::COMMAND,
        )
        .await
        .map_err(|error| error.to_string())?;
        let frame = &tree["frameTree"]["frame"];
        let text = |key: &str| frame[key].as_str().unwrap_or_default().to_string();
        Ok((text("url"), text("loaderId")))
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
