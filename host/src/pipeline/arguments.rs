//! Argument checks before the lock: unknown names (the reference's message) and JSON-Schema
//! validation (a message naming the parameter and the expected type).

use serde_json::{Map, Value};

/// The reference's unknown-arguments message, or `None` when every name is known.
pub fn unknown_arguments_message(
    tool: &str,
    arguments: &Map<String, Value>,
    schema: &Map<String, Value>,
) -> Option<String> {
    let expected: Vec<&str> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let unknown: Vec<&str> = arguments
        .keys()
        .map(String::as_str)
        .filter(|name| !expected.contains(name))
        .collect();
    if unknown.is_empty() {
        return None;
    }
    let quoted = |names: &[&str]| {
        names
            .iter()
            .map(|name| format!("\"{name}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (noun, pronoun) = if unknown.len() == 1 {
        ("argument", "it")
    } else {
        ("arguments", "them")
    };
    let expectation = if expected.is_empty() {
        "This tool does not accept any arguments.".to_string()
    } else {
        format!("Expected arguments: {}.", quoted(&expected))
    };
    Some(format!(
        "Unknown {noun} for tool \"{tool}\": {}. {expectation} Remove {pronoun} and retry.",
        quoted(&unknown)
    ))
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
    fn one_unknown_argument_matches_the_reference() {
        let message = unknown_arguments_message(
            "click",
            &object(json!({"uid": "1_1", "bogus": 1})),
            &click_schema(),
        );
        assert_eq!(
            message.as_deref(),
            Some(
                "Unknown argument for tool \"click\": \"bogus\". Expected arguments: \"uid\", \"dblClick\", \"includeSnapshot\". Remove it and retry."
            )
        );
    }

    #[test]
    fn several_unknown_arguments_and_no_arguments_expected() {
        let empty = object(json!({"type": "object", "properties": {}}));
        let message =
            unknown_arguments_message("list_pages", &object(json!({"a": 1, "b": 2})), &empty);
        assert_eq!(
            message.as_deref(),
            Some(
                "Unknown arguments for tool \"list_pages\": \"a\", \"b\". This tool does not accept any arguments. Remove them and retry."
            )
        );
        assert_eq!(
            unknown_arguments_message("click", &object(json!({"uid": "x"})), &click_schema()),
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
