//! A plugin's input schema is plugin code the host runs: every call's arguments are validated
//! against it. So the schema is bounded at load (size, nesting, node count), its regular
//! expressions use the linear-time engine (a backreference or look-around is refused when
//! the validator is built, instead of backtracking forever), and validation that could take
//! time runs on the blocking pool, a few at a time, under a deadline: a hostile schema can
//! never stall the async workers that serve every other call.

use serde_json::{Map, Value};
use std::sync::{Arc, LazyLock};
use std::time::Duration;
use tokio::sync::Semaphore;

pub const MAX_SCHEMA_BYTES: usize = 256 << 10;
pub const MAX_SCHEMA_DEPTH: usize = 32;
pub const MAX_SCHEMA_NODES: usize = 20_000;
/// Compiled size of one regular expression (bytes of the regex crate's program).
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// How long argument validation may take before the call is refused.
pub const VALIDATION_DEADLINE: Duration = Duration::from_secs(2);

/// Validations running on the blocking pool at once (`spawn_blocking` cannot be cancelled, so
/// their number is what bounds the threads a slow schema can hold).
static VALIDATIONS: LazyLock<Semaphore> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    Semaphore::new(cores.max(2))
});

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
    let (depth, nodes) = measure(&Value::Object(object.clone()));
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
    compile(&object)?;
    Ok(object)
}

/// Depth and number of JSON values, without recursion (the text is already bounded, but
/// this runs before anything else looks at it).
fn measure(value: &Value) -> (usize, usize) {
    let mut stack = vec![(value, 1usize)];
    let (mut depth, mut nodes) = (0, 0);
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

/// Runs `validate` (the argument check, for a schema [`is_costly`] says is costly) on the
/// blocking pool behind [`VALIDATIONS`] and under [`VALIDATION_DEADLINE`]. `None`: the
/// arguments are valid.
pub async fn validate_off_runtime(
    tool: &str,
    validate: impl FnOnce() -> Option<String> + Send + 'static,
) -> Option<String> {
    let refused = || {
        Some(format!(
            "Invalid arguments for tool {tool}: validating them against the tool's schema took longer than {} s; the call was refused.",
            VALIDATION_DEADLINE.as_secs()
        ))
    };
    let bounded = async {
        let _permit = VALIDATIONS.acquire().await.ok()?;
        tokio::task::spawn_blocking(validate).await.ok()
    };
    match tokio::time::timeout(VALIDATION_DEADLINE, bounded).await {
        Ok(Some(outcome)) => outcome,
        Ok(None) | Err(_) => refused(),
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
