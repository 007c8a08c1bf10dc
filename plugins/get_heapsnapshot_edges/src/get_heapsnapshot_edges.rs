//! `get_heapsnapshot_edges`: the references one object of a heap snapshot holds (`--memoryDebugging`; the analysis runs in the host).

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
    /// The node ID to get outgoing edges for.
    #[schemars(schema_with = "heap_params::number")]
    node_id: f64,
    /// Sort order for edges. Default is retainedSize.
    #[serde(default)]
    #[schemars(extend("enum" = ["retainedSize", "selfSize", "name"]))]
    sort_by: Option<String>,
    /// Inclusive retained size range (e.g. "1MB-2MB", "-1MB", or "1MB-") for target nodes. A single value is treated as a minimum. Currently, only the lower bound is applied.
    #[serde(default)]
    retained_size: Option<String>,
    /// Whether to exclude primitive target nodes. Default is true.
    #[serde(default)]
    exclude_primitives: Option<bool>,
    /// Maximum length of names before truncation. Defaults to 100.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::positive_length")]
    max_name_length: Option<u64>,
    /// The page index for pagination.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::page_idx")]
    page_idx: Option<u64>,
    /// The page size for pagination.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::page_size")]
    page_size: Option<u64>,
}

struct GetHeapsnapshotEdges;

impl GlobalTool for GetHeapsnapshotEdges {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "get_heapsnapshot_edges",
            Category::Memory,
            "Loads and caches a memory heapsnapshot and returns outgoing edges (references) for a specific node ID.",
        )
            .read_only()
            .condition("memoryDebugging")
            .file_param("filePath")
    }

    fn handle(p: Params, response: &mut Response) -> devtools_tool::Result<()> {
        respond(
            memory::edges(
                &p.file_path,
                p.node_id,
                match p.sort_by.as_deref() {
                    None => None,
                    Some("retainedSize") => Some(memory::EdgeSort::RetainedSize),
                    Some("selfSize") => Some(memory::EdgeSort::SelfSize),
                    Some("name") => Some(memory::EdgeSort::Name),
                    Some(other) => return Err(format!("Invalid sortBy: {other}")),
                },
                p.retained_size.as_deref(),
                p.exclude_primitives,
                list_options(p.page_idx, p.page_size, p.max_name_length),
            ),
            response,
        )
    }
}

devtools_tool::register_global_tool!(GetHeapsnapshotEdges);
