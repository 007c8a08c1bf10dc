//! `get_heapsnapshot_retaining_paths`: the paths from the GC roots to one object of a heap snapshot (`--memoryDebugging`; the analysis runs in the host).

#[path = "../../heap_params.rs"]
mod heap_params;

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, memory};
use heap_params::respond;
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// A path to a .heapsnapshot file to read.
    file_path: String,
    /// The node ID to get retaining paths for.
    #[schemars(schema_with = "heap_params::number")]
    node_id: f64,
    /// The maximum depth to search for retaining paths.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::number")]
    max_depth: Option<f64>,
    /// The maximum number of nodes to return.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::number")]
    max_nodes: Option<f64>,
    /// The maximum number of siblings to return.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::number")]
    max_siblings: Option<f64>,
    /// Maximum length of names before truncation. Defaults to 100.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::positive_length")]
    max_name_length: Option<u64>,
}

struct GetHeapsnapshotRetainingPaths;

impl GlobalTool for GetHeapsnapshotRetainingPaths {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "get_heapsnapshot_retaining_paths",
            Category::Memory,
            "Loads and caches a memory heapsnapshot and returns retaining paths for a specific node ID. This helps to understand why a node is not being garbage collected.",
        )
            .read_only()
            .condition("memoryDebugging")
            .file_param("filePath")
    }

    fn handle(p: Params, response: &mut Response) -> devtools_tool::Result<()> {
        respond(
            memory::retaining_paths(
                &p.file_path,
                p.node_id,
                p.max_depth,
                p.max_nodes,
                p.max_siblings,
                p.max_name_length,
            ),
            response,
        )
    }
}

devtools_tool::register_global_tool!(GetHeapsnapshotRetainingPaths);
