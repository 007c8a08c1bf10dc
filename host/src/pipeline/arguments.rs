//! Argument checks before the lock: the reference 1.11.0's zod messages for the cases it
//! reports (missing, mistyped, out-of-range, unknown), then full JSON-Schema validation for
//! anything else a schema says.

use serde_json::{Map, Value};

/// The reference 1.11.0 checks arguments with zod (strict objects) before anything else:
/// its message lists every problem as `path: message`, in schema order, unknown keys last.
/// `None` when the arguments fit the schema.
pub fn input_validation_message(
    tool: &str,
    arguments: &Map<String, Value>,
    schema: &Map<String, Value>,
) -> Option<String> {
    let mut issues = Vec::new();
    check_object(&mut issues, &[], arguments, schema);
    if issues.is_empty() {
        return None;
    }
    Some(format!(
        "Input validation error: Invalid arguments for tool {tool}: {}",
        issues.join(", ")
    ))
}

fn check_object(
    issues: &mut Vec<String>,
    path: &[String],
    object: &Map<String, Value>,
    schema: &Map<String, Value>,
) {
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // The path of a property is built only for a value that is there or missing: this runs
    // on every call, for every property of the tool's schema.
    let at = |name: &String| -> Vec<String> {
        let mut here = path.to_vec();
        here.push(name.clone());
        here
    };
    for (name, property) in properties {
        match object.get(name) {
            None if required.contains(&name.as_str()) => {
                let expected = expected_type(property.as_object().unwrap_or(&empty));
                issue(
                    issues,
                    &at(name),
                    format!("Invalid input: expected {expected}, received undefined"),
                );
            }
            None => {}
            Some(value) => check_value(
                issues,
                &at(name),
                value,
                property.as_object().unwrap_or(&empty),
            ),
        }
    }
    let unknown: Vec<String> = object
        .keys()
        .filter(|name| !properties.contains_key(*name))
        .map(|name| format!("\"{name}\""))
        .collect();
    if !unknown.is_empty() && schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        let noun = if unknown.len() == 1 { "key" } else { "keys" };
        issue(
            issues,
            path,
            format!("Unrecognized {noun}: {}", unknown.join(", ")),
        );
    }
}

fn check_value(
    issues: &mut Vec<String>,
    path: &[String],
    value: &Value,
    schema: &Map<String, Value>,
) {
    if let Some(Value::Array(options)) = schema.get("enum") {
        if !options.contains(value) {
            let listed: Vec<String> = options.iter().map(Value::to_string).collect();
            issue(
                issues,
                path,
                format!("Invalid option: expected one of {}", listed.join("|")),
            );
        }
        return;
    }
    let expected = expected_type(schema);
    let fits = match expected {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "int" => value.is_number(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    };
    if !fits {
        // zod names an integer's type `number` here, and `int` only for a fraction.
        let named = if expected == "int" {
            "number"
        } else {
            expected
        };
        issue(
            issues,
            path,
            format!(
                "Invalid input: expected {named}, received {}",
                received(value)
            ),
        );
        return;
    }
    if let Some(number) = value.as_f64() {
        if expected == "int" && number.fract() != 0.0 {
            issue(
                issues,
                path,
                "Invalid input: expected int, received number".to_string(),
            );
            return;
        }
        let kind = "number";
        if let Some(minimum) = schema.get("minimum").and_then(Value::as_f64)
            && number < minimum
        {
            issue(
                issues,
                path,
                format!("Too small: expected {kind} to be >={}", show(minimum)),
            );
        }
        if let Some(maximum) = schema.get("maximum").and_then(Value::as_f64)
            && number > maximum
        {
            issue(
                issues,
                path,
                format!("Too big: expected {kind} to be <={}", show(maximum)),
            );
        }
        if let Some(minimum) = schema.get("exclusiveMinimum").and_then(Value::as_f64)
            && number <= minimum
        {
            issue(
                issues,
                path,
                format!("Too small: expected {kind} to be >{}", show(minimum)),
            );
        }
    }
    if let Value::Array(items) = value {
        if let Some(minimum) = schema.get("minItems").and_then(Value::as_u64)
            && (items.len() as u64) < minimum
        {
            issue(
                issues,
                path,
                format!("Too small: expected array to have >={minimum} items"),
            );
        }
        if let Some(Value::Object(item_schema)) = schema.get("items") {
            for (index, item) in items.iter().enumerate() {
                let mut here = path.to_vec();
                here.push(index.to_string());
                check_value(issues, &here, item, item_schema);
            }
        }
    }
    if let Value::Object(object) = value
        && schema.contains_key("properties")
    {
        check_object(issues, path, object, schema);
    }
}

/// The schema's type in zod's words (`int` for integers).
fn expected_type(schema: &Map<String, Value>) -> &str {
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|kind| *kind != "null")
            .unwrap_or("unknown"),
        _ if schema.contains_key("enum") => "string",
        _ => "unknown",
    };
    match kind {
        "integer" => "int",
        other => other,
    }
}

