//! Local-only usage records: one JSON line per tool call, appended to a file the user chose.
//!
//! The record is computed exactly as chrome-devtools-mcp computes its `tool_invocation` event
//! (`src/telemetry/transformation.ts`, `ClearcutLogger.logToolInvocation`), so the two can be
//! compared, but nothing is ever sent anywhere: this module has no network code.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};

/// Upper edges of the latency buckets in ms; coarse so that records do not fingerprint a machine.
const LATENCY_BUCKETS: [u64; 8] = [50, 100, 250, 500, 1000, 2500, 5000, 10000];

/// Upper edges of the string-length buckets: the length is logged, never the content.
const LENGTH_BUCKETS: [u64; 14] = [
    0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000,
];

/// Parameters that name page objects (snapshot uids, request and message ids); never logged.
const PARAM_BLOCKLIST: [&str; 3] = ["uid", "reqid", "msgid"];

/// The first bucket at or above `value`, or the last bucket when `value` is above all of them.
fn bucketize(buckets: &[u64], value: u64) -> u64 {
    let last = buckets.last().copied().unwrap_or(value);
    buckets
        .iter()
        .copied()
        .find(|&b| b >= value)
        .unwrap_or(last)
}

/// The latency bucket in ms: the first of 50…10000 at or above the latency; above 10 s is 10000.
pub fn latency_bucket(latency: Duration) -> u64 {
    let ms = u64::try_from(latency.as_millis()).unwrap_or(u64::MAX);
    bucketize(&LATENCY_BUCKETS, ms)
}

/// Removes a `_` directly before an ASCII digit (`list_3p_x` → `list3p_x`), as upstream does
/// because its metrics registry cannot hold such names.
fn strip_underscore_before_number(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '_' && chars.peek().is_some_and(char::is_ascii_digit) {
            continue;
        }
        out.push(c);
    }
    out
}

/// The parameter kinds upstream can log (`ZodString`, `ZodNumber`, `ZodBoolean`, `ZodArray`,
/// `ZodEnum`); an enum carries its allowed values.
#[derive(Debug, PartialEq)]
enum Kind {
    String,
    Number,
    Boolean,
    Array,
    Enum(Vec<Value>),
}

/// Resolves a property's JSON Schema to a [`Kind`], looking through the JSON Schema forms of
/// upstream's optional/default/nullable/effects wrappers: `type: [T, "null"]`, `anyOf`/`oneOf`
/// with a null branch, a one-element `allOf`, and local `$ref`s. `None` means "not loggable".
fn kind_of(schema: &Value, root: &Value, depth: u8) -> Option<Kind> {
    if depth > 16 {
        return None; // A `$ref` cycle.
    }
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let target = root.pointer(reference.strip_prefix('#')?)?;
        return kind_of(target, root, depth + 1);
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(Kind::Enum(values.clone()));
    }
    if let Some(value) = schema.get("const") {
        return Some(Kind::Enum(vec![value.clone()]));
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        let Some(branches) = schema.get(key).and_then(Value::as_array) else {
            continue;
        };
        let mut kinds = branches
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
            .map(|b| kind_of(b, root, depth + 1))
            .collect::<Option<Vec<_>>>()?;
        if kinds.len() == 1 {
            return kinds.pop();
        }
        // Documented enum variants come out as `oneOf` of `const`s: merge them into one enum.
        if key != "allOf" && !kinds.is_empty() {
            let mut all = Vec::new();
            for kind in kinds {
                let Kind::Enum(values) = kind else {
                    return None;
                };
                all.extend(values);
            }
            return Some(Kind::Enum(all));
        }
        return None;
    }
    let ty = match schema.get("type")? {
        Value::String(ty) => ty.as_str(),
        Value::Array(types) => {
            let mut non_null = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null");
            let ty = non_null.next()?;
            if non_null.next().is_some() {
                return None;
            }
            ty
        }
        _ => return None,
    };
    match ty {
        "string" => Some(Kind::String),
        "number" | "integer" => Some(Kind::Number),
        "boolean" => Some(Kind::Boolean),
        "array" => Some(Kind::Array),
        _ => None,
    }
}

