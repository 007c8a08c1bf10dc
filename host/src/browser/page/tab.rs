//! The tab id of a page (`get_tab_id`, `trigger_extension_action`): the id of the CDP `tab`
//! target holding the page's target, as Puppeteer's `page._tabId` is. chromiumoxide does not
//! attach to tab targets, so a side connection asks each tab which page it holds.

use crate::browser::cdp::side::{SideConnection, with_connection};
use serde_json::json;
use std::time::Duration;

/// The whole look-up, connection included.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(10);

/// The tab target holding `page_target_id`, asked of the browser at `ws_endpoint`.
pub async fn tab_id(ws_endpoint: &str, page_target_id: &str) -> Result<String, String> {
    with_connection(
        ws_endpoint,
        LOOKUP_TIMEOUT,
        "looking up the tab",
        |mut connection| async move {
            let result = tab_of(&mut connection, page_target_id).await;
            (connection, result)
        },
    )
    .await
}

/// Attaches to each tab target in turn; auto-attach names the page each one holds.
pub async fn tab_of(
    connection: &mut SideConnection,
    page_target_id: &str,
) -> Result<String, String> {
    let tabs = connection
        .browser(
            "Target.getTargets",
            json!({ "filter": [{ "type": "tab" }] }),
        )
        .await?;
    let tab_ids: Vec<String> = tabs["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|info| info["targetId"].as_str().map(String::from))
        .collect();
    for tab in tab_ids {
        let attached = connection
            .browser(
                "Target.attachToTarget",
                json!({ "targetId": tab, "flatten": true }),
            )
            .await?;
        let Some(session) = attached["sessionId"].as_str().map(String::from) else {
            continue;
        };
        let auto_attach =
            json!({ "autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true });
        let attach_children = connection
            .call(Some(&session), "Target.setAutoAttach", auto_attach)
            .await;
        let _detached = connection
            .browser("Target.detachFromTarget", json!({ "sessionId": session }))
            .await;
        let (_, events) = attach_children?;
        let holds_page = events.iter().any(|event| {
            event["method"] == "Target.attachedToTarget"
                && event["sessionId"] == session.as_str()
                && event["params"]["targetInfo"]["targetId"] == page_target_id
        });
        if holds_page {
            return Ok(tab);
        }
    }
    Err("The browser reports no tab holding this page.".into())
}