fn received(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn show(number: f64) -> String {
    if number.fract() == 0.0 && number.abs() < 1e15 {
        format!("{}", number as i64)
    } else {
        number.to_string()
    }
}

fn issue(issues: &mut Vec<String>, path: &[String], message: String) {
    if path.is_empty() {
        issues.push(message);
    } else {
        issues.push(format!("{}: {message}", path.join(".")));
    }
}

/// Validates against the tool's schema; the message names the parameter and what was wrong.
pub fn validation_message(
    tool: &str,
    validator: &jsonschema::Validator,
    arguments: &Map<String, Value>,
) -> Option<String> {
    let instance = Value::Object(arguments.clone());
    let problems: Vec<String> = validator
        .iter_errors(&instance)
        .map(|error| {
            let path = error.instance_path().to_string();
            let parameter = path.trim_start_matches('/').replace('/', ".");
            if parameter.is_empty() {
                error.to_string()
            } else {
                format!("parameter \"{parameter}\": {error}")
            }
        })
        .collect();
    if problems.is_empty() {
        return None;
    }
    Some(format!(
        "Invalid arguments for tool {tool}: {}.",
        problems.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    fn click_schema() -> Map<String, Value> {
        object(json!({
            "type": "object",
            "properties": {
                "uid": {"type": "string"},
                "dblClick": {"type": "boolean"},
                "includeSnapshot": {"type": "boolean"}
            },
            "required": ["uid"]
        }))
    }

    #[test]
    fn messages_match_the_reference_zod_texts() {
        let mut schema = click_schema();
        schema.insert("additionalProperties".into(), Value::Bool(false));
        assert_eq!(
            input_validation_message("click", &object(json!({"bogus": 1})), &schema).as_deref(),
            Some(
                "Input validation error: Invalid arguments for tool click: uid: Invalid input: expected string, received undefined, Unrecognized key: \"bogus\""
            )
        );
        assert_eq!(
            input_validation_message(
                "click",
                &object(json!({"uid": 1, "dblClick": "x"})),
                &schema
            )
            .as_deref(),
            Some(
                "Input validation error: Invalid arguments for tool click: uid: Invalid input: expected string, received number, dblClick: Invalid input: expected boolean, received string"
            )
        );
        let numbers = object(json!({"type": "object", "properties": {
            "rate": {"type": "number", "minimum": 1, "maximum": 20},
            "kind": {"type": "string", "enum": ["url", "back"]},
            "texts": {"type": "array", "items": {"type": "string"}, "minItems": 1}
        }}));
        assert_eq!(
            input_validation_message(
                "t",
                &object(json!({"rate": 30, "kind": "x", "texts": []})),
                &numbers
            )
            .as_deref(),
            Some(
                "Input validation error: Invalid arguments for tool t: rate: Too big: expected number to be <=20, kind: Invalid option: expected one of \"url\"|\"back\", texts: Too small: expected array to have >=1 items"
            )
        );
        assert_eq!(
            input_validation_message("click", &object(json!({"uid": "1_1"})), &schema),
            None
        );
    }

    #[test]
    fn validation_names_parameter_and_type() {
        let validator = jsonschema::validator_for(&Value::Object(click_schema()));
        let Ok(validator) = validator else {
            panic!("schema must compile")
        };
        let message = validation_message("click", &validator, &object(json!({"uid": 5})));
        let Some(message) = message else {
            panic!("a number uid must be refused")
        };
        assert!(
            message.starts_with("Invalid arguments for tool click: parameter \"uid\""),
            "{message}"
        );
        assert!(message.contains("\"string\""), "{message}");
        let missing = validation_message("click", &validator, &object(json!({})));
        assert!(missing.is_some_and(|message| message.contains("uid")));
        assert_eq!(
            validation_message("click", &validator, &object(json!({"uid": "1_1"}))),
            None
        );
    }
}
