//! The collected requests and messages as data, for tools that compute on them rather than
//! print 1.11.0's listings: the same items, ids and arguments the listings show.

use super::console::{Arg, Console};
use super::detail::redacted;
use super::network::Network;
use serde_json::{Map, Value};

/// One network request.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    pub id: u64,
    pub method: String,
    pub url: String,
    pub resource_type: String,
    pub state: RequestState,
    pub request_headers: Vec<(String, String)>,
    pub response_headers: Vec<(String, String)>,
    pub has_post_data: bool,
    pub navigation: bool,
    pub from_memory_cache: bool,
    pub redirect_chain_start: u64,
    /// Wall clock when it was sent, in ms since the Unix epoch.
    pub started_at_ms: Option<f64>,
    /// From sending to the response headers, and to the last byte (or the failure), in ms.
    pub response_ms: Option<f64>,
    pub duration_ms: Option<f64>,
    /// Bytes received over the network (headers and encoded body).
    pub encoded_bytes: Option<u64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RequestState {
    Pending,
    Answered(u16),
    Failed(String),
}

/// One console message.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRecord {
    pub id: u64,
    /// The console's type (`log`, `warn`, `error`, `startGroup`...).
    pub kind: String,
    pub text: String,
    pub argument_count: usize,
    /// As `get_console_message` prints each; `None` while still being read.
    pub arguments: Vec<Option<String>>,
    pub stack: Option<String>,
    pub uncaught: bool,
}

/// Header values as `get_network_request` shows them: DevTools' allow-list when redacting.
fn headers(map: &Map<String, Value>, redact: bool) -> Vec<(String, String)> {
    let shown = match redact {
        true => redacted(map),
        false => map.clone(),
    };
    shown
        .into_iter()
        .map(|(name, value)| (name, value.as_str().unwrap_or_default().to_string()))
        .collect()
}

/// Milliseconds between two of the browser's monotonic timestamps (seconds).
fn since(start: Option<f64>, end: Option<f64>) -> Option<f64> {
    Some(((end? - start?) * 1000.0).max(0.0))
}

impl Network {
    pub fn records(&self, preserved: bool, redact: bool) -> Vec<RequestRecord> {
        self.requests(preserved)
            .into_iter()
            .map(|request| {
                let state = match (&request.response, &request.failure) {
                    (Some(response), _) => {
                        RequestState::Answered(response.status.parse().unwrap_or_default())
                    }
                    (None, Some(failure)) => RequestState::Failed(failure.clone()),
                    (None, None) => RequestState::Pending,
                };
                RequestRecord {
                    id: request.id,
                    method: request.method.clone(),
                    url: request.url.clone(),
                    resource_type: request.resource_type.clone(),
                    state,
                    request_headers: headers(&request.headers, redact),
                    response_headers: request
                        .response
                        .as_ref()
                        .map(|response| headers(&response.headers, redact))
                        .unwrap_or_default(),
                    has_post_data: request.has_post_data,
                    navigation: request.navigation,
                    from_memory_cache: request.memory_cache,
                    redirect_chain_start: request.first_hop,
                    started_at_ms: request.timing.wall.map(|seconds| seconds * 1000.0),
                    response_ms: since(request.timing.sent, request.timing.answered),
                    duration_ms: since(request.timing.sent, request.timing.finished),
                    encoded_bytes: request
                        .timing
                        .encoded_bytes
                        .filter(|bytes| *bytes >= 0.0)
                        .map(|bytes| bytes as u64),
                }
            })
            .collect()
    }
}

impl Console {
    pub fn records(&self, preserved: bool) -> Vec<MessageRecord> {
        self.buckets
            .data(preserved)
            .into_iter()
            .filter(|message| {
                message
                    .issue
                    .as_ref()
                    .is_none_or(|issue| issue.title.is_some())
            })
            .map(|message| MessageRecord {
                id: message.id,
                kind: message.kind.clone(),
                text: message.text.clone(),
                argument_count: message.arg_count,
                arguments: message
                    .args
                    .iter()
                    .map(|arg| match arg {
                        Some(Arg::Text(text)) => Some(text.clone()),
                        Some(Arg::Error(error)) => Some(self.scripts.format_error(error)),
                        Some(Arg::Unavailable) | None => None,
                    })
                    .collect(),
                stack: message
                    .stack
                    .as_ref()
                    .and_then(|stack| self.scripts.format(stack, message.cause.as_ref(), false)),
                uncaught: message.uncaught,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Collected, RequestState};
    use serde_json::json;

    #[test]
    fn records_carry_what_the_listings_print_as_data() {
        let mut state = Collected::default();
        state.dispatch(
            "Network.requestWillBeSent",
            &json!({"requestId": "1", "loaderId": "1", "frameId": "F", "type": "Document",
                    "timestamp": 100.0, "wallTime": 1_700_000_000.5,
                    "request": {"url": "http://h/", "method": "GET",
                                "headers": {"Cookie": "secret", "Accept": "text/html"}}}),
        );
        state.dispatch(
            "Network.responseReceived",
            &json!({"requestId": "1", "type": "Document", "timestamp": 100.25,
                    "response": {"status": 404, "headers": {"Content-Type": "text/html"}}}),
        );
        state.dispatch(
            "Network.loadingFinished",
            &json!({"requestId": "1", "timestamp": 100.5, "encodedDataLength": 321}),
        );
        state.dispatch(
            "Runtime.consoleAPICalled",
            &json!({"type": "warning", "executionContextId": 1,
                    "args": [{"type": "string", "value": "careful"}, {"type": "number", "value": 2, "description": "2"}]}),
        );
        state.dispatch(
            "Runtime.exceptionThrown",
            &json!({"exceptionDetails": {"text": "Uncaught", "exception": {"type": "string", "value": "boom"}}}),
        );
        let requests = state.network_records(false, true);
        assert_eq!(requests.len(), 1);
        let request = &requests[0];
        assert_eq!((request.id, request.method.as_str()), (1, "GET"));
        assert_eq!(request.state, RequestState::Answered(404));
        assert_eq!(request.resource_type, "document");
        assert_eq!(request.started_at_ms, Some(1_700_000_000_500.0));
        assert_eq!(request.response_ms, Some(250.0));
        assert_eq!(request.duration_ms, Some(500.0));
        assert_eq!(request.encoded_bytes, Some(321));
        assert!(
            request
                .request_headers
                .contains(&("cookie".into(), "<redacted>".into())),
            "{request:?}"
        );
        assert!(
            request
                .request_headers
                .contains(&("accept".into(), "text/html".into()))
        );
        let shown = state.network_records(false, false);
        assert!(
            shown[0]
                .request_headers
                .contains(&("cookie".into(), "secret".into()))
        );
        let messages = state.console_records(false);
        assert_eq!(messages.len(), 2);
        assert_eq!((messages[0].id, messages[0].kind.as_str()), (1, "warn"));
        assert_eq!(messages[0].text, "careful 2");
        assert_eq!(messages[0].argument_count, 2);
        assert!(!messages[0].uncaught && messages[1].uncaught);
        assert_eq!(messages[1].kind, "error");
    }
}