/// The logged name: camelCase to snake_case, a `_length`/`_count` suffix for strings/arrays, and
/// no `_` before a digit (upstream's `transformArgName`).
fn transform_arg_name(kind: &Kind, name: &str) -> String {
    let mut snake = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            snake.push('_');
            snake.push(c.to_ascii_lowercase());
        } else {
            snake.push(c);
        }
    }
    match kind {
        Kind::String => snake.push_str("_length"),
        Kind::Array => snake.push_str("_count"),
        _ => {}
    }
    strip_underscore_before_number(&snake)
}

/// The logged value, or `None` when `value` does not match `kind` (upstream throws there; a
/// usage record must never fail a call, so the parameter is dropped instead). Enum values must
/// also be members of the enum, so free text can never slip through as an "enum".
fn transform_value(kind: &Kind, value: &Value) -> Option<Value> {
    match (kind, value) {
        // JavaScript's `length` counts UTF-16 code units.
        (Kind::String, Value::String(s)) => {
            Some(bucketize(&LENGTH_BUCKETS, s.encode_utf16().count() as u64).into())
        }
        (Kind::Array, Value::Array(items)) => Some(items.len().into()),
        (Kind::Number, Value::Number(_)) | (Kind::Boolean, Value::Bool(_)) => Some(value.clone()),
        (Kind::Enum(values), Value::String(_) | Value::Number(_) | Value::Bool(_)) => {
            values.contains(value).then(|| value.clone())
        }
        _ => None,
    }
}

/// Sanitizes a call's parameters against the tool's params JSON Schema, so that no string
/// content, URL, path or page-object id is ever recorded: ids are dropped, strings become
/// bucketed lengths, arrays their element counts; numbers, booleans and enum values stay raw.
/// Parameters the schema does not describe, or cannot be logged safely, are dropped.
pub fn sanitize_params(params: &Map<String, Value>, input_schema: &Value) -> Map<String, Value> {
    let properties = input_schema.get("properties");
    let mut out = Map::new();
    for (name, value) in params {
        if PARAM_BLOCKLIST.contains(&name.as_str()) {
            continue;
        }
        let Some(kind) = properties
            .and_then(|p| p.get(name))
            .and_then(|s| kind_of(s, input_schema, 0))
        else {
            continue;
        };
        if let Some(logged) = transform_value(&kind, value) {
            out.insert(transform_arg_name(&kind, name), logged);
        }
    }
    out
}

/// One usage record, serialized as one JSON line.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolInvocation {
    pub tool_name: String,
    pub success: bool,
    /// Already bucketed by [`latency_bucket`].
    pub latency_ms: u64,
    /// Omitted when the call had no parameters, like upstream.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub tool_params: Map<String, Value>,
}

impl ToolInvocation {
    /// Builds the record the way upstream's `logToolInvocation` does: the tool name loses any
    /// `_` before a digit, the latency is bucketed, and the sanitized parameters are nested
    /// under `<tool_name>_params` whenever the call had parameters at all.
    pub fn new(
        tool_name: &str,
        success: bool,
        latency: Duration,
        params: &Map<String, Value>,
        input_schema: &Value,
    ) -> Self {
        let tool_name = strip_underscore_before_number(tool_name);
        let mut tool_params = Map::new();
        if !params.is_empty() {
            let sanitized = sanitize_params(params, input_schema);
            tool_params.insert(format!("{tool_name}_params"), Value::Object(sanitized));
        }
        Self {
            tool_name,
            success,
            latency_ms: latency_bucket(latency),
            tool_params,
        }
    }
}

/// Appends records as JSON lines to a local file. Cheap to clone; each line goes out in one
/// `write_all` under a mutex so concurrent calls never interleave. Recording never fails a call:
/// the first I/O error is logged once, later ones silently drop their record.
#[derive(Clone)]
pub struct TelemetrySink {
    inner: Arc<SinkInner>,
}

struct SinkInner {
    path: PathBuf,
    file: Mutex<File>,
    warned: AtomicBool,
}

