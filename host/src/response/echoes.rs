//! Echoes of what the agent sent (a URL, a `fill` value) are shortened in answers, always: a
//! 2 MiB value must not come back whole in `Page navigated to ...` or a snapshot line. Only
//! echoes longer than [`ECHO_LIMIT`] characters are touched, so every 1.11.0 text for ordinary
//! inputs stays as it is.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

/// Echoes up to this many characters are shown whole.
pub const ECHO_LIMIT: usize = 200;
/// A shortened echo keeps this many characters.
const KEPT: usize = 100;

/// `text` itself when it is short; otherwise its start, an ellipsis and how much was left out.
pub fn shortened(text: &str) -> std::borrow::Cow<'_, str> {
    let chars = text.chars().count();
    if chars <= ECHO_LIMIT {
        return text.into();
    }
    let head: String = text.chars().take(KEPT).collect();
    format!("{head}… ({} more characters)", chars - KEPT).into()
}

/// The string arguments (at any depth) long enough to be shortened wherever they come back.
pub fn long_strings(arguments: &Map<String, Value>) -> Vec<String> {
    let mut found = Vec::new();
    arguments
        .values()
        .for_each(|value| collect(value, &mut found));
    found.sort_by_key(|text| std::cmp::Reverse(text.len()));
    found.dedup();
    found
}

fn collect(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::String(text) if text.chars().count() > ECHO_LIMIT => found.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| collect(item, found)),
        Value::Object(map) => map.values().for_each(|item| collect(item, found)),
        _ => {}
    }
}

/// Shortens every verbatim echo of `long` in the answer's texts and structured content.
pub fn shorten_in(answer: &mut CallToolResult, long: &[String]) {
    if long.is_empty() {
        return;
    }
    for block in &mut answer.content {
        if let ContentBlock::Text(text) = block {
            replace(&mut text.text, long);
        }
    }
    if let Some(structured) = &mut answer.structured_content {
        walk(structured, long);
    }
}

fn walk(value: &mut Value, long: &[String]) {
    match value {
        Value::String(text) => replace(text, long),
        Value::Array(items) => items.iter_mut().for_each(|item| walk(item, long)),
        Value::Object(map) => map.values_mut().for_each(|item| walk(item, long)),
        _ => {}
    }
}

fn replace(text: &mut String, long: &[String]) {
    for echo in long {
        if text.contains(echo.as_str()) {
            *text = text.replace(echo.as_str(), &shortened(echo));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_echoes_stay_whole_and_long_ones_are_shortened_everywhere() {
        assert_eq!(shortened("https://example.com/"), "https://example.com/");
        let exact = "a".repeat(ECHO_LIMIT);
        assert_eq!(shortened(&exact), exact);
        let value = "é".repeat(2 * 1024 * 1024);
        let short = shortened(&value);
        assert_eq!(
            short,
            format!(
                "{}… ({} more characters)",
                "é".repeat(100),
                2 * 1024 * 1024 - 100
            )
        );

        let arguments =
            json!({"uid": "1_2", "value": value, "elements": [{"value": "x".repeat(300)}]});
        let long = long_strings(arguments.as_object().expect("present"));
        assert_eq!(long.len(), 2);
        let mut answer = CallToolResult::success(vec![ContentBlock::text(format!(
            "Successfully navigated to {value}.\n  uid=1_2 textbox value=\"{value}\""
        ))]);
        answer.structured_content = Some(json!({"message": value, "n": 1}));
        shorten_in(&mut answer, &long);
        let ContentBlock::Text(text) = &answer.content[0] else {
            panic!("a text")
        };
        assert!(text.text.len() < 1000, "{}", text.text.len());
        assert!(
            text.text
                .contains(&format!("uid=1_2 textbox value=\"{short}\""))
        );
        assert_eq!(
            answer.structured_content.expect("present")["message"],
            json!(short)
        );
    }
}
