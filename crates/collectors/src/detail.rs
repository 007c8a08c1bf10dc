//! `get_network_request`'s section, as the reference's `NetworkFormatter` prints it.

use serde_json::{Map, Value, json};

/// The reference's inline body limit, in UTF-16 units.
const BODY_LIMIT: usize = 10_000;

/// `reqid=N METHOD url [status]`.
pub(super) fn concise_line(json: &Map<String, Value>) -> String {
    let text = |key: &str| json[key].as_str().unwrap_or_default().to_string();
    format!(
        "reqid={} {} {} [{}]",
        json["requestId"],
        text("method"),
        text("url"),
        text("status")
    )
}

/// A request's detailed section and its bodies (for saving to files).
#[derive(Debug, Clone)]
pub struct NetworkDetail {
    pub lines: Vec<String>,
    pub structured: Value,
    /// The post data, when the request had some that could be read.
    pub request_body: Option<Vec<u8>>,
    /// The response body, when it could be read.
    pub response_body: Option<Vec<u8>>,
    snapshot: Option<Snapshot>,
    redact: bool,
}

impl NetworkDetail {
    pub fn new(
        lines: Vec<String>,
        structured: Value,
        request_body: Option<Vec<u8>>,
        response_body: Option<Vec<u8>>,
        snapshot: Snapshot,
        redact: bool,
    ) -> Self {
        NetworkDetail {
            lines,
            structured,
            request_body,
            response_body,
            snapshot: Some(snapshot),
            redact,
        }
    }

    /// The reference's line when no `reqid` is given and no DevTools window has a selection.
    pub fn nothing_selected(line: &str, redact: bool) -> Self {
        NetworkDetail {
            lines: vec![line.to_string()],
            structured: json!({}),
            request_body: None,
            response_body: None,
            snapshot: None,
            redact,
        }
    }

    /// The section as the reference prints it when bodies were saved to files: pass where the
    /// request body (`requestFilePath`) and response body (`responseFilePath`) were written.
    /// A body that could not be read prints the reference's "not available anymore" text.
    pub fn with_saved_bodies(
        &self,
        request_file: Option<&str>,
        response_file: Option<&str>,
    ) -> (Vec<String>, Value) {
        match &self.snapshot {
            Some(snapshot) => snapshot.render(
                self.request_body.as_deref(),
                self.response_body.as_deref(),
                (request_file, response_file),
                self.redact,
            ),
            None => (self.lines.clone(), self.structured.clone()),
        }
    }
}

/// A request's printable state, taken under the lock; bodies are read afterwards.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub concise: Map<String, Value>,
    pub cdp_id: String,
    pub request_headers: Map<String, Value>,
    pub has_post_data: bool,
    pub post_data: Option<String>,
    pub response_headers: Option<Map<String, Value>>,
    pub redirect: bool,
    pub failure: Option<String>,
    pub chain: Vec<Map<String, Value>>,
}

impl Snapshot {
    pub fn has_response(&self) -> bool {
        self.response_headers.is_some()
    }

