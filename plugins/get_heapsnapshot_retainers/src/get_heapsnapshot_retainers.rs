//! `get_heapsnapshot_retainers`: the objects that hold one object of a heap snapshot (`--memoryDebugging`; the analysis runs in the host).

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
    /// The node ID to get retainers for.
    #[schemars(schema_with = "heap_params::number")]
    node_id: f64,
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

struct GetHeapsnapshotRetainers;

impl GlobalTool for GetHeapsnapshotRetainers {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "get_heapsnapshot_retainers",
            Category::Memory,
            "Loads and caches a memory heapsnapshot and returns retainers for a specific node ID.",
        )
        .read_only()
        .condition("memoryDebugging")
        .file_param("filePath")
    }

    fn handle(p: Params, response: &mut Response) -> devtools_tool::Result<()> {
        respond(
            memory::retainers(
                &p.file_path,
                p.node_id,
                list_options(p.page_idx, p.page_size, p.max_name_length),
            ),
            response,
        )
    }
}

devtools_tool::register_global_tool!(GetHeapsnapshotRetainers);
