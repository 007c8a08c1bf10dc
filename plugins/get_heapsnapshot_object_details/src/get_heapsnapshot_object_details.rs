//! `get_heapsnapshot_object_details`: one object of a heap snapshot in detail (`--memoryDebugging`; the analysis runs in the host).

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
    /// The node ID to get object details for.
    #[schemars(schema_with = "heap_params::number")]
    node_id: f64,
    /// Maximum length of names before truncation. Defaults to 100.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::positive_length")]
    max_name_length: Option<u64>,
}

struct GetHeapsnapshotObjectDetails;

impl GlobalTool for GetHeapsnapshotObjectDetails {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "get_heapsnapshot_object_details",
            Category::Memory,
            "Loads and caches a memory heapsnapshot and returns detailed information about a specific object by its node ID, including size, type, distance, and DOM detachedness.",
        )
            .read_only()
            .condition("memoryDebugging")
            .file_param("filePath")
    }

    fn handle(p: Params, response: &mut Response) -> devtools_tool::Result<()> {
        respond(
            memory::object_details(&p.file_path, p.node_id, p.max_name_length),
            response,
        )
    }
}

devtools_tool::register_global_tool!(GetHeapsnapshotObjectDetails);
