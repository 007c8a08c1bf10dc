//! Waiting for a page to settle after an action: a navigation the action caused, then a quiet
//! DOM. The navigation window and the DOM-quiet wait run at the same time, so a click that
//! changes nothing costs one quiet period (100 ms), not the reference's two.

use super::cdp::{cdp, send};
use super::page::McpPage;
use chromiumoxide::cdp::browser_protocol::page::{EventFrameStartedLoading, EventLoadEventFired};
use futures::StreamExt;
use serde_json::json;
use std::future::Future;
use std::time::Duration;

/// How long after an action a navigation may still start (× the CPU slowdown).
const NAVIGATION_WINDOW_MS: f64 = 100.0;
/// How long the DOM must stay unchanged (× the CPU slowdown), and the cap on that wait.
const DOM_QUIET_MS: f64 = 100.0;
const DOM_QUIET_CAP_MS: f64 = 3000.0;
/// How long a navigation the action started may take to load (× the network slowdown).
const NAVIGATION_LOAD_MS: f64 = 3000.0;
/// Resolves once the DOM had no mutation for `quiet` ms, or after `cap` ms.
const DOM_QUIET_SCRIPT: &str = r#"((quiet, cap) => new Promise(resolve => {
  let timer;
  const done = () => { observer.disconnect(); clearTimeout(limit); clearTimeout(timer); resolve(true); };
  const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, quiet); });
  observer.observe(document, {childList: true, subtree: true, attributes: true, characterData: true});
  timer = setTimeout(done, quiet);
  const limit = setTimeout(done, cap);
}))"#;

/// The waits of one page, scaled by its CPU and network emulation as the reference scales them.
struct Waits {
    navigation_window: Duration,
    navigation_load: Duration,
    dom_quiet_ms: u64,
    dom_cap_ms: u64,
}

impl Waits {
    fn of(page: &McpPage) -> Waits {
        let cpu = page.emulation().cpu_multiplier().max(1.0);
        let network = page.emulation().network_multiplier().max(1.0);
        let millis = |value: f64| value.round() as u64;
        Waits {
            navigation_window: Duration::from_millis(millis(NAVIGATION_WINDOW_MS * cpu)),
            navigation_load: Duration::from_millis(millis(NAVIGATION_LOAD_MS * network)),
            dom_quiet_ms: millis(DOM_QUIET_MS * cpu),
            dom_cap_ms: millis(DOM_QUIET_CAP_MS * cpu),
        }
    }
}

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
    let waits = Waits::of(page);

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
        let quiet = dom_quiet(page, &waits);
        tokio::pin!(quiet);
        let (started, quiet_done) = tokio::select! {
            started = tokio::time::timeout(waits.navigation_window, navigation_started) => (started.unwrap_or(false), false),
            _ = &mut quiet => (false, true),
        };
        if started {
            let mut dialogs = page.dialog_watch();
            tokio::select! {
                _ = tokio::time::timeout(waits.navigation_load, loads.next()) => {}
                _ = dialogs.wait_for(Option::is_some) => {}
            }
            if page.dialog().is_none() {
                dom_quiet(page, &waits).await;
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
async fn dom_quiet(page: &McpPage, waits: &Waits) {
    let mut dialogs = page.dialog_watch();
    let expression = format!(
        "{DOM_QUIET_SCRIPT}({}, {})",
        waits.dom_quiet_ms, waits.dom_cap_ms
    );
    let wait = send(
        &page.page,
        cdp(
            "Runtime.evaluate",
            json!({ "expression": expression, "awaitPromise": true }),
        ),
        Duration::from_millis(waits.dom_cap_ms + 1000),
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
