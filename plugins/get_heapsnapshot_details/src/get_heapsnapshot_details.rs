//! `get_heapsnapshot_details`: class aggregates of a heap snapshot, optionally filtered (`--memoryDebugging`; the analysis runs in the host).

#[path = "../../heap_params.rs"]
mod heap_params;

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, memory};
use heap_params::{list_options, node_filter, respond};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// A path to a .heapsnapshot file to read.
    file_path: String,
    /// An optional filter to apply to the aggregates.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::filter_name")]
    filter_name: Option<String>,
    /// The object ID (nodeId) of the specific native context to filter by when filterName is attributedToSpecificNativeContext.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::number")]
    object_id: Option<f64>,
    /// Maximum length of names before truncation. Defaults to 100.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::positive_length")]
    max_name_length: Option<u64>,
    /// The page index for pagination of aggregates.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::page_idx")]
    page_idx: Option<u64>,
    /// The page size for pagination of aggregates.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::page_size")]
    page_size: Option<u64>,
}

struct GetHeapsnapshotDetails;

impl GlobalTool for GetHeapsnapshotDetails {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "get_heapsnapshot_details",
            Category::Memory,
            "Loads and caches a memory heapsnapshot and returns all available information including statistics, static data, and aggregated node information. Supports pagination for aggregates.",
        )
            .read_only()
            .condition("memoryDebugging")
            .file_param("filePath")
    }

    fn handle(p: Params, response: &mut Response) -> devtools_tool::Result<()> {
        respond(
            memory::details(
                &p.file_path,
                node_filter(p.filter_name, p.object_id)?,
                list_options(p.page_idx, p.page_size, p.max_name_length),
            ),
            response,
        )
    }
}

devtools_tool::register_global_tool!(GetHeapsnapshotDetails);
