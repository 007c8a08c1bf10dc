//! The pieces of puppeteer's `HTTPRequest`/`HTTPResponse` the collectors need: merged headers,
//! responses with their raw extra-info, and post data.

use super::values::js_number;
use serde_json::{Map, Value};

#[derive(Debug, Clone)]
pub(crate) struct Response {
    pub status: String,
    pub headers: Map<String, Value>,
    pub awaiting_extra: bool,
    /// A redirect's response has no body.
    pub redirect: bool,
}

pub(super) fn response(payload: &Value, awaiting_extra: bool, redirect: bool) -> Response {
    let mut headers = Map::new();
    merge_headers(&mut headers, &payload["headers"]);
    Response {
        status: number_text(&payload["status"]),
        headers,
        awaiting_extra,
        redirect,
    }
}

/// The raw status and headers of `responseReceivedExtraInfo` replace the parsed ones.
pub(super) fn apply_extra(response: &mut Response, extra: &Value) {
    response.awaiting_extra = false;
    if extra.get("statusCode").is_some() {
        response.status = number_text(&extra["statusCode"]);
    }
    let mut headers = Map::new();
    merge_headers(&mut headers, &extra["headers"]);
    response.headers = headers;
}

fn number_text(value: &Value) -> String {
    match value.as_f64() {
        Some(number) => js_number(number),
        None => value.as_str().unwrap_or_default().to_string(),
    }
}

/// puppeteer's `updateHeaders`: lower-cased names, later values replace earlier ones in place.
pub(super) fn merge_headers(headers: &mut Map<String, Value>, update: &Value) {
    if let Some(update) = update.as_object() {
        for (name, value) in update {
            let value = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_string);
            headers.insert(name.to_lowercase(), Value::String(value));
        }
    }
}

pub(super) fn post_data(request: &Value) -> Option<String> {
    match request["postDataEntries"]
        .as_array()
        .filter(|entries| !entries.is_empty())
    {
        Some(entries) => {
            let bytes: Vec<u8> = entries
                .iter()
                .filter_map(|entry| entry["bytes"].as_str().and_then(base64_decode))
                .flatten()
                .collect();
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
        None => request["postData"].as_str().map(str::to_string),
    }
}

pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for byte in text
        .bytes()
        .filter(|byte| !byte.is_ascii_whitespace() && *byte != b'=')
    {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    Some(out)
}
