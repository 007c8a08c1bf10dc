//! Waiting for a page to settle after an action: a navigation the action caused, then a quiet
//! DOM. The navigation window and the DOM-quiet wait run at the same time, so a click that
//! changes nothing costs one quiet period (100 ms), not the reference's two.

use super::cdp::{cdp, send};
use super::page::{McpPage, NAVIGATION_TIMEOUT};
use chromiumoxide::cdp::browser_protocol::page::{EventFrameStartedLoading, EventLoadEventFired};
use futures::StreamExt;
use serde_json::json;
use std::future::Future;
use std::time::Duration;

/// How long after an action a navigation may still start.
const NAVIGATION_WINDOW: Duration = Duration::from_millis(100);
/// Resolves once the DOM had no mutation for 100 ms, or after 3 s.
const DOM_QUIET_SCRIPT: &str = r#"new Promise(resolve => {
  let timer;
  const done = () => { observer.disconnect(); clearTimeout(cap); clearTimeout(timer); resolve(true); };
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, 100); });
  observer.observe(document, {childList: true, subtree: true, attributes: true, characterData: true});
  timer = setTimeout(done, 100);
  const cap = setTimeout(done, 3000);
})"#;

/// Runs `action`, then waits for what it caused. Returns the action's value (none when a dialog
/// it opened stalled the page) and the URL the page navigated to, if it changed.
pub async fn after_action<T>(
    page: &McpPage,
    action: impl Future<Output = Result<T, String>>,
) -> Result<(Option<T>, Option<String>), String> {
    let url_before = page.url().await;
    let main_frame = page.page.mainframe().await.ok().flatten();
    let mut started_loading = page
        .page
        .event_listener::<EventFrameStartedLoading>()
        .await
        .map_err(|error| error.to_string())?;
    let mut loads = page
        .page
        .event_listener::<EventLoadEventFired>()
        .await
        .map_err(|error| error.to_string())?;
    let mut dialogs = page.dialog_watch();

    let value = tokio::select! {
        result = action => Some(result?),
        _ = dialogs.wait_for(Option::is_some) => None,
    };
    if value.is_some() && page.dialog().is_none() {
        let navigation_started = async {
            while let Some(event) = started_loading.next().await {
                if main_frame
                    .as_ref()
                    .is_none_or(|frame| *frame == event.frame_id)
                {
                    return true;
                }
            }
            false
        };
        let quiet = dom_quiet(page);
        tokio::pin!(quiet);
        let (started, quiet_done) = tokio::select! {
            started = tokio::time::timeout(NAVIGATION_WINDOW, navigation_started) => (started.unwrap_or(false), false),
            _ = &mut quiet => (false, true),
        };
        if started {
            let mut dialogs = page.dialog_watch();
            tokio::select! {
                _ = tokio::time::timeout(NAVIGATION_TIMEOUT, loads.next()) => {}
                _ = dialogs.wait_for(Option::is_some) => {}
            }
            if page.dialog().is_none() {
                dom_quiet(page).await;
            }
        } else if !quiet_done {
            quiet.await;
        }
    }
    let url_after = page.url().await;
    let navigated = (url_after != url_before).then_some(url_after);
    Ok((value, navigated))
}

/// Waits for a quiet DOM; a dialog or a navigation ends the wait early.
async fn dom_quiet(page: &McpPage) {
    let mut dialogs = page.dialog_watch();
    let wait = send(
        &page.page,
        cdp(
            "Runtime.evaluate",
            json!({ "expression": DOM_QUIET_SCRIPT, "awaitPromise": true }),
        ),
        Duration::from_secs(4),
    );
    tokio::select! {
        _ = wait => {}
        _ = dialogs.wait_for(Option::is_some) => {}
    }
}

/// Runs `work`, handling any dialog that opens meanwhile as `action` says (`accept`, the
/// default, `dismiss`, or a prompt text to accept with), so the work can finish.
pub async fn handling_dialogs<T>(
    page: &McpPage,
    action: Option<&str>,
    work: impl Future<Output = T>,
) -> T {
    let (accept, prompt_text) = match action {
        None | Some("accept") => (true, None),
        Some("dismiss") => (false, None),
        Some(text) => (true, Some(text)),
    };
    let mut dialogs = page.dialog_watch();
    tokio::pin!(work);
    loop {
        let opened = tokio::select! {
            value = &mut work => return value,
            changed = dialogs.wait_for(Option::is_some) => changed.is_ok(),
        };
        if !opened {
            return work.await;
        }
        if let Err(error) = page.handle_dialog(accept, prompt_text).await {
            tracing::debug!(%error, "could not handle a dialog during evaluation");
        }
        // Let the closed event reset the state before watching again.
        page.wait_dialog_closed(Duration::from_millis(500)).await;
    }
}
