//! JavaScript values as puppeteer and the reference turn them into text: a console message's
//! text tokens, printed arguments, exception messages and numbers.

use serde_json::Value;

/// The message text of an uncaught exception (`SymbolizedError.#getMessage`).
pub fn exception_message(details: &Value) -> String {
    let text = details["text"].as_str().unwrap_or_default();
    match details.get("exception") {
        Some(exception) if text == "Uncaught" => {
            format!("Uncaught {}", description_message(exception))
        }
        _ => text.to_string(),
    }
}

/// An error's description up to its first stack line.
pub fn description_message(object: &Value) -> String {
    let description = object["description"].as_str().unwrap_or_default();
    description
        .split("\n    at ")
        .next()
        .unwrap_or_default()
        .to_string()
}

/// How puppeteer turns one argument into text for the message (`valueFromJSHandle`).
pub(super) fn text_token(arg: &Value) -> String {
    if arg.get("objectId").is_none() {
        return match primitive(arg) {
            Primitive::Undefined | Primitive::Null => String::new(),
            Primitive::Text(text) => text,
        };
    }
    let description = arg["description"].as_str().unwrap_or_default();
    if arg["subtype"] == "error" && !description.is_empty() {
        return description
            .split('\n')
            .next()
            .unwrap_or_default()
            .to_string();
    }
    let kind = arg["subtype"]
        .as_str()
        .filter(|s| !s.is_empty())
        .or(arg["type"].as_str())
        .unwrap_or("undefined");
    format!(
        "[{kind} {}]",
        arg["className"].as_str().unwrap_or("undefined")
    )
}

enum Primitive {
    Undefined,
    Null,
    Text(String),
}

fn primitive(arg: &Value) -> Primitive {
    if let Some(unserializable) = arg["unserializableValue"].as_str() {
        return Primitive::Text(match unserializable {
            "-0" => "0".to_string(),
            other if arg["type"] == "bigint" => other.trim_end_matches('n').to_string(),
            other => other.to_string(),
        });
    }
    match arg.get("value") {
        None => Primitive::Undefined,
        Some(Value::Null) => Primitive::Null,
        Some(value) => Primitive::Text(js_string(value)),
    }
}

/// A primitive argument as `get_console_message` prints it (`String(jsonValue())`).
pub fn primitive_arg(arg: &Value) -> String {
    match primitive(arg) {
        Primitive::Undefined => "undefined".to_string(),
        Primitive::Null => "null".to_string(),
        Primitive::Text(text) => text,
    }
}

/// A value read back with `returnByValue`, printed as the reference's `formatArg` does.
pub fn format_value(value: &Value) -> String {
    match value {
        Value::Object(_) | Value::Array(_) | Value::Null => {
            serde_json::to_string(value).unwrap_or_default()
        }
        other => js_string(other),
    }
}

fn js_string(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Number(number) => match (number.as_i64(), number.as_u64(), number.as_f64()) {
            (Some(int), _, _) => int.to_string(),
            (_, Some(int), _) => int.to_string(),
            (_, _, Some(float)) => js_number(float),
            _ => number.to_string(),
        },
        Value::Bool(flag) => flag.to_string(),
        Value::Null => "null".to_string(),
        Value::Object(_) => "[object Object]".to_string(),
        Value::Array(items) => items.iter().map(js_string).collect::<Vec<_>>().join(","),
    }
}

/// JavaScript's `Number.prototype.toString()`.
pub(super) fn js_number(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if value == 0.0 {
        return "0".to_string();
    }
    if (1e-6..1e21).contains(&value.abs()) {
        return if value.fract() == 0.0 {
            format!("{value:.0}")
        } else {
            format!("{value}")
        };
    }
    let text = format!("{value:e}");
    match text.split_once('e') {
        Some((mantissa, exponent)) if !exponent.starts_with('-') => {
            format!("{mantissa}e+{exponent}")
        }
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::{exception_message, format_value, js_number, primitive_arg, text_token};
    use serde_json::json;

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        let cases = [
            (1.0, "1"),
            (1.5, "1.5"),
            (-0.0, "0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1.5e-7, "1.5e-7"),
            (123456789012.0, "123456789012"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (value, text) in cases {
            assert_eq!(js_number(value), text);
        }
    }

    #[test]
    fn arguments_become_text_as_in_puppeteer() {
        let error = json!({"type": "object", "subtype": "error", "objectId": "1",
                           "description": "Error: boom\n    at f (a.js:1:1)"});
        assert_eq!(text_token(&error), "Error: boom");
        let node = json!({"type": "object", "subtype": "node", "className": "HTMLBodyElement", "objectId": "2"});
        assert_eq!(text_token(&node), "[node HTMLBodyElement]");
        assert_eq!(
            text_token(&json!({"type": "symbol", "objectId": "3"})),
            "[symbol undefined]"
        );
        assert_eq!(text_token(&json!({"type": "undefined"})), "");
        assert_eq!(primitive_arg(&json!({"type": "undefined"})), "undefined");
        assert_eq!(
            primitive_arg(&json!({"type": "bigint", "unserializableValue": "10n"})),
            "10"
        );
        assert_eq!(
            format_value(&json!({"a": [1, "x", null]})),
            r#"{"a":[1,"x",null]}"#
        );
        assert_eq!(format_value(&json!("plain")), "plain");
    }

    #[test]
    fn exception_messages_follow_the_reference() {
        let uncaught =
            json!({"text": "Uncaught", "exception": {"description": "Error: a\nb\n    at f"}});
        assert_eq!(exception_message(&uncaught), "Uncaught Error: a\nb");
        assert_eq!(
            exception_message(&json!({"text": "Uncaught", "exception": {"type": "string"}})),
            "Uncaught "
        );
        let promise =
            json!({"text": "Uncaught (in promise)", "exception": {"description": "TypeError: x"}});
        assert_eq!(exception_message(&promise), "Uncaught (in promise)");
    }
}
