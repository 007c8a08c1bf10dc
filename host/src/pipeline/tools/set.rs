//! The tools this server offers: each loaded component with its effective schema (with
//! `pageId` merged in when page-id routing is on), its validator, its gating verdict and its
//! MCP listing.

use crate::pipeline::gate;
use crate::runtime::{LoadedTool, ToolDefinition};
use rmcp::model::{MetaObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

pub struct ToolEntry {
    pub loaded: LoadedTool,
    /// The schema clients see and arguments are checked against.
    pub schema: Map<String, Value>,
    /// Built with linear-time regular expressions (see `plugin::schema`).
    pub validator: crate::schema::SharedValidator,
    /// Whether validation runs off the async workers (regular expressions, large schemas).
    pub costly_validation: bool,
    /// Why the tool is disabled by the flags, if it is.
    pub disabled: Option<String>,
    /// `pageId` was merged into the schema and routes the call.
    pub routed: bool,
    /// Contract 0.3.1: checks the structured result against the plugin's output schema, with
    /// the same bounded validator as arguments.
    pub result_validator: Option<crate::schema::SharedValidator>,
    /// The listing, with the plugin's own output schema (if any) in `output_schema`: what a
    /// client is shown is made from it by `output_schema::declared`.
    pub listing: Tool,
}

impl ToolEntry {
    pub fn definition(&self) -> &ToolDefinition {
        &self.loaded.definition
    }

    /// Over MCP a disabled tool is not listed; with CLI semantics it is (and explains itself).
    pub fn listed(&self, via_cli: bool) -> bool {
        self.disabled.is_none() || via_cli
    }
}

/// Tools by name (sorted, as the reference sorts them).
pub struct ToolSet {
    tools: BTreeMap<String, ToolEntry>,
}

impl ToolSet {
    /// `page_id_routing` is the effective flag (already off in slim mode).
    pub fn new(
        tools: Vec<LoadedTool>,
        flags: &Map<String, Value>,
        page_id_routing: bool,
    ) -> Result<ToolSet, String> {
        let mut entries = BTreeMap::new();
        for loaded in tools {
            let routed = page_id_routing && loaded.definition.page_scoped;
            let mut schema = if routed {
                with_page_id(&loaded.input_schema)
            } else {
                loaded.input_schema.clone()
            };
            // Arguments are checked strictly (zod's `strict()` in the reference 1.11.0):
            // unknown names are refused, and the listing says so.
            schema.insert("additionalProperties".into(), Value::Bool(false));
            let validator = crate::schema::compile(&schema).map_err(|error| {
                format!(
                    "Plugin {} has an invalid input schema: {error}",
                    loaded.source.display()
                )
            })?;
            let costly_validation = crate::schema::is_costly(&schema);
            let disabled = gate::disabled_message(&loaded.definition, flags);
            let result_validator = match &loaded.output_schema {
                Some(output) => Some(Arc::new(crate::schema::compile(output).map_err(
                    |error| {
                        format!(
                            "Plugin {} has an invalid output schema: {error}",
                            loaded.source.display()
                        )
                    },
                )?)),
                None => None,
            };
            let mut listing = listing(&loaded.definition, &schema);
            listing.output_schema = loaded.output_schema.clone().map(Arc::new);
            entries.insert(
                loaded.definition.name.clone(),
                ToolEntry {
                    loaded,
                    schema,
                    validator: Arc::new(validator),
                    costly_validation,
                    disabled,
                    routed,
                    result_validator,
                    listing,
                },
            );
        }
        Ok(ToolSet { tools: entries })
    }

    pub fn get(&self, name: &str) -> Option<&ToolEntry> {
        self.tools.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = &ToolEntry> {
        self.tools.values()
    }

    /// What `tools/list` shows.
    pub fn listings(&self, via_cli: bool) -> Vec<Tool> {
        self.iter()
            .filter(|tool| tool.listed(via_cli))
            .map(|tool| tool.listing.clone())
            .collect()
    }
}

/// The reference merges a required `pageId` first into page-scoped tools' schemas.
fn with_page_id(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut merged = schema.clone();
    let mut properties = Map::new();
    properties.insert(
        "pageId".into(),
        json!({ "type": "number", "description": "Targets a specific page by ID." }),
    );
    if let Some(Value::Object(existing)) = schema.get("properties") {
        for (name, property) in existing {
            properties
                .entry(name.clone())
                .or_insert_with(|| property.clone());
        }
    }
    merged.insert("properties".into(), Value::Object(properties));
    let mut required = vec![Value::from("pageId")];
    if let Some(Value::Array(existing)) = schema.get("required") {
        required.extend(existing.iter().filter(|name| *name != "pageId").cloned());
    }
    merged.insert("required".into(), Value::Array(required));
    merged
}

/// The MCP tool: name, description, schema, read-only hint and title; the reference's
/// non-standard `category` and `conditions` annotations travel in `_meta`.
fn listing(definition: &ToolDefinition, schema: &Map<String, Value>) -> Tool {
    let (category, _, _) =
        crate::runtime::definition::category_info(definition.annotations.category);
    let mut annotations = ToolAnnotations::new().read_only(definition.annotations.read_only_hint);
    annotations.title = definition.annotations.title.clone();
    let mut tool = Tool::new(
        definition.name.clone(),
        definition.description.clone(),
        Arc::new(schema.clone()),
    )
    .with_annotations(annotations);
    let mut meta = Map::new();
    meta.insert("category".into(), Value::from(category));
    if !definition.annotations.conditions.is_empty() {
        meta.insert(
            "conditions".into(),
            json!(definition.annotations.conditions),
        );
    }
    tool.meta = Some(MetaObject(meta));
    tool
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_id_is_merged_first_and_required() {
        let schema = json!({"type": "object", "properties": {"uid": {"type": "string"}}, "required": ["uid"]});
        let Some(schema) = schema.as_object() else {
            panic!("object")
        };
        let merged = with_page_id(schema);
        let names: Vec<&String> = merged["properties"]
            .as_object()
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        assert_eq!(names, ["pageId", "uid"]);
        assert_eq!(merged["required"], json!(["pageId", "uid"]));
    }
}