    /// `toStringDetailed` and `toJSONDetailed`. `request_body` is the post data when there is
    /// some, `response_body` the body when it could be read; a `*_file` is where the caller saved
    /// that body (it is then named instead of printed).
    pub fn render(
        &self,
        request_body: Option<&[u8]>,
        response_body: Option<&[u8]>,
        files: (Option<&str>, Option<&str>),
        redact: bool,
    ) -> (Vec<String>, Value) {
        let mut json = self.concise.clone();
        let headers = |headers: &Map<String, Value>| {
            if redact {
                redacted(headers)
            } else {
                headers.clone()
            }
        };
        json.insert(
            "requestHeaders".into(),
            Value::Object(headers(&self.request_headers)),
        );
        if self.has_post_data {
            match (request_body.filter(|body| !body.is_empty()), files.0) {
                (Some(_), Some(file)) => json.insert("requestBodyFilePath".into(), json!(file)),
                (Some(body), None) => json.insert(
                    "requestBody".into(),
                    json!(limited(&String::from_utf8_lossy(body))),
                ),
                (None, _) => json.insert(
                    "requestBody".into(),
                    json!("<Request body not available anymore>"),
                ),
            };
        }
        if let Some(response_headers) = &self.response_headers {
            json.insert(
                "responseHeaders".into(),
                Value::Object(headers(response_headers)),
            );
            let body = match (response_body, files.1) {
                (Some(_), Some(file)) => Err(file),
                (None, Some(_)) => Ok("<Response body not available anymore>".to_string()),
                (None, None) => Ok("<not available anymore>".to_string()),
                (Some(body), None) => Ok(match std::str::from_utf8(body) {
                    Ok("") => "<empty response>".to_string(),
                    Ok(text) => limited(text),
                    Err(_) => "<binary data>".to_string(),
                }),
            };
            match body {
                Ok(text) => json.insert("responseBody".into(), json!(text)),
                Err(file) => json.insert("responseBodyFilePath".into(), json!(file)),
            };
        }
        if let Some(failure) = &self.failure {
            json.insert("failure".into(), json!(failure));
        }
        if !self.chain.is_empty() {
            json.insert("redirectChain".into(), json!(self.chain));
        }

        let text = |key: &str| {
            json.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        };
        let header_lines = |key: &str| -> Vec<String> {
            json[key]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(name, value)| format!("- {name}:{}", value.as_str().unwrap_or_default()))
                .collect()
        };
        let mut lines = vec![
            format!("## Request {}", text("url").unwrap_or_default()),
            format!("Status: {}", text("status").unwrap_or_default()),
            "### Request Headers".to_string(),
        ];
        lines.extend(header_lines("requestHeaders"));
        let body_section = |lines: &mut Vec<String>, title: &str, body: &str, file: &str| {
            if let Some(body) = text(body) {
                lines.extend([title.to_string(), body.to_string()]);
            } else if let Some(file) = text(file) {
                lines.extend([title.to_string(), format!("Saved to {file}.")]);
            }
        };
        body_section(
            &mut lines,
            "### Request Body",
            "requestBody",
            "requestBodyFilePath",
        );
        if json.contains_key("responseHeaders") {
            lines.push("### Response Headers".to_string());
            lines.extend(header_lines("responseHeaders"));
        }
        body_section(
            &mut lines,
            "### Response Body",
            "responseBody",
            "responseBodyFilePath",
        );
        if let Some(failure) = text("failure") {
            lines.extend(["### Request failed with".to_string(), failure.to_string()]);
        }
        if !self.chain.is_empty() {
            lines.push("### Redirect chain".to_string());
            for (indent, hop) in self.chain.iter().enumerate() {
                lines.push(format!("{}{}", "  ".repeat(indent), concise_line(hop)));
            }
        }
        (lines, json!({ "networkRequest": json }))
    }
}

/// `getSizeLimitedString`: 10,000 UTF-16 units, then `... <truncated>`.
fn limited(text: &str) -> String {
    if text.encode_utf16().count() <= BODY_LIMIT {
        return text.to_string();
    }
    let mut units = 0;
    let end = text
        .char_indices()
        .find(|(_, c)| {
            units += c.len_utf16();
            units > BODY_LIMIT
        })
        .map_or(text.len(), |(index, _)| index);
    format!("{}... <truncated>", &text[..end])
}

/// DevTools' `sanitizeHeaders` (used with `--redactNetworkHeaders`).
pub(crate) fn redacted(headers: &Map<String, Value>) -> Map<String, Value> {
    headers
        .iter()
        .map(|(name, value)| {
            let allowed = ALLOWED_HEADERS.contains(&name.trim().to_lowercase().as_str());
            (
                name.clone(),
                if allowed {
                    value.clone()
                } else {
                    json!("<redacted>")
                },
            )
        })
        .collect()
}

