//! A small synthetic page-load trace for the unit tests (times in µs): navigation at 10 ms, a
//! document whose first byte arrives at 40.5 ms, FCP at 100 ms, an image LCP at 250 ms, two
//! layout-shift session windows, long tasks on the page's and on another renderer's main thread.

use serde_json::{Value, json};

fn instant(name: &str, ts: u64, args: Value) -> Value {
    json!({"name": name, "ph": "I", "pid": 2, "tid": 7, "ts": ts, "args": args})
}

fn task(pid: u64, ts: u64, dur: u64) -> Value {
    json!({"name": "RunTask", "ph": "X", "cat": "disabled-by-default-devtools.timeline", "pid": pid, "tid": pid * 3 + 1, "ts": ts, "dur": dur, "args": {}})
}

fn shift(ts: u64, score: f64, recent_input: bool, frame: &str) -> Value {
    let data = json!({"had_recent_input": recent_input, "weighted_score_delta": score,
                      "impacted_nodes": [{"debug_name": "DIV id='banner'", "node_id": 9}]});
    instant("LayoutShift", ts, json!({"frame": frame, "data": data}))
}

fn candidate(ts: u64, index: u64, navigation: &str, frame: &str, node: u64, kind: &str) -> Value {
    let data = json!({"candidateIndex": index, "navigationId": navigation, "nodeId": node,
                      "nodeName": if kind == "image" { "IMG" } else { "P" }, "type": kind,
                      "isOutermostMainFrame": true, "isMainFrame": true});
    json!({"name": "largestContentfulPaint::Candidate", "ph": "R", "pid": 2, "tid": 7, "ts": ts,
           "args": {"frame": frame, "data": data}})
}

/// The whole page load.
pub(super) fn page() -> Vec<Value> {
    vec![
        json!({"name": "thread_name", "ph": "M", "pid": 2, "tid": 7, "ts": 0, "args": {"name": "CrRendererMain"}}),
        json!({"name": "thread_name", "ph": "M", "pid": 3, "tid": 10, "ts": 0, "args": {"name": "CrRendererMain"}}),
        json!({"name": "TracingStartedInBrowser", "ph": "I", "pid": 1, "tid": 1, "ts": 1000,
               "args": {"data": {"frames": [{"frame": "F", "isOutermostMainFrame": true, "processId": 2, "url": "about:blank"}]}}}),
        json!({"name": "navigationStart", "ph": "R", "pid": 2, "tid": 7, "ts": 10_000,
               "args": {"frame": "F", "data": {"documentLoaderURL": "http://a/", "isLoadingMainFrame": true, "navigationId": "N1"}}}),
        json!({"name": "FrameCommittedInBrowser", "ph": "I", "pid": 1, "tid": 1, "ts": 12_000,
               "args": {"data": {"frame": "F", "processId": 2, "url": "http://a/"}}}),
        // The document: queued 10.5 ms, sent 11 ms, first byte 40.5 ms, done 50 ms, handled 55 ms.
        json!({"name": "ResourceWillSendRequest", "ph": "I", "pid": 1, "tid": 1, "ts": 10_500, "args": {"data": {"requestId": "N1"}}}),
        instant(
            "ResourceSendRequest",
            11_000,
            json!({"data": {"requestId": "N1", "url": "http://a/", "frame": "F", "priority": "VeryHigh"}}),
        ),
        instant(
            "ResourceReceiveResponse",
            41_000,
            json!({"data": {"requestId": "N1", "statusCode": 200, "mimeType": "text/html", "protocol": "h2",
            "headers": [{"name": "content-type", "value": "text/html"}, {"name": "x-secret", "value": "1"}],
            "timing": {"requestTime": 0.0105, "sendStart": 0.5, "sendEnd": 0.6, "receiveHeadersStart": 30.0, "receiveHeadersEnd": 30.2}}}),
        ),
        instant(
            "ResourceFinish",
            55_000,
            json!({"data": {"requestId": "N1", "finishTime": 0.05, "decodedBodyLength": 10_000}}),
        ),
        // The LCP image: sent 60 ms, headers 160 ms, done 200 ms.
        instant(
            "ResourceSendRequest",
            60_000,
            json!({"data": {"requestId": "R2", "url": "http://a/hero.png", "frame": "F",
            "priority": "Low", "initiator": {"type": "parser", "url": "http://a/"}}}),
        ),
        instant(
            "ResourceChangePriority",
            70_000,
            json!({"data": {"requestId": "R2", "priority": "High"}}),
        ),
        instant(
            "ResourceReceiveResponse",
            161_000,
            json!({"data": {"requestId": "R2", "statusCode": 200, "mimeType": "image/png", "protocol": "h2",
            "timing": {"requestTime": 0.06, "sendStart": 1.0, "sendEnd": 1.1, "receiveHeadersEnd": 100.0}}}),
        ),
        instant(
            "ResourceFinish",
            201_000,
            json!({"data": {"requestId": "R2", "finishTime": 0.2, "decodedBodyLength": 50_000}}),
        ),
        json!({"name": "firstContentfulPaint", "ph": "R", "pid": 2, "tid": 7, "ts": 100_000, "args": {"frame": "F", "data": {"navigationId": "N1"}}}),
        candidate(100_000, 1, "N1", "F", 7, "text"),
        candidate(250_000, 2, "N1", "F", 3, "image"),
        candidate(260_000, 3, "OTHER_NAVIGATION", "F", 5, "text"),
        candidate(270_000, 4, "N1", "OTHER_FRAME", 6, "text"),
        json!({"name": "LargestImagePaint::Candidate", "ph": "R", "pid": 2, "tid": 7, "ts": 250_000,
               "args": {"frame": "F", "data": {"candidateIndex": 1, "DOMNodeId": 3, "imageUrl": "http://a/hero.png"}}}),
        // Window 1: 0.1 + 0.05, closed 1 s after its last shift. Window 2: 0.2, the worst.
        shift(300_000, 0.1, false, "F"),
        shift(800_000, 0.05, false, "F"),
        shift(2_500_000, 0.2, false, "F"),
        shift(2_600_000, 0.5, true, "F"),
        json!({"name": "LayoutShift", "ph": "I", "pid": 3, "tid": 10, "ts": 2_700_000,
               "args": {"frame": "OTHER_FRAME", "data": {"had_recent_input": false, "weighted_score_delta": 0.9}}}),
        // Long tasks: 80 ms ending 40 ms after FCP (30 ms blocking), 120 ms (70 ms blocking).
        task(2, 60_000, 80_000),
        task(2, 400_000, 120_000),
        json!({"name": "EvaluateScript", "ph": "X", "cat": "devtools.timeline", "pid": 2, "tid": 7, "ts": 400_100, "dur": 119_000,
               "args": {"data": {"url": "http://a/app.js"}}}),
        task(2, 600_000, 40_000),
        task(3, 700_000, 200_000),
        task(2, 3_990_000, 10_000),
    ]
}
