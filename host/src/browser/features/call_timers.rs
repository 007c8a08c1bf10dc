//! Timers a call's page code set, cleared when the call ends: a plugin without `long-lived`
//! cannot leave a `setTimeout` (or an interval, an animation frame, an idle callback) behind
//! that navigates or changes the page after its call was judged.
//!
//! A frame's timer ids are one sequence for every world of the frame (the page's, an isolated
//! world's), handed out in order. Before the call's first function that runs page code on a
//! page, each frame's last ids are noted; at the call's end every id since is cleared in each
//! frame, from an isolated world of the host's own (the page's code cannot replace the
//! `clearTimeout` it calls), in every frame the page has then, so a timer set through an
//! iframe's `setTimeout` is cleared in that iframe. A frame whose document is new since the
//! mark (a new iframe, a navigated one) has every id cleared. Timers the page's own code set
//! during the call are cleared too: they cannot be told from the call's.
//!
//! Not covered: frames in another renderer process (cross-site iframes), frames past the
//! first [`MAX_FRAMES`] of a page, and workers (their own threads; a busy one is stopped by the
//! footprint watch, see `footprint`).

use crate::browser::page::McpPage;
use serde_json::{Value, json};
use std::time::Duration;

/// The host's world in each frame.
const WORLD: &str = "devtools-mcp: the end of a call";
/// How long one frame has to answer.
const TIMEOUT: Duration = Duration::from_secs(2);
/// Frames marked and cleared at most per page (each costs two commands).
const MAX_FRAMES: usize = 200;
/// Ids cleared at most per frame and kind (a loop that set millions is cut at the newest).
const MAX_CLEARED: u64 = 100_000;

/// Each frame's last ids (timeout, animation frame, idle callback) and its document.
const LAST_IDS: &str = "(() => { const t = setTimeout(() => {}, 0); clearTimeout(t); const a = requestAnimationFrame(() => {}); cancelAnimationFrame(a); const i = requestIdleCallback(() => {}); cancelIdleCallback(i); return [t, a, i]; })()";

/// Where one frame's ids stood.
#[derive(Clone, Debug)]
struct FrameMark {
    frame: String,
    loader: String,
    last: [u64; 3],
}

/// Where the ids of a page's frames stood before the call ran page code on it.
#[derive(Clone, Debug, Default)]
pub struct TimerMark(Vec<FrameMark>);

/// Notes where every frame of `page` stands.
pub async fn mark(page: &McpPage) -> TimerMark {
    let mut marks = Vec::new();
    for (frame, loader) in frames(page).await {
        if let Some(Value::Array(ids)) = in_world(page, &frame, LAST_IDS).await {
            let id = |index: usize| ids.get(index).and_then(Value::as_u64).unwrap_or(0);
            marks.push(FrameMark {
                frame,
                loader,
                last: [id(0), id(1), id(2)],
            });
        }
    }
    TimerMark(marks)
}

/// Clears, in every frame of `page`, the timers set since `mark`; the number cleared (ids
/// that named no timer any more included).
pub async fn clear_since(page: &McpPage, mark: &TimerMark) -> u64 {
    let mut cleared = 0;
    for (frame, loader) in frames(page).await {
        let from = mark
            .0
            .iter()
            .find(|known| known.frame == frame && known.loader == loader)
            .map_or([0; 3], |known| known.last);
        let script = format!(
            "(() => {{ const from = [{}, {}, {}]; const t = setTimeout(() => {{}}, 0), a = requestAnimationFrame(() => {{}}), i = requestIdleCallback(() => {{}}); const clear = (first, last, stop) => {{ let n = 0; for (let id = Math.max(first + 1, last - {MAX_CLEARED}); id <= last; id++) {{ stop(id); n++; }} return n; }}; return clear(from[0], t, clearTimeout) + clear(from[1], a, cancelAnimationFrame) + clear(from[2], i, cancelIdleCallback); }})()",
            from[0], from[1], from[2]
        );
        if let Some(count) = in_world(page, &frame, &script)
            .await
            .and_then(|n| n.as_u64())
        {
            cleared += count;
        }
    }
    cleared
}

/// Every frame of the page's tree: (frame id, loader id).
async fn frames(page: &McpPage) -> Vec<(String, String)> {
    let tree = crate::browser::cdp("Page.getFrameTree", json!({}));
    let Ok(Ok(answer)) = tokio::time::timeout(TIMEOUT, page.cdp().execute(tree)).await else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut stack = vec![answer.result["frameTree"].clone()];
    while let Some(node) = stack.pop()
        && found.len() < MAX_FRAMES
    {
        let frame = &node["frame"];
        if let (Some(id), Some(loader)) = (frame["id"].as_str(), frame["loaderId"].as_str()) {
            found.push((id.to_string(), loader.to_string()));
        }
        if let Some(children) = node["childFrames"].as_array() {
            stack.extend(children.iter().cloned());
        }
    }
    found
}

/// Evaluates `expression` in the host's isolated world of `frame`; its value.
async fn in_world(page: &McpPage, frame: &str, expression: &str) -> Option<Value> {
    let world = crate::browser::cdp(
        "Page.createIsolatedWorld",
        json!({ "frameId": frame, "worldName": WORLD }),
    );
    let created = tokio::time::timeout(TIMEOUT, page.cdp().execute(world))
        .await
        .ok()?
        .ok()?;
    let context = created.result["executionContextId"].as_i64()?;
    let evaluate = crate::browser::cdp(
        "Runtime.evaluate",
        json!({ "expression": expression, "contextId": context, "returnByValue": true }),
    );
    let answer = tokio::time::timeout(TIMEOUT, page.cdp().execute(evaluate))
        .await
        .ok()?
        .ok()?;
    Some(answer.result["result"]["value"].clone())
}
