//! `compare_heapsnapshots`: the per-class difference between two heap snapshots (`--memoryDebugging`; the analysis runs in the host).

#[path = "../../heap_params.rs"]
mod heap_params;

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, memory};
use heap_params::{list_options, respond};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// A path to the base .heapsnapshot file (earlier snapshot).
    base_file_path: String,
    /// A path to the current .heapsnapshot file (later snapshot).
    current_file_path: String,
    /// Optional 0-based index of the class in the summary list to filter results, showing individual objects.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::number")]
    class_index: Option<f64>,
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

struct CompareHeapsnapshots;

impl GlobalTool for CompareHeapsnapshots {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "compare_heapsnapshots",
            Category::Memory,
            "Loads and caches two memory heapsnapshots and returns the comparison. If classIndex is provided, returns detailed diff for that class, otherwise returns summary diff.",
        )
            .read_only()
            .condition("memoryDebugging")
            .file_param("baseFilePath")
            .file_param("currentFilePath")
    }

    fn handle(p: Params, response: &mut Response) -> devtools_tool::Result<()> {
        respond(
            memory::compare(
                &p.base_file_path,
                &p.current_file_path,
                p.class_index,
                list_options(p.page_idx, p.page_size, p.max_name_length),
            ),
            response,
        )
    }
}

devtools_tool::register_global_tool!(CompareHeapsnapshots);
