//! Fuzzes what a client or a plugin controls before any plugin runs: tool arguments checked
//! against the real tools' schemas (unknown names, then JSON-Schema validation), and schemas a
//! plugin declares (compiled and applied as the loader does). Neither may panic or hang.

#![no_main]

use serde_json::{Map, Value};
use std::sync::OnceLock;

/// The pipeline's argument checks, the very file the server compiles.
#[path = "../../host/src/pipeline/arguments.rs"]
#[allow(dead_code)]
mod arguments;

/// The built-in tools' input schemas as `tools/list` serves them (see `scripts/fuzz`).
const SCHEMAS: &str = include_str!("../tool-schemas.json");

fn tools() -> &'static Vec<(String, Map<String, Value>, jsonschema::Validator)> {
    static TOOLS: OnceLock<Vec<(String, Map<String, Value>, jsonschema::Validator)>> =
        OnceLock::new();
    TOOLS.get_or_init(|| {
        let Ok(Value::Object(tools)) = serde_json::from_str::<Value>(SCHEMAS) else {
            panic!("tool-schemas.json must be an object of schemas");
        };
        tools
            .into_iter()
            .filter_map(|(name, schema)| {
                let Value::Object(schema) = schema else { return None };
                let validator = devtools_mcp::schema::compile(&schema).ok()?;
                Some((name, schema, validator))
            })
            .collect()
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    match value {
        // A client's arguments, against every real tool.
        Value::Object(arguments) => {
            for (name, schema, validator) in tools() {
                let _ = arguments::input_validation_message(name, &arguments, schema);
                let _ = arguments::validation_message(name, validator, &arguments);
            }
        }
        // [schema, arguments]: a plugin's declared schema, then a call against it.
        Value::Array(mut pair) if pair.len() == 2 => {
            let arguments = pair.pop();
            let schema = pair.pop();
            let (Some(Value::Object(schema)), Some(Value::Object(arguments))) = (schema, arguments)
            else {
                return;
            };
            // As the loader takes a plugin's schema: bounded, then built (linear-time patterns).
            if devtools_mcp::schema::bound(&schema).is_err() {
                return;
            }
            let Ok(validator) = devtools_mcp::schema::compile(&schema) else {
                return;
            };
            let _ = arguments::input_validation_message("fuzzed", &arguments, &schema);
            let _ = arguments::validation_message("fuzzed", &validator, &arguments);
        }
        _ => {}
    }
});