const ALLOWED_HEADERS: &[&str] = &[
    ":authority",
    ":method",
    ":path",
    ":scheme",
    "a-im",
    "accept-ch",
    "accept-charset",
    "accept-datetime",
    "accept-encoding",
    "accept-language",
    "accept-patch",
    "accept-ranges",
    "accept",
    "access-control-allow-credentials",
    "access-control-allow-headers",
    "access-control-allow-methods",
    "access-control-allow-origin",
    "access-control-expose-headers",
    "access-control-max-age",
    "access-control-request-headers",
    "access-control-request-method",
    "age",
    "allow",
    "alt-svc",
    "cache-control",
    "connection",
    "content-disposition",
    "content-encoding",
    "content-language",
    "content-location",
    "content-range",
    "content-security-policy",
    "content-type",
    "correlation-id",
    "date",
    "delta-base",
    "dnt",
    "expect-ct",
    "expect",
    "expires",
    "forwarded",
    "front-end-https",
    "host",
    "http2-settings",
    "if-modified-since",
    "if-range",
    "if-unmodified-source",
    "im",
    "last-modified",
    "link",
    "location",
    "max-forwards",
    "nel",
    "origin",
    "permissions-policy",
    "pragma",
    "preference-applied",
    "proxy-connection",
    "public-key-pins",
    "range",
    "referer",
    "refresh",
    "report-to",
    "retry-after",
    "save-data",
    "sec-gpc",
    "server",
    "status",
    "strict-transport-security",
    "te",
    "timing-allow-origin",
    "tk",
    "trailer",
    "transfer-encoding",
    "upgrade-insecure-requests",
    "upgrade",
    "user-agent",
    "vary",
    "via",
    "warning",
    "www-authenticate",
    "x-att-deviceid",
    "x-content-duration",
    "x-content-security-policy",
    "x-content-type-options",
    "x-correlation-id",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-frame-options",
    "x-http-method-override",
    "x-powered-by",
    "x-redirected-by",
    "x-request-id",
    "x-requested-with",
    "x-ua-compatible",
    "x-wap-profile",
    "x-webkit-csp",
    "x-xss-protection",
];

#[cfg(test)]
mod tests {
    use super::super::network::Network;
    use super::super::network::tests::respond;
    use serde_json::json;

    #[test]
    fn bodies_are_cut_named_or_reported_missing() {
        let mut network = Network::default();
        network.event(
            "Network.requestWillBeSent",
            &json!({"requestId": "1", "loaderId": "L", "type": "Fetch",
            "request": {"url": "http://h/post", "method": "POST", "hasPostData": true,
                        "headers": {"Cookie": "secret", "Content-Type": "application/json"},
                        "postDataEntries": [{"bytes": "eyJxIjox"}, {"bytes": "fQ=="}]}}),
        );
        respond(&mut network, "1", 200);
        let snapshot = network.snapshot(1).expect("request 1");
        assert_eq!(snapshot.post_data.as_deref(), Some("{\"q\":1}"));
        let long = "x".repeat(10_001);
        let (lines, data) = snapshot.render(
            Some(b"{\"q\":1}"),
            Some(long.as_bytes()),
            (None, None),
            true,
        );
        assert_eq!(
            lines[3..5],
            ["- cookie:<redacted>", "- content-type:application/json"]
        );
        assert_eq!(lines[6], "{\"q\":1}");
        assert_eq!(
            lines[lines.len() - 1],
            format!("{}... <truncated>", "x".repeat(10_000))
        );
        assert_eq!(data["networkRequest"]["requestBody"], json!("{\"q\":1}"));
        let body = |body: &[u8]| -> String {
            let lines = snapshot.render(None, Some(body), (None, None), false).0;
            lines[lines.len() - 1].clone()
        };
        assert_eq!(body(b""), "<empty response>");
        assert_eq!(body(&[0xff, 0xfe]), "<binary data>");
        let (lines, data) = snapshot.render(
            Some(b"a"),
            Some(b"b"),
            (Some("/tmp/r.network-request"), Some("/tmp/s")),
            false,
        );
        assert_eq!(
            lines[5..7],
            ["### Request Body", "Saved to /tmp/r.network-request."]
        );
        assert_eq!(lines[lines.len() - 1], "Saved to /tmp/s.");
        assert_eq!(
            data["networkRequest"]["responseBodyFilePath"],
            json!("/tmp/s")
        );
        let (lines, _) = snapshot.render(None, None, (None, Some("/tmp/s")), false);
        assert!(lines.contains(&"<Request body not available anymore>".to_string()));
        assert_eq!(
            lines[lines.len() - 1],
            "<Response body not available anymore>"
        );
    }
}
