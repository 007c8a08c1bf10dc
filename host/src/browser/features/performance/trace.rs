//! Performance traces: recorded with the CDP `Tracing` domain, summarised by the trace engine
//! (`devtools-performance`) from the raw trace events.

use crate::browser::cdp::{cdp, send, settle_events, timeouts};
use chromiumoxide::cdp::browser_protocol::tracing::{EventDataCollected, EventTracingComplete};
use futures::{FutureExt, StreamExt};
use serde::Serialize;
use serde_json::{Value, json};
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

pub use devtools_performance::TraceSummary;

/// The categories the DevTools performance panel records (`TimelineController.startRecording`,
/// which `DevTools.TracingDefaultCategories` mirrors), plus the two optional ones the reference
/// also enables: JS sampling and screenshots. `navigation,rail` is one DevTools entry; the
/// browser splits the comma-joined list DevTools sends, so it is two entries here.
const CATEGORIES: &[&str] = &[
    "blink.console",
    "loading",
    "blink.user_timing",
    "devtools.timeline",
    "disabled-by-default-devtools.target-rundown",
    "disabled-by-default-devtools.timeline.frame",
    "disabled-by-default-devtools.timeline.stack",
    "disabled-by-default-devtools.timeline",
    "disabled-by-default-devtools.v8-source-rundown-sources",
    "disabled-by-default-devtools.v8-source-rundown",
    "disabled-by-default-layout_shift.debug",
    "disabled-by-default-v8.inspector",
    "disabled-by-default-v8.cpu_profiler.hires",
    "disabled-by-default-lighthouse",
    "v8.execute",
    "v8",
    "cppgc",
    "navigation",
    "rail",
    // TracingOptionalCategories.JsSampling
    "disabled-by-default-v8.cpu_profiler",
    // TracingOptionalCategories.Screenshot
    "disabled-by-default-devtools.screenshot",
];

/// How long the browser may take to flush the buffered events after `Tracing.end`.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(120);

/// A running trace: the task that collects `Tracing.dataCollected` events until
/// `Tracing.tracingComplete`. Dropping it without [`stop`] abandons the events.
pub struct Recording {
    collector: Option<tokio::task::JoinHandle<Result<Vec<Value>, String>>>,
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Some(collector) = self.collector.take() {
            collector.abort();
        }
    }
}

/// A finished trace: the raw trace events, in the order the browser reported them.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub events: Vec<Value>,
}

/// Starts tracing `page` with the performance panel's categories. Events are reported as they
/// are flushed (`transferMode: ReportEvents`) and gathered by the returned [`Recording`].
pub async fn start(page: &chromiumoxide::Page) -> Result<Recording, String> {
    // Subscribe before starting so no early chunk is missed.
    let data = page
        .event_listener::<EventDataCollected>()
        .await
        .map_err(|error| error.to_string())?;
    let complete = page
        .event_listener::<EventTracingComplete>()
        .await
        .map_err(|error| error.to_string())?;
    let collector = tokio::spawn(collect(page.clone(), data, complete));
    let recording = Recording {
        collector: Some(collector),
    };
    let params = json!({
        "traceConfig": {
            "includedCategories": CATEGORIES,
            "excludedCategories": ["*"],
        },
        "transferMode": "ReportEvents",
    });
    send(page, cdp("Tracing.start", params), timeouts::CAPTURE)
        .await
        .map_err(|error| error.to_string())?;
    Ok(recording)
}

/// Ends the trace and waits until the browser has delivered every event.
pub async fn stop(page: &chromiumoxide::Page, mut recording: Recording) -> Result<Trace, String> {
    let mut collector = recording
        .collector
        .take()
        .ok_or_else(|| "The trace recording was already stopped.".to_string())?;
    if let Err(error) = send(page, cdp("Tracing.end", json!({})), timeouts::CAPTURE).await {
        collector.abort();
        return Err(error.to_string());
    }
    match tokio::time::timeout(FLUSH_TIMEOUT, &mut collector).await {
        Ok(Ok(events)) => Ok(Trace { events: events? }),
        Ok(Err(join_error)) => Err(format!("The trace collector failed: {join_error}")),
        Err(_) => {
            collector.abort();
            Err(format!(
                "The browser did not finish the trace within {} s.",
                FLUSH_TIMEOUT.as_secs()
            ))
        }
    }
}

