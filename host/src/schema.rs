//! The one JSON Schema validator of the host, for every schema it validates against, whoever
//! wrote it: a plugin's input schema (every call's arguments), a page's tool schema (the
//! arguments an agent passes to a page's developer tool), anything a tenant may supply. A
//! schema is code the host runs on others' input, so it is bounded (size, nesting, node count),
//! its regular expressions use the linear-time engine (a backreference or look-around is
//! refused when the validator is built, instead of backtracking forever), and building or
//! validating that could take time runs as an engine job (`crate::engine`: off the async
//! workers, a few at a time, under a deadline): a hostile schema can never stall the async
//! workers, the session that waits on it, or the calls of anyone else.

use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

pub const MAX_SCHEMA_BYTES: usize = 256 << 10;
pub const MAX_SCHEMA_DEPTH: usize = 32;
pub const MAX_SCHEMA_NODES: usize = 20_000;
/// Compiled size of one regular expression (bytes of the regex crate's program).
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// How long argument validation may take before the call is refused.
pub const VALIDATION_DEADLINE: Duration = Duration::from_secs(2);

/// Parses and bounds a schema text, and checks that a validator can be built from it.
pub fn parse(text: &str) -> Result<Map<String, Value>, String> {
    if text.len() > MAX_SCHEMA_BYTES {
        return Err(format!(
            "it has {} bytes, more than the {MAX_SCHEMA_BYTES} allowed",
            text.len()
        ));
    }
    let schema: Value =
        serde_json::from_str(text).map_err(|error| format!("it is not JSON: {error}"))?;
    let Value::Object(object) = schema else {
        return Err("it is not a JSON object".into());
    };
    bound(&object)?;
    compile(&object)?;
    Ok(object)
}

/// The bounds every schema must keep before anything else looks at it: nesting and node count
/// (the text size is checked by [`parse`], or by [`bound_value`] for a parsed value).
pub fn bound(object: &Map<String, Value>) -> Result<(), String> {
    let (depth, nodes) = measure_object(object);
    if depth > MAX_SCHEMA_DEPTH {
        return Err(format!(
            "it nests {depth} levels deep, more than the {MAX_SCHEMA_DEPTH} allowed"
        ));
    }
    if nodes > MAX_SCHEMA_NODES {
        return Err(format!(
            "it has {nodes} values, more than the {MAX_SCHEMA_NODES} allowed"
        ));
    }
    Ok(())
}

/// The bounds of [`parse`] for a schema that arrived as a value (from a page): size,
/// nesting, nodes, and an object at the top.
pub fn bound_value(schema: &Value) -> Result<&Map<String, Value>, String> {
    let Value::Object(object) = schema else {
        return Err("it is not a JSON object".into());
    };
    bound(object)?;
    let bytes = schema.to_string().len();
    if bytes > MAX_SCHEMA_BYTES {
        return Err(format!(
            "it has {bytes} bytes, more than the {MAX_SCHEMA_BYTES} allowed"
        ));
    }
    Ok(object)
}

/// Validates `instance` against a schema someone else supplied (a page's tool schema): bounded,
/// built with the linear-time engine and checked as one engine job under
/// [`VALIDATION_DEADLINE`]. `Ok` holds the violations, `data<path> <message>` each, as Ajv
/// words them for the reference; `Err` says why the schema itself was refused.
pub async fn check_untrusted(schema: Value, instance: Value) -> Result<Vec<String>, String> {
    let checked = crate::engine::run(
        "validating against the schema",
        VALIDATION_DEADLINE,
        move |_| {
            let object = bound_value(&schema)?;
            let validator = compile(object)?;
            Ok(validator
                .iter_errors(&instance)
                .map(|error| format!("data{} {error}", error.instance_path()))
                .collect())
        },
    )
    .await;
    checked.map_err(|error| error.to_string())?
}

fn measure_object(object: &Map<String, Value>) -> (usize, usize) {
    let mut stack: Vec<(&Value, usize)> = object.values().map(|value| (value, 2)).collect();
    let (mut depth, mut nodes) = (1, 1);
    while let Some((value, level)) = stack.pop() {
        nodes += 1;
        depth = depth.max(level);
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|item| (item, level + 1))),
            Value::Object(map) => stack.extend(map.values().map(|item| (item, level + 1))),
            _ => {}
        }
    }
    (depth, nodes)
}

