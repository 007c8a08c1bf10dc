//! How JavaScript turns the protocol's values into strings, for the keys DevTools builds with
//! template literals, `Array.join` and `JSON.stringify`: equal keys must come out equal here.

use serde_json::Value;

/// A number as `Number.prototype.toString` prints it (`1`, `2.5`, `1e+21`).
fn number(value: &serde_json::Number) -> String {
    if let Some(int) = value.as_i64() {
        return int.to_string();
    }
    if let Some(int) = value.as_u64() {
        return int.to_string();
    }
    let float = value.as_f64().unwrap_or_default();
    if float.fract() == 0.0 && float.abs() < 1e21 {
        return format!("{float:.0}");
    }
    if float.abs() >= 1e21 {
        let text = format!("{float:e}");
        return match text.split_once('e') {
            Some((mantissa, exponent)) if !exponent.starts_with('-') => {
                format!("{mantissa}e+{exponent}")
            }
            _ => text,
        };
    }
    float.to_string()
}

/// `${value}` in a template literal; `None` is `undefined`.
pub fn template(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_string(),
        Some(Value::Null) => "null".to_string(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Number(value)) => number(value),
        Some(Value::Bool(value)) => value.to_string(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                item => template(Some(item)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".to_string(),
    }
}

/// `[a, b].join(sep)`: `undefined` and `null` parts are empty.
pub fn join(parts: &[Option<&Value>], separator: &str) -> String {
    parts
        .iter()
        .map(|part| match part {
            None | Some(Value::Null) => String::new(),
            Some(value) => template(Some(value)),
        })
        .collect::<Vec<_>>()
        .join(separator)
}

/// `JSON.stringify(value)`, keys in the order they came over the wire.
pub fn stringify(value: &Value) -> String {
    let mut out = String::new();
    write(value, None, &mut out);
    out
}

/// `JSON.stringify(value, keys)`: only `keys`, at every level, in the order of `keys`.
pub fn stringify_keys(value: &Value, keys: &[&str]) -> String {
    let mut out = String::new();
    write(value, Some(keys), &mut out);
    out
}

fn write(value: &Value, keys: Option<&[&str]>, out: &mut String) {
    match value {
        Value::Number(number_value) => out.push_str(&number(number_value)),
        Value::String(text) => out.push_str(&Value::String(text.clone()).to_string()),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write(item, keys, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            let mut first = true;
            let mut field = |name: &str, item: &Value, out: &mut String| {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&Value::String(name.to_string()).to_string());
                out.push(':');
                write(item, keys, out);
            };
            match keys {
                Some(keys) => {
                    for name in keys {
                        if let Some(item) = map.get(*name) {
                            field(name, item, out);
                        }
                    }
                }
                None => {
                    for (name, item) in map {
                        field(name, item, out);
                    }
                }
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::{join, stringify, stringify_keys, template};
    use serde_json::json;

    #[test]
    fn strings_come_out_as_javascript_builds_them() {
        assert_eq!(template(None), "undefined");
        assert_eq!(template(Some(&json!(7.0))), "7");
        assert_eq!(template(Some(&json!(2.5))), "2.5");
        assert_eq!(template(Some(&json!(1e21))), "1e+21");
        assert_eq!(template(Some(&json!(["a", null, 1]))), "a,,1");
        assert_eq!(join(&[Some(&json!("X")), None], "::"), "X::");
        let details = json!({"b": 1.0, "a": "é\"\n", "c": {"url": "u", "scriptId": "9"}});
        assert_eq!(
            stringify(&details),
            r#"{"b":1,"a":"é\"\n","c":{"url":"u","scriptId":"9"}}"#
        );
        assert_eq!(
            stringify_keys(&details, &["c", "url", "a"]),
            r#"{"c":{"url":"u"},"a":"é\"\n"}"#
        );
    }
}
