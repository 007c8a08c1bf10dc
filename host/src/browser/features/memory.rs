//! V8 heap snapshots, taken the way Puppeteer's `Page.captureHeapSnapshot` (which the reference's
//! `take_heapsnapshot` calls) takes them: enable the heap profiler, collect garbage so the snapshot
//! holds only live objects, then `HeapProfiler.takeHeapSnapshot`. The browser streams the
//! snapshot as `HeapProfiler.addHeapSnapshotChunk` events *before* it answers the command, so we
//! listen first and concatenate every chunk; the bytes are the `.heapsnapshot` JSON.

use crate::browser::cdp::{cdp, send, settle_events, timeouts};
use crate::browser::page::McpPage;
use crate::sandbox::{FileKind, Sandbox};
use chromiumoxide::cdp::js_protocol::heap_profiler::EventAddHeapSnapshotChunk;
use chromiumoxide::listeners::EventStream;
use futures::{FutureExt, StreamExt};
use serde_json::json;
use std::time::Duration;

/// Bound for the snapshot itself: a large heap takes a while to serialise.
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(300);

/// `take_heapsnapshot`: writes a heap snapshot of the page to a checked path; returns the
/// response lines.
pub async fn save(
    page: &McpPage,
    file_path: &str,
    sandbox: &Sandbox,
) -> Result<Vec<String>, String> {
    let bytes = take_heap_snapshot(page.cdp()).await?;
    let file = sandbox
        .save(file_path, FileKind::HeapSnapshot, &bytes)
        .map_err(|error| error.to_string())?;
    Ok(vec![format!("Heap snapshot saved to {file}")])
}

/// Takes a heap snapshot of `page`'s main JavaScript realm and returns the raw
/// `.heapsnapshot` bytes (a JSON document with `snapshot`, `nodes`, `edges`, `strings`, ...).
pub async fn take_heap_snapshot(page: &chromiumoxide::Page) -> Result<Vec<u8>, String> {
    // Subscribe before asking: the chunks arrive before the command's answer.
    let mut chunks = page
        .event_listener::<EventAddHeapSnapshotChunk>()
        .await
        .map_err(|error| error.to_string())?;
    send(
        page,
        cdp("HeapProfiler.enable", json!({})),
        timeouts::CAPTURE,
    )
    .await
    .map_err(|error| error.to_string())?;
    let taken = snapshot(page, &mut chunks).await;
    // Like Puppeteer, always switch the profiler off again, whether or not the snapshot worked.
    let disabled = send(
        page,
        cdp("HeapProfiler.disable", json!({})),
        timeouts::CAPTURE,
    )
    .await;
    let bytes = taken?;
    disabled.map_err(|error| error.to_string())?;
    Ok(bytes)
}

/// Collects garbage, then takes the snapshot while draining the chunk stream, so a large
/// snapshot never piles up in the listener's queue.
async fn snapshot(
    page: &chromiumoxide::Page,
    chunks: &mut EventStream<EventAddHeapSnapshotChunk>,
) -> Result<Vec<u8>, String> {
    send(
        page,
        cdp("HeapProfiler.collectGarbage", json!({})),
        timeouts::CAPTURE,
    )
    .await
    .map_err(|error| error.to_string())?;
    let take = send(
        page,
        cdp(
            "HeapProfiler.takeHeapSnapshot",
            json!({"reportProgress": false}),
        ),
        SNAPSHOT_TIMEOUT,
    );
    tokio::pin!(take);
    let mut bytes = Vec::new();
    let answer = loop {
        tokio::select! {
            answer = &mut take => break answer,
            Some(chunk) = chunks.next() => bytes.extend_from_slice(chunk.chunk.as_bytes()),
        }
    };
    answer.map_err(|error| error.to_string())?;
    // Chunks sent just before the answer reach the queue only once settled.
    settle_events(page)
        .await
        .map_err(|error| error.to_string())?;
    while let Some(Some(chunk)) = chunks.next().now_or_never() {
        bytes.extend_from_slice(chunk.chunk.as_bytes());
    }
    if bytes.is_empty() {
        return Err("The browser returned an empty heap snapshot.".to_string());
    }
    Ok(bytes)
}
