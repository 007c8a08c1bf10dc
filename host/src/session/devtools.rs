//! DevTools windows of the session's pages (1.11.0's `open_devtools`): opened and looked up by
//! the browser (`Target.openDevTools`, `Target.getDevToolsTarget`); the window is a target of
//! its own that is never adopted as one of the session's pages (`devtools://`).

use super::SessionState;
use crate::browser::cdp::{cdp, timeouts};
use serde_json::json;

impl SessionState {
    /// Opens a DevTools window for page `id` (or finds the one already open).
    pub async fn open_devtools(&self, id: u32) -> Result<(), String> {
        let target = self.page(id)?.cdp().target_id().as_ref().to_string();
        let browser = self.browser()?;
        let command = cdp("Target.openDevTools", json!({ "targetId": target }));
        match tokio::time::timeout(timeouts::COMMAND, browser.execute(command)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err("the browser did not answer in time".into()),
        }
    }

    /// Whether a DevTools window is open for page `id`; a browser too old to say has none.
    pub async fn devtools_open(&self, id: u32) -> bool {
        let Ok(page) = self.page(id) else {
            return false;
        };
        let target = page.cdp().target_id().as_ref().to_string();
        let Ok(browser) = self.browser() else {
            return false;
        };
        let command = cdp("Target.getDevToolsTarget", json!({ "targetId": target }));
        match tokio::time::timeout(timeouts::PROBE, browser.execute(command)).await {
            Ok(Ok(answer)) => answer.result["targetId"]
                .as_str()
                .is_some_and(|id| !id.is_empty()),
            _ => false,
        }
    }
}
