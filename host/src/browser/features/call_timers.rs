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
//! mark (a new iframe, a navigated one) has every id cleared, and so has every frame of a page
//! the call opened ([`TimerMark::everything`]). Timers the page's own code set during the call
//! are cleared too: they cannot be told from the call's.
//!
//! Frames in another renderer process (cross-site iframes) answer only on a session of their
//! own: they are reached as the targets attached to the page on our connection (`cdp::raw`),
//! nested ones included. Not covered: frames past the first [`MAX_FRAMES`] of a page. Workers
//! are stopped by `call_workers`.

use crate::browser::RawClient;
use crate::browser::features::renderer_memory;
use crate::browser::page::McpPage;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// Where the ids of a page's frames stood before the call ran page code on it, and when.
#[derive(Clone, Debug, Default)]
pub struct TimerMark {
    frames: Vec<FrameMark>,
    /// `None`: everything on the page is the call's (a page it opened).
    since: Option<Instant>,
}

impl TimerMark {
    /// The mark of a page the call opened: every timer and worker in it is the call's.
    pub fn everything() -> TimerMark {
        TimerMark::default()
    }

    /// When the mark was taken (`None`: everything on the page is the call's).
    pub fn since(&self) -> Option<Instant> {
        self.since
    }
}

/// Where a frame's commands go: the page's own session, or our session on a cross-process
/// iframe's target (its frames answer only there).
enum Channel {
    Page,
    Raw(Arc<RawClient>, String),
}

/// Notes where every frame of `page` stands (cross-process ones included), and when.
pub async fn mark(page: &McpPage) -> TimerMark {
    let since = Some(Instant::now());
    let mut frames_marked = Vec::new();
    for channel in channels(page).await {
        for (frame, loader) in frames(page, &channel).await {
            if let Some(Value::Array(ids)) = in_world(page, &channel, &frame, LAST_IDS).await {
                let id = |index: usize| ids.get(index).and_then(Value::as_u64).unwrap_or(0);
                frames_marked.push(FrameMark {
                    frame,
                    loader,
                    last: [id(0), id(1), id(2)],
                });
            }
        }
    }
    TimerMark {
        frames: frames_marked,
        since,
    }
}

/// Clears, in every frame of `page` (cross-process ones included), the timers set since
/// `mark`; the number cleared (ids that named no timer any more included).
pub async fn clear_since(page: &McpPage, mark: &TimerMark) -> u64 {
    let mut cleared = 0;
    for channel in channels(page).await {
        cleared += clear_in(page, &channel, mark).await;
    }
    cleared
}

/// The page's own session, then one per cross-process iframe (nested ones included).
async fn channels(page: &McpPage) -> Vec<Channel> {
    let mut found = vec![Channel::Page];
    let Ok(client) = page.raw().client().await else {
        return found;
    };
    let target = page.cdp().target_id().as_ref().to_string();
    if let Ok(contexts) = renderer_memory::contexts(&client, &target, TIMEOUT).await {
        found.extend(
            contexts
                .into_iter()
                .filter(|context| context.kind == "iframe")
                .map(|context| Channel::Raw(client.clone(), context.session)),
        );
    }
    found
}

/// [`clear_since`] in the frames one channel reaches.
async fn clear_in(page: &McpPage, channel: &Channel, mark: &TimerMark) -> u64 {
    let mut cleared = 0;
    for (frame, loader) in frames(page, channel).await {
        let from = mark
            .frames
            .iter()
            .find(|known| known.frame == frame && known.loader == loader)
            .map_or([0; 3], |known| known.last);
        let script = format!(
            "(() => {{ const from = [{}, {}, {}]; const t = setTimeout(() => {{}}, 0), a = requestAnimationFrame(() => {{}}), i = requestIdleCallback(() => {{}}); const clear = (first, last, stop) => {{ let n = 0; for (let id = Math.max(first + 1, last - {MAX_CLEARED}); id <= last; id++) {{ stop(id); n++; }} return n; }}; return clear(from[0], t, clearTimeout) + clear(from[1], a, cancelAnimationFrame) + clear(from[2], i, cancelIdleCallback); }})()",
            from[0], from[1], from[2]
        );
        if let Some(count) = in_world(page, channel, &frame, &script)
            .await
            .and_then(|n| n.as_u64())
        {
            cleared += count;
        }
    }
    cleared
}

/// Sends one command on `channel`; its result, if it answered in time.
async fn command(
    page: &McpPage,
    channel: &Channel,
    method: &'static str,
    params: Value,
) -> Option<Value> {
    match channel {
        Channel::Page => {
            let command = crate::browser::cdp(method, params);
            let answer = tokio::time::timeout(TIMEOUT, page.cdp().execute(command))
                .await
                .ok()?
                .ok()?;
            Some(answer.result)
        }
        Channel::Raw(client, session) => client
            .call(Some(session), method, params, TIMEOUT)
            .await
            .ok()?
            .result()
            .ok(),
    }
}

/// Every frame of the channel's tree: (frame id, loader id).
async fn frames(page: &McpPage, channel: &Channel) -> Vec<(String, String)> {
    let Some(answer) = command(page, channel, "Page.getFrameTree", json!({})).await else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut stack = vec![answer["frameTree"].clone()];
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
async fn in_world(
    page: &McpPage,
    channel: &Channel,
    frame: &str,
    expression: &str,
) -> Option<Value> {
    let world = json!({ "frameId": frame, "worldName": WORLD });
    let created = command(page, channel, "Page.createIsolatedWorld", world).await?;
    let context = created["executionContextId"].as_i64()?;
    let evaluate = json!({ "expression": expression, "contextId": context, "returnByValue": true });
    let answer = command(page, channel, "Runtime.evaluate", evaluate).await?;
    Some(answer["result"]["value"].clone())
}