impl TelemetrySink {
    /// Opens (creating if needed) `path` for appending; on Unix a new file is readable by the
    /// owner only, since it shows which tools were used when.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path)?;
        Ok(Self {
            inner: Arc::new(SinkInner {
                path: path.to_path_buf(),
                file: Mutex::new(file),
                warned: AtomicBool::new(false),
            }),
        })
    }

    /// Appends one line; serialization happens outside the lock so the lock covers one write.
    pub fn record(&self, invocation: &ToolInvocation) {
        let result = serde_json::to_vec(invocation)
            .map_err(std::io::Error::from)
            .and_then(|mut line| {
                line.push(b'\n');
                // A poisoned lock only means another writer panicked; the file itself is fine.
                let mut file = self
                    .inner
                    .file
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                file.write_all(&line)
            });
        if let Err(error) = result
            && !self.inner.warned.swap(true, Ordering::Relaxed)
        {
            let path = self.inner.path.display();
            tracing::warn!(%path, %error, "cannot write usage record; later errors are silent");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("not an object"),
        }
    }

    fn schema(properties: Value) -> Value {
        json!({"type": "object", "properties": properties})
    }

    #[test]
    fn latency_bucket_edges() {
        let ms = [
            0, 25, 50, 51, 100, 101, 250, 499, 500, 900, 1000, 2000, 2500, 4000, 5000, 6000, 10000,
            10001, 99999,
        ];
        let buckets = [
            50, 50, 50, 100, 100, 250, 250, 500, 500, 1000, 1000, 2500, 2500, 5000, 5000, 10000,
            10000, 10000, 10000,
        ];
        let cases = ms.into_iter().zip(buckets);
        for (ms, bucket) in cases {
            assert_eq!(latency_bucket(Duration::from_millis(ms)), bucket, "{ms} ms");
        }
        assert_eq!(
            latency_bucket(Duration::from_micros(50_900)),
            50,
            "sub-ms parts are truncated"
        );
        assert_eq!(latency_bucket(Duration::MAX), 10000);
    }

    #[test]
    fn filters_ids_and_transforms_strings_and_arrays() {
        let schema = schema(json!({
            "uid": {"type": "string"}, "reqid": {"type": "number"}, "msgid": {"type": "number"},
            "myString": {"type": "string"}, "myArray": {"type": "array", "items": {"type": "string"}},
            "myNumber": {"type": "number"}, "myBool": {"type": "boolean"},
            "myEnum": {"type": "string", "enum": ["a", "b"]},
        }));
        let params = obj(json!({
            "uid": "sensitive", "reqid": 3, "msgid": 4, "myString": "hello", "myArray": ["one", "two"],
            "myNumber": 42, "myBool": true, "myEnum": "a",
        }));
        let expected = json!({
            "my_string_length": 5, "my_array_count": 2, "my_number": 42, "my_bool": true, "my_enum": "a",
        });
        assert_eq!(Value::Object(sanitize_params(&params, &schema)), expected);
    }

    #[test]
    fn bucketizes_string_lengths() {
        let lengths = [0, 1, 3, 5, 10000, 10001];
        let schema = schema(Value::Object(
            lengths
                .iter()
                .map(|n| (format!("str{n}"), json!({"type": "string"})))
                .collect(),
        ));
        let params = obj(Value::Object(
            lengths
                .iter()
                .map(|&n| (format!("str{n}"), json!("a".repeat(n))))
                .collect(),
        ));
        let sanitized = sanitize_params(&params, &schema);
        for (n, bucket) in [
            (0, 0),
            (1, 1),
            (3, 5),
            (5, 5),
            (10000, 10000),
            (10001, 10000),
        ] {
            assert_eq!(
                sanitized[&format!("str{n}_length")],
                json!(bucket),
                "length {n}"
            );
        }
        // UTF-16 code units, like JavaScript: "😀" is 2, "é" is 1.
        let params = obj(json!({"str0": "😀", "str1": "é"}));
        assert_eq!(
            Value::Object(sanitize_params(&params, &schema)),
            json!({"str0_length": 2, "str1_length": 1})
        );
    }

    #[test]
    fn drops_unsupported_types() {
        // Upstream throws "Unsupported zod type"; a record must never fail a call, so it is dropped.
        let schema =
            schema(json!({"myObj": {"type": "object", "properties": {"foo": {"type": "string"}}}}));
        let params = obj(json!({"myObj": {"foo": "bar"}, "notInSchema": 1}));
        assert!(sanitize_params(&params, &schema).is_empty());
    }

    #[test]
    fn drops_values_of_the_wrong_type() {
        // Upstream throws "is not of equivalent type"; here the parameter is dropped.
        let schema = schema(json!({
            "myString": {"type": "string"}, "myEnum": {"enum": ["a", "b"]}, "n": {"type": "integer"},
        }));
        let params = obj(json!({"myString": 123, "myEnum": "secret free text", "n": null}));
        assert!(sanitize_params(&params, &schema).is_empty());
    }

    #[test]
    fn resolves_enums_and_types_through_wrappers() {
        let schema = json!({
            "type": "object",
            "properties": {
                "optional": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "withDefault": {"type": "string", "enum": ["a", "b"], "default": "a"},
                "nullable": {"anyOf": [{"$ref": "#/$defs/Mode"}, {"type": "null"}]},
                "described": {"allOf": [{"$ref": "#/$defs/Mode"}], "description": "x"},
                "documented": {"oneOf": [{"const": "a", "description": "A"}, {"const": "b"}]},
                "count": {"type": ["integer", "null"], "default": 3},
                "cyclic": {"$ref": "#/$defs/Loop"},
            },
            "$defs": {"Mode": {"type": "string", "enum": ["x", "y"]}, "Loop": {"$ref": "#/$defs/Loop"}},
        });
        let params = obj(json!({
            "optional": "b", "withDefault": "a", "nullable": "y", "described": "x", "documented": "b",
            "count": 7,
            "cyclic": "c",
        }));
        let expected = json!({
            "optional": "b", "with_default": "a", "nullable": "y", "described": "x", "documented": "b",
            "count": 7,
        });
        assert_eq!(Value::Object(sanitize_params(&params, &schema)), expected);
    }

    #[test]
    fn strips_underscore_before_number() {
        assert_eq!(
            strip_underscore_before_number("list_3p_developer_tools"),
            "list3p_developer_tools"
        );
        assert_eq!(
            strip_underscore_before_number("make_2g_network_request"),
            "make2g_network_request"
        );
        assert_eq!(
            strip_underscore_before_number("no_numbers_here"),
            "no_numbers_here"
        );
    }

    #[test]
    fn transforms_arg_names_with_numbers() {
        assert_eq!(transform_arg_name(&Kind::Number, "my3pParam"), "my3p_param");
        assert_eq!(
            transform_arg_name(&Kind::String, "my3pParam"),
            "my3p_param_length"
        );
        assert_eq!(
            transform_arg_name(&Kind::Array, "filePaths"),
            "file_paths_count"
        );
    }

    #[test]
    fn builds_invocation_like_upstream() {
        let schema = schema(json!({"uid": {"type": "string"}, "dblClick": {"type": "boolean"}}));
        let call = ToolInvocation::new(
            "list_3p_tools",
            true,
            Duration::from_millis(120),
            &obj(json!({"uid": "1_2", "dblClick": false})),
            &schema,
        );
        let expected = json!({
            "tool_name": "list3p_tools", "success": true, "latency_ms": 250,
            "tool_params": {"list3p_tools_params": {"dbl_click": false}},
        });
        assert_eq!(serde_json::to_value(&call).ok(), Some(expected));
        let bare = ToolInvocation::new("list_pages", false, Duration::ZERO, &Map::new(), &schema);
        assert_eq!(
            serde_json::to_value(&bare).ok(),
            Some(json!({"tool_name": "list_pages", "success": false, "latency_ms": 50}))
        );
    }

    #[test]
    fn sink_appends_one_json_line_per_record() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("usage.jsonl");
        let sink = TelemetrySink::open(&path)?;
        let schema = schema(json!({"url": {"type": "string"}}));
        sink.record(&ToolInvocation::new(
            "navigate_page",
            true,
            Duration::from_millis(700),
            &obj(json!({"url": "https://example.com/secret"})),
            &schema,
        ));
        sink.clone().record(&ToolInvocation::new(
            "take_snapshot",
            false,
            Duration::from_millis(30),
            &Map::new(),
            &schema,
        ));
        let text = std::fs::read_to_string(&path)?;
        assert!(!text.contains("example.com"));
        let lines: Vec<Value> = text
            .lines()
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()?;
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[0]["tool_params"],
            json!({"navigate_page_params": {"url_length": 50}})
        );
        assert_eq!(
            lines[1],
            json!({"tool_name": "take_snapshot", "success": false, "latency_ms": 50})
        );
        #[cfg(unix)]
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path)?.permissions())
                & 0o777,
            0o600
        );
        Ok(())
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn write_errors_never_fail_the_call() -> std::io::Result<()> {
        let sink = TelemetrySink::open(Path::new("/dev/full"))?; // Every write fails with ENOSPC.
        let call = ToolInvocation::new("click", true, Duration::ZERO, &Map::new(), &json!({}));
        sink.record(&call);
        sink.record(&call);
        assert!(sink.inner.warned.load(Ordering::Relaxed));
        Ok(())
    }
}
