//! Parameter schemas shared by the heap analysis plugins (included with `#[path]`: a file, not
//! a crate). They reproduce chrome-devtools-mcp 1.11.0's zod schemas: plain `number` ids,
//! integers bounded by `Number.MAX_SAFE_INTEGER`, the named filters.

#![allow(dead_code)]

use schemars::{Schema, SchemaGenerator, json_schema};

pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

pub const FILTER_NAMES: [&str; 7] = [
    "objectsRetainedByDetachedDomNodes",
    "objectsRetainedByConsole",
    "objectsRetainedByEventHandlers",
    "objectsRetainedByContexts",
    "sharedNativeContext",
    "noNativeContext",
    "attributedToSpecificNativeContext",
];

/// `zod.number()`.
pub fn number(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "number" })
}

/// `zod.number().int().min(1)`.
pub fn positive_length(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 1, "maximum": MAX_SAFE_INTEGER })
}

/// `zod.number().int().nonnegative()`.
pub fn page_idx(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": 0, "maximum": MAX_SAFE_INTEGER })
}

/// `zod.number().int().positive()`.
pub fn page_size(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "exclusiveMinimum": 0, "maximum": MAX_SAFE_INTEGER })
}

/// `zod.number().int()`.
pub fn integer(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "integer", "minimum": -(MAX_SAFE_INTEGER as i64), "maximum": MAX_SAFE_INTEGER })
}

pub fn filter_name(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": FILTER_NAMES })
}

/// The filter as the host takes it.
pub fn node_filter(
    name: Option<String>,
    object_id: Option<f64>,
) -> devtools_tool::Result<Option<devtools_tool::memory::NodeFilter>> {
    devtools_tool::memory::node_filter(name.as_deref(), object_id)
}

pub fn list_options(
    page_idx: Option<u64>,
    page_size: Option<u64>,
    max_name_length: Option<u64>,
) -> devtools_tool::memory::ListOptions {
    devtools_tool::memory::ListOptions {
        page_idx,
        page_size,
        max_name_length,
    }
}

/// Turns the host's lines into the response.
pub fn respond(
    lines: devtools_tool::Result<Vec<String>>,
    response: &mut devtools_tool::Response,
) -> devtools_tool::Result<()> {
    lines?.iter().for_each(|line| response.line(line));
    Ok(())
}
