//! `query_heapsnapshot_objects`: the objects of a heap snapshot that match filters (`--memoryDebugging`; the analysis runs in the host).

#[path = "../../heap_params.rs"]
mod heap_params;

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, memory};
use heap_params::{list_options, respond};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// A path to a .heapsnapshot file to read.
    file_path: String,
    /// Optional regex or text matching object class name.
    #[serde(default)]
    class_name: Option<String>,
    /// Optional property name filter for outgoing reference edges.
    #[serde(default)]
    property_name: Option<String>,
    /// Optional V8 node type filter (e.g. object, closure, string, array, code).
    #[serde(default)]
    node_type: Option<String>,
    /// Inclusive retained size range (e.g. "1MB-2MB", "-1MB", or "1MB-"). A single value is treated as a minimum.
    #[serde(default)]
    retained_size: Option<String>,
    /// Inclusive self size range (e.g. "1MB-2MB", "-1MB", or "1MB-"). A single value is treated as a minimum.
    #[serde(default)]
    self_size: Option<String>,
    /// Whether to filter for detached DOM nodes.
    #[serde(default)]
    is_detached: Option<bool>,
    /// Sort order for results. Default is retainedSize.
    #[serde(default)]
    #[schemars(extend("enum" = ["retainedSize", "selfSize", "id"]))]
    sort_by: Option<String>,
    /// The page index for pagination.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::page_idx")]
    page_idx: Option<u64>,
    /// The page size for pagination.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::page_size")]
    page_size: Option<u64>,
    /// Maximum length of names before truncation. Defaults to 100.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::positive_length")]
    max_name_length: Option<u64>,
}

struct QueryHeapsnapshotObjects;

impl GlobalTool for QueryHeapsnapshotObjects {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "query_heapsnapshot_objects",
            Category::Memory,
            "Loads and caches a memory heapsnapshot and queries objects matching specific filters (className, propertyName, nodeType, retainedSize, selfSize, isDetached, sortBy).",
        )
            .read_only()
            .condition("memoryDebugging")
            .file_param("filePath")
    }

    fn handle(p: Params, response: &mut Response) -> devtools_tool::Result<()> {
        respond(
            memory::query_objects(
                &p.file_path,
                &memory::ObjectQuery {
                    class_name: p.class_name,
                    property_name: p.property_name,
                    node_type: p.node_type,
                    retained_size: p.retained_size,
                    self_size: p.self_size,
                    is_detached: p.is_detached,
                    sort_by: match p.sort_by.as_deref() {
                        None => None,
                        Some("retainedSize") => Some(memory::NodeSort::RetainedSize),
                        Some("selfSize") => Some(memory::NodeSort::SelfSize),
                        Some("id") => Some(memory::NodeSort::Id),
                        Some(other) => return Err(format!("Invalid sortBy: {other}")),
                    },
                },
                list_options(p.page_idx, p.page_size, p.max_name_length),
            ),
            response,
        )
    }
}

devtools_tool::register_global_tool!(QueryHeapsnapshotObjects);
