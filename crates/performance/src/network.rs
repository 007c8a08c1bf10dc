//! Network requests rebuilt from the `Resource*` trace events, with the timings DevTools'
//! network handler derives (queued, sent, first byte, download, main-thread processing).

use super::events::Event;
use serde_json::Value;
use std::collections::HashMap;

/// One request, all times in trace microseconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Request {
    pub id: String,
    pub url: String,
    pub frame: Option<String>,
    /// When the request was queued: `ResourceWillSendRequest`, else the first `ResourceSendRequest`.
    pub start: f64,
    /// When the bytes went out (`timing.sendStart`), else `start`.
    pub send_start: f64,
    /// First response byte (`timing.receiveHeadersStart`, else `receiveHeadersEnd`).
    pub first_byte: Option<f64>,
    /// End of the response headers, where the body download starts.
    pub download_start: f64,
    /// When the last byte arrived (`ResourceFinish.finishTime`).
    pub finish: f64,
    /// When the renderer finished handling it (the `ResourceFinish` event itself).
    pub end: f64,
    /// Milliseconds between sending the request and the first response byte.
    pub server_response_ms: Option<f64>,
    pub status: Option<i64>,
    pub mime_type: String,
    pub protocol: String,
    pub initial_priority: String,
    pub priority: String,
    pub render_blocking: bool,
    pub from_service_worker: bool,
    pub failed: bool,
    pub decoded_body_length: Option<f64>,
    pub headers: Vec<(String, String)>,
    /// Earlier hops of a redirect chain: (url, start, duration).
    pub redirects: Vec<(String, f64, f64)>,
    /// The URL of the document or script that started this request.
    pub initiator: Option<String>,
}

impl Request {
    pub fn duration(&self) -> f64 {
        self.end - self.start
    }
}

/// All requests in the trace, in the order they started.
pub(super) fn requests(events: &[Value]) -> Vec<Request> {
    let mut by_id: HashMap<&str, Vec<Event>> = HashMap::new();
    for event in events.iter().map(Event) {
        if event.name().starts_with("Resource")
            && let Some(id) = event.data_str("requestId")
        {
            by_id.entry(id).or_default().push(event);
        }
    }
    let mut requests: Vec<Request> = by_id
        .into_iter()
        .filter_map(|(id, mut events)| {
            events.sort_by(|a, b| a.ts().total_cmp(&b.ts()));
            build(id, &events)
        })
        .collect();
    requests.sort_by(|a, b| a.start.total_cmp(&b.start));
    requests
}

fn build(id: &str, events: &[Event]) -> Option<Request> {
    let named = |name: &'static str| {
        events
            .iter()
            .copied()
            .filter(move |event| event.name() == name)
    };
    let sends: Vec<Event> = named("ResourceSendRequest").collect();
    let first_send = *sends.first()?;
    let last_send = *sends.last()?;
    let response = named("ResourceReceiveResponse").next_back();
    let finish = named("ResourceFinish").next_back();
    let start = named("ResourceWillSendRequest")
        .next()
        .map_or(first_send.ts(), Event::ts);
    let timing = response.map(|response| response.data().get("timing").unwrap_or(&Value::Null));
    let timing_ms = |key: &str| {
        timing
            .and_then(|timing| timing.get(key))
            .and_then(Value::as_f64)
            .filter(|value| *value >= 0.0)
    };
    let request_time = timing_ms("requestTime").map(|seconds| seconds * 1e6);
    let at = |key: &str| Some(micros(request_time? + timing_ms(key)? * 1000.0));
    let send_start = at("sendStart").unwrap_or(start);
    let headers_start = timing_ms("receiveHeadersStart").or_else(|| timing_ms("receiveHeadersEnd"));
    let protocol = response.and_then(|response| response.data_str("protocol"));
    // file: requests have no timing; DevTools takes their first byte as the request start.
    let first_byte = if protocol == Some("file") {
        Some(start)
    } else {
        at("receiveHeadersStart").or_else(|| at("receiveHeadersEnd"))
    };
    let download_start = at("receiveHeadersEnd").unwrap_or(start);
    let finish_time = finish
        .and_then(|finish| finish.data_f64("finishTime"))
        .filter(|seconds| *seconds > 0.0)
        .map(|seconds| micros(seconds * 1e6));
    let end = finish.map_or(download_start, Event::ts).max(start);
    let initial_priority = first_send.data_str("priority").unwrap_or("").to_string();
    let priority = named("ResourceChangePriority")
        .next_back()
        .and_then(|change| change.data_str("priority"))
        .map_or_else(|| initial_priority.clone(), str::to_string);
    let redirects = sends
        .windows(2)
        .map(|pair| {
            let url = pair[0].data_str("url").unwrap_or("").to_string();
            (url, pair[0].ts(), pair[1].ts() - pair[0].ts())
        })
        .collect();
    let response_str = |key: &str| response.and_then(|response| response.data_str(key));
    Some(Request {
        id: id.to_string(),
        url: last_send.data_str("url").unwrap_or("").to_string(),
        frame: first_send.data_str("frame").map(str::to_string),
        start,
        send_start,
        first_byte,
        download_start,
        finish: finish_time.unwrap_or(end),
        end,
        server_response_ms: headers_start
            .zip(timing_ms("sendEnd"))
            .map(|(headers, sent)| headers - sent),
        status: response.and_then(|response| response.data().get("statusCode")?.as_i64()),
        mime_type: response_str("mimeType").unwrap_or("").to_string(),
        protocol: protocol.unwrap_or("unknown").to_string(),
        initial_priority,
        priority,
        render_blocking: matches!(
            first_send.data_str("renderBlocking"),
            Some("blocking" | "in_body_parser_blocking")
        ),
        from_service_worker: response
            .and_then(|response| response.data_bool("fromServiceWorker"))
            .unwrap_or(false),
        failed: finish.and_then(|finish| finish.data_bool("didFail")) == Some(true),
        decoded_body_length: finish.and_then(|finish| finish.data_f64("decodedBodyLength")),
        headers: response
            .and_then(|response| response.data().get("headers")?.as_array())
            .into_iter()
            .flatten()
            .filter_map(|header| {
                let name = header.get("name")?.as_str()?;
                let value = header.get("value")?.as_str()?;
                Some((name.to_string(), value.to_string()))
            })
            .collect(),
        redirects,
        initiator: first_send
            .data()
            .get("initiator")
            .and_then(|initiator| initiator.get("url")?.as_str())
            .map(str::to_string),
    })
}

