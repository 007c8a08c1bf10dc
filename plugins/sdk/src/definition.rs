//! A tool's definition, computed from the server's flags.

use crate::__bindings::exports::devtools::tool::tool as wit_tool;
use crate::Category;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The server's parsed flags (camelCase names, as the reference's parsed arguments).
pub struct Flags(Map<String, Value>);

impl Flags {
    pub(crate) fn parse(json: &str) -> Flags {
        match serde_json::from_str(json) {
            Ok(Value::Object(map)) => Flags(map),
            _ => Flags(Map::new()),
        }
    }

    /// Whether a flag is set to a truthy value (`true`, a non-empty string, a non-zero number).
    pub fn enabled(&self, name: &str) -> bool {
        match self.0.get(name) {
            Some(Value::Bool(value)) => *value,
            Some(Value::String(value)) => !value.is_empty(),
            Some(Value::Number(value)) => value.as_f64().is_some_and(|n| n != 0.0),
            Some(Value::Array(values)) => !values.is_empty(),
            Some(Value::Object(_)) => true,
            Some(Value::Null) | None => false,
        }
    }

    /// A flag's raw value.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }
}

/// What a tool tells the host about itself. The JSON Schema comes from the parameters struct.
pub struct Definition {
    name: String,
    description: String,
    category: Category,
    title: Option<String>,
    read_only: bool,
    conditions: Vec<String>,
    blocked_by_dialog: bool,
    file_params: Vec<String>,
    hidden_params: Vec<String>,
    required_params: Vec<String>,
    param_descriptions: Vec<(String, String)>,
    param_defaults: Vec<(String, Value)>,
    number_params: Vec<String>,
    /// The JSON Schema of the tool's structured results (contract 0.3.1), if it has them.
    output_schema: Option<Value>,
}

impl Definition {
    pub fn new(name: &str, category: Category, description: impl Into<String>) -> Self {
        Definition {
            name: name.to_string(),
            description: description.into(),
            category,
            title: None,
            read_only: false,
            conditions: Vec::new(),
            blocked_by_dialog: false,
            file_params: Vec::new(),
            hidden_params: Vec::new(),
            required_params: Vec::new(),
            param_descriptions: Vec::new(),
            param_defaults: Vec::new(),
            number_params: Vec::new(),
            output_schema: None,
        }
    }

    /// Declares that every successful call returns a structured result of type `O` beside its
    /// text (set with [`crate::Response::structured`]). Its JSON Schema is derived from the
    /// type as the parameters' is; the host lists it as the tool's `outputSchema` (under
    /// `result`) and refuses a result that does not match it.
    pub fn output<O: schemars::JsonSchema>(mut self) -> Self {
        let settings = SchemaSettings::draft2020_12().with(|settings| {
            settings.inline_subschemas = true;
        });
        let mut schema = settings
            .into_generator()
            .into_root_schema_for::<O>()
            .to_value();
        if let Some(object) = schema.as_object_mut() {
            object.remove("title");
        }
        self.output_schema = Some(schema);
        self
    }

    /// Sets the MCP `readOnlyHint`.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// The host refuses the call while a dialog is open on the target page.
    pub fn blocked_by_dialog(mut self) -> Self {
        self.blocked_by_dialog = true;
        self
    }

    /// The tool is enabled only when this server flag is truthy.
    pub fn condition(mut self, flag: &str) -> Self {
        self.conditions.push(flag.to_string());
        self
    }

    /// A human-friendly title.
    pub fn title(mut self, title: &str) -> Self {
        self.title = Some(title.to_string());
        self
    }

    /// This parameter holds a file path: the host checks it against the sandbox first.
    pub fn file_param(mut self, name: &str) -> Self {
        self.file_params.push(name.to_string());
        self
    }

    /// Leaves a field of the parameters struct out of the schema (for flag-dependent params).
    pub fn hide_param(mut self, name: &str) -> Self {
        self.hidden_params.push(name.to_string());
        self
    }

    /// Marks a field as required although its Rust type is optional (flag-dependent params).
    pub fn require_param(mut self, name: &str) -> Self {
        self.required_params.push(name.to_string());
        self
    }

    /// Replaces a parameter's description (for descriptions that depend on flags).
    pub fn param_description(mut self, name: &str, description: &str) -> Self {
        self.param_descriptions
            .push((name.to_string(), description.to_string()));
        self
    }

    /// Lists a default for a parameter in the schema (as zod's `.default()` does); the handler
    /// still applies it.
    pub fn param_default(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.param_defaults.push((name.to_string(), value.into()));
        self
    }

    /// Lists an integer parameter as a plain JSON `number` (zod's `number()`), as the
    /// reference does for ids.
    pub fn number_param(mut self, name: &str) -> Self {
        self.number_params.push(name.to_string());
        self
    }