/// Gathers event chunks until the browser says the trace is complete.
async fn collect(
    page: chromiumoxide::Page,
    mut data: chromiumoxide::listeners::EventStream<EventDataCollected>,
    mut complete: chromiumoxide::listeners::EventStream<EventTracingComplete>,
) -> Result<Vec<Value>, String> {
    let mut events = Vec::new();
    loop {
        tokio::select! {
            // Data first: chunks sent before `tracingComplete` must not be left behind.
            biased;
            chunk = data.next() => match chunk {
                Some(chunk) => take_events(&mut events, chunk),
                None => return Err("The browser connection closed while tracing.".to_string()),
            },
            done = complete.next() => {
                if done.is_none() {
                    return Err("The browser connection closed while tracing.".to_string());
                }
                // Chunks sent before the completion event reach the queue once settled.
                settle_events(&page).await.map_err(|error| error.to_string())?;
                while let Some(Some(chunk)) = data.next().now_or_never() {
                    take_events(&mut events, chunk);
                }
                return Ok(events);
            }
        }
    }
}

/// Appends a chunk's events, moving them out when no other listener shares the chunk (a trace
/// with screenshots runs to many megabytes).
fn take_events(events: &mut Vec<Value>, chunk: Arc<EventDataCollected>) {
    match Arc::try_unwrap(chunk) {
        Ok(chunk) => events.extend(chunk.value),
        Err(shared) => events.extend(shared.value.iter().cloned()),
    }
}

/// The trace file's shape, borrowing the events rather than copying them.
#[derive(Serialize)]
struct TraceFile<'a> {
    #[serde(rename = "traceEvents")]
    trace_events: &'a [Value],
}

impl Trace {
    /// Raw trace file bytes, `{"traceEvents": [...]}`, which DevTools and Perfetto open; gzipped
    /// when `gzip` (for a `.json.gz` path), as the reference does.
    pub fn to_file_bytes(&self, gzip: bool) -> Result<Vec<u8>, String> {
        let file = TraceFile {
            trace_events: &self.events,
        };
        let json = serde_json::to_vec(&file)
            .map_err(|error| format!("Could not serialise the trace: {error}"))?;
        if !gzip {
            return Ok(json);
        }
        let mut encoder = flate2::write::GzEncoder::new(
            Vec::with_capacity(json.len() / 8),
            flate2::Compression::default(),
        );
        encoder
            .write_all(&json)
            .and_then(|()| encoder.finish())
            .map_err(|error| format!("Could not compress the trace: {error}"))
    }

    /// The summary text and the computed insight sets for a page whose main frame URL is `url`
    /// (used when the trace itself names no main frame URL). Under emulation the reference
    /// prints the CPU slowdown (`CPU throttling: 4x`) and the network condition name (`Network throttling:
    /// Slow 3G`) in the summary.
    pub fn summarize_throttled(
        &self,
        url: &str,
        cpu_throttling: Option<f64>,
        network_throttling: Option<&str>,
    ) -> TraceSummary {
        devtools_performance::summarize(&self.events, url, (cpu_throttling, network_throttling))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn events() -> Vec<Value> {
        (0..200)
            .map(|n| json!({ "name": "RunTask", "ph": "X", "ts": n * 1000, "dur": 50, "pid": 1, "tid": 1 }))
            .collect()
    }

    fn trace() -> Trace {
        Trace { events: events() }
    }

    #[test]
    fn the_file_is_a_trace_events_document() {
        let bytes = trace().to_file_bytes(false).expect("bytes");
        let document: Value = serde_json::from_slice(&bytes).expect("json");
        assert_eq!(document["traceEvents"], Value::Array(events()));
    }

    #[test]
    fn gzip_round_trips() {
        let plain = trace().to_file_bytes(false).expect("plain");
        let gzipped = trace().to_file_bytes(true).expect("gzipped");
        assert_eq!(&gzipped[..2], &[0x1f, 0x8b], "gzip magic");
        assert!(gzipped.len() < plain.len());
        let mut unzipped = Vec::new();
        flate2::read::GzDecoder::new(gzipped.as_slice())
            .read_to_end(&mut unzipped)
            .expect("gunzip");
        assert_eq!(unzipped, plain);
    }
}