/// Trace timestamps are whole microseconds; times derived from `requestTime` (seconds) carry
/// floating-point noise, so round them to the trace's resolution.
fn micros(value: f64) -> f64 {
    value.round()
}

/// Whether the response was compressed on the wire (DevTools' `isRequestCompressed`).
pub(super) fn is_compressed(request: &Request) -> bool {
    request.headers.iter().any(|(name, value)| {
        let name = name.to_ascii_lowercase();
        (name == "content-encoding" || name == "x-content-encoding-over-network")
            && ["gzip", "br", "deflate", "zstd"]
                .contains(&value.trim().to_ascii_lowercase().as_str())
    })
}

/// Bytes compression would likely save on `request` (DevTools' document-latency estimate):
/// zero when compressed, not a text type, or under 1,400 bytes of savings.
pub(super) fn compression_savings(request: &Request) -> f64 {
    if is_compressed(request) {
        return 0.0;
    }
    let size = request.decoded_body_length.unwrap_or(0.0);
    let ratio = match request.mime_type.as_str() {
        "text/css" => 0.8,
        "text/html" | "text/javascript" => 0.67,
        "text/plain"
        | "text/xml"
        | "text/x-component"
        | "application/javascript"
        | "application/json"
        | "application/manifest+json"
        | "application/vnd.api+json"
        | "application/xml"
        | "application/xhtml+xml"
        | "application/rss+xml"
        | "application/atom+xml"
        | "application/vnd.ms-fontobject"
        | "application/x-font-ttf"
        | "application/x-font-opentype"
        | "application/x-font-truetype"
        | "image/svg+xml"
        | "image/x-icon"
        | "image/vnd.microsoft.icon"
        | "font/ttf"
        | "font/eot"
        | "font/otf"
        | "font/opentype" => 0.5,
        _ => 0.0,
    };
    let savings = (size * ratio).round();
    if savings < 1400.0 { 0.0 } else { savings }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    /// A document request: queued at 1000 µs, sent at 1500, first byte at 31,000 (30 ms server
    /// time), body done at 40,000, handled by the renderer at 45,000.
    pub fn document_events() -> Vec<Value> {
        vec![
            json!({"name": "ResourceWillSendRequest", "ph": "I", "pid": 1, "tid": 1, "ts": 1000, "args": {"data": {"requestId": "N1"}}}),
            json!({"name": "ResourceSendRequest", "ph": "I", "pid": 2, "tid": 7, "ts": 2000,
                   "args": {"data": {"requestId": "N1", "url": "http://a/", "frame": "F", "priority": "VeryHigh", "resourceType": "Document"}}}),
            json!({"name": "ResourceReceiveResponse", "ph": "I", "pid": 2, "tid": 7, "ts": 32000,
                   "args": {"data": {"requestId": "N1", "statusCode": 200, "mimeType": "text/html", "protocol": "http/1.1",
                            "headers": [{"name": "Content-Type", "value": "text/html"}],
                            "timing": {"requestTime": 0.001, "sendStart": 0.5, "sendEnd": 0.6, "receiveHeadersStart": 30.0, "receiveHeadersEnd": 30.2}}}}),
            json!({"name": "ResourceFinish", "ph": "I", "pid": 2, "tid": 7, "ts": 45000,
                   "args": {"data": {"requestId": "N1", "finishTime": 0.04, "decodedBodyLength": 10000, "didFail": false}}}),
        ]
    }

    #[test]
    fn rebuilds_document_timing() {
        let requests = requests(&document_events());
        assert_eq!(requests.len(), 1);
        let document = &requests[0];
        assert_eq!(document.url, "http://a/");
        assert_eq!(document.start, 1000.0);
        assert_eq!(document.send_start, 1500.0);
        assert_eq!(document.first_byte, Some(31000.0));
        assert_eq!(document.download_start, 31200.0);
        assert_eq!(document.finish, 40000.0);
        assert_eq!(document.end, 45000.0);
        assert_eq!(document.server_response_ms.map(f64::round), Some(29.0));
        assert_eq!(document.priority, "VeryHigh");
        assert!(!is_compressed(document));
        assert_eq!(compression_savings(document), 6700.0);
    }
}