/// The validator for a (bounded) schema: linear-time regular expressions only, no remote or
/// file references (the crate is built without resolvers).
pub fn compile(schema: &Map<String, Value>) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .with_pattern_options(
            jsonschema::PatternOptions::regex()
                .size_limit(REGEX_SIZE_LIMIT)
                .dfa_size_limit(REGEX_SIZE_LIMIT),
        )
        .build(&Value::Object(schema.clone()))
        .map_err(|error| format!("it is not a valid JSON Schema for this server: {error}"))
}

/// Whether validating against this schema can cost more than a walk over the arguments:
/// regular expressions (`pattern`, `patternProperties`, `format`) or a large schema. Built-in
/// schemas are small and plain, so their calls validate inline, with no thread hop.
pub fn is_costly(schema: &Map<String, Value>) -> bool {
    const COSTLY: [&str; 4] = [
        "\"pattern\"",
        "\"patternProperties\"",
        "\"format\"",
        "\"$ref\"",
    ];
    let text = Value::Object(schema.clone()).to_string();
    text.len() > 8 << 10 || COSTLY.iter().any(|keyword| text.contains(keyword))
}

/// Runs `validate` (the argument check, for a schema [`is_costly`] says is costly) as an
/// engine job under [`VALIDATION_DEADLINE`]. `None`: the arguments are valid.
pub async fn validate_off_runtime(
    tool: &str,
    validate: impl FnOnce() -> Option<String> + Send + 'static,
) -> Option<String> {
    match crate::engine::run("validating arguments", VALIDATION_DEADLINE, move |_| {
        validate()
    })
    .await
    {
        Ok(outcome) => outcome,
        Err(_) => Some(format!(
            "Invalid arguments for tool {tool}: validating them against the tool's schema took longer than {} s; the call was refused.",
            VALIDATION_DEADLINE.as_secs()
        )),
    }
}

/// Shared validators (moved into the blocking pool).
pub type SharedValidator = Arc<jsonschema::Validator>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn backtracking_patterns_are_refused_at_load() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+\\1$"}}});
        let error = parse(&schema.to_string()).expect_err("refused");
        assert!(error.contains("not a valid JSON Schema"), "{error}");
        let lookaround =
            json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(?=a)a"}}});
        assert!(parse(&lookaround.to_string()).is_err());
        let plain = json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}});
        assert!(parse(&plain.to_string()).is_ok());
    }

    #[test]
    fn huge_or_deep_schemas_are_refused_at_load() {
        let mut deep = json!({"type": "object"});
        for _ in 0..40 {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        assert!(
            parse(&deep.to_string())
                .expect_err("refused")
                .contains("levels deep")
        );
        let big = format!("{{\"description\": \"{}\"}}", "x".repeat(MAX_SCHEMA_BYTES));
        assert!(parse(&big).expect_err("refused").contains("bytes"));
        let wide: Vec<Value> = (0..MAX_SCHEMA_NODES).map(Value::from).collect();
        let wide = json!({"type": "object", "enum": wide});
        assert!(
            parse(&wide.to_string())
                .expect_err("refused")
                .contains("values")
        );
        assert!(
            parse("[]")
                .expect_err("refused")
                .contains("not a JSON object")
        );
    }

    #[test]
    fn an_evil_pattern_validates_in_linear_time() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a|a)*(a|a)*(a|a)*b$"}}});
        let object = parse(&schema.to_string()).expect("valid");
        assert!(is_costly(&object));
        let validator = compile(&object).expect("valid");
        let started = std::time::Instant::now();
        let instance = json!({"a": "a".repeat(100_000)});
        assert!(!validator.is_valid(&instance));
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn slow_validation_is_refused_at_the_deadline_without_blocking_the_runtime() {
        let started = std::time::Instant::now();
        let outcome = validate_off_runtime("t", || {
            std::thread::sleep(VALIDATION_DEADLINE + Duration::from_millis(500));
            None
        })
        .await;
        assert!(outcome.is_some_and(|message| message.contains("took longer than")));
        assert!(started.elapsed() < VALIDATION_DEADLINE + Duration::from_millis(400));
        let plain = serde_json::from_value(
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        )
        .expect("valid");
        assert!(!is_costly(&plain));
    }
}