    pub(crate) fn into_wit<P: schemars::JsonSchema>(
        self,
        page_scoped: bool,
    ) -> wit_tool::ToolDefinition {
        let schema = self.schema::<P>();
        if let Some(output) = &self.output_schema {
            crate::__bindings::devtools::tool::response::declare_output_schema(&output.to_string());
        }
        wit_tool::ToolDefinition {
            name: self.name,
            description: self.description,
            annotations: wit_tool::Annotations {
                title: self.title,
                category: self.category,
                read_only_hint: self.read_only,
                conditions: self.conditions,
            },
            input_schema: schema.to_string(),
            page_scoped,
            blocked_by_dialog: self.blocked_by_dialog,
            file_params: self.file_params,
        }
    }

    /// The parameters' JSON Schema in the shape MCP clients expect (and the reference 1.11.0
    /// lists): an inline draft 2020-12 object schema whose optional fields are plain types
    /// (not `["string", "null"]`).
    fn schema<P: schemars::JsonSchema>(&self) -> Value {
        let settings = SchemaSettings::draft2020_12().with(|settings| {
            settings.inline_subschemas = true;
        });
        let mut schema = settings
            .into_generator()
            .into_root_schema_for::<P>()
            .to_value();
        let Some(object) = schema.as_object_mut() else {
            return schema;
        };
        object.remove("title");
        object.insert("type".into(), Value::from("object"));
        let properties = object
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(properties) = properties.as_object_mut() {
            for hidden in &self.hidden_params {
                // `remove` would swap the last parameter into its place; keep the order.
                properties.shift_remove(hidden);
            }
            for name in &self.number_params {
                if let Some(Value::Object(property)) = properties.get_mut(name) {
                    as_number(property);
                }
            }
            properties.values_mut().for_each(like_zod);
            for (name, description) in &self.param_descriptions {
                if let Some(Value::Object(property)) = properties.get_mut(name) {
                    property.insert("description".into(), Value::from(description.as_str()));
                }
            }
            for (name, value) in &self.param_defaults {
                if let Some(Value::Object(property)) = properties.get_mut(name) {
                    property.insert("default".into(), value.clone());
                }
            }
        }
        let mut required: Vec<Value> = match object.remove("required") {
            Some(Value::Array(values)) => values,
            _ => Vec::new(),
        };
        required.retain(|name| !self.hidden_params.iter().any(|hidden| name == hidden));
        for name in &self.required_params {
            if !required.iter().any(|value| value == name) {
                required.push(Value::from(name.as_str()));
            }
        }
        if !required.is_empty() {
            object.insert("required".into(), Value::Array(required));
        }
        schema
    }
}

/// JavaScript's largest safe integer: zod's bounds of an `int()`.
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// `integer` (of an unsigned Rust type) as a plain `number`, without the implied `minimum: 0`.
fn as_number(property: &mut Map<String, Value>) {
    let unsigned = property
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| format.starts_with('u'));
    property.insert("type".into(), Value::from("number"));
    property.remove("format");
    if unsigned
        && property.get("minimum") == Some(&Value::from(0))
        && !property.contains_key("maximum")
    {
        property.remove("minimum");
    }
}

/// The shape zod gives a parameter: optional fields are expressed by `required`, so
/// `Option<T>`'s null branch goes (from `type` and from `enum`); Rust's number formats go; an
/// integer is bounded by JavaScript's safe integers, and `minimum: 1` reads as zod's
/// `positive()`, `exclusiveMinimum: 0`. Array items and object properties get the same.
fn like_zod(property: &mut Value) {
    strip_null(property);
    let Some(object) = property.as_object_mut() else {
        return;
    };
    let format = object.remove("format");
    if object.get("type") == Some(&Value::from("integer")) {
        if object.get("minimum") == Some(&Value::from(1)) {
            object.remove("minimum");
            object.insert("exclusiveMinimum".into(), Value::from(0));
        }
        let signed = format
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|format| format.starts_with("int"));
        if signed && !object.contains_key("minimum") {
            object.insert("minimum".into(), Value::from(-MAX_SAFE_INTEGER));
        }
        object
            .entry("maximum")
            .or_insert_with(|| Value::from(MAX_SAFE_INTEGER));
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|value| !value.is_null());
    }
    if let Some(items) = object.get_mut("items") {
        like_zod(items);
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        properties.values_mut().for_each(like_zod);
    }
}

/// Optional fields are expressed by `required`, as zod does, so `Option<T>`'s null branch goes.
fn strip_null(property: &mut Value) {
    let Some(object) = property.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|kind| kind != "null");
        if types.len() == 1 {
            let single = types.remove(0);
            object.insert("type".into(), single);
        }
    }
    if let Some(Value::Array(branches)) = object.get("anyOf") {
        let non_null: Vec<&Value> = branches
            .iter()
            .filter(|branch| branch.get("type").is_none_or(|kind| kind != "null"))
            .collect();
        if let [only] = non_null.as_slice()
            && let Some(inner) = only.as_object()
        {
            let inner = inner.clone();
            object.remove("anyOf");
            for (key, value) in inner {
                object.entry(key).or_insert(value);
            }
        }
    }
}
