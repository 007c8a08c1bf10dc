//! `analyze_heapsnapshot_contexts`: closure contexts holding dead captured variables in a heap snapshot (`--memoryDebugging`; the analysis runs in the host).

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
    /// Inclusive range for the dead-field score of a context (e.g. "10KB", "1MB-2MB", "-1MB", or "1MB-"). A single value is treated as a minimum.
    #[serde(default)]
    retained_size: Option<String>,
    /// Only return contexts declared by the scope with this ScopeInfo node id, as reported in the scope header of a previous call.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::integer")]
    scope_info_node_id: Option<i64>,
    /// Maximum length of names before truncation. Defaults to 100.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::positive_length")]
    max_name_length: Option<u64>,
    /// The zero-based page index. Defaults to 0.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::page_idx")]
    page_idx: Option<u64>,
    /// The number of contexts to return per page. Defaults to 20.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::page_size")]
    page_size: Option<u64>,
}

struct AnalyzeHeapsnapshotContexts;

impl GlobalTool for AnalyzeHeapsnapshotContexts {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "analyze_heapsnapshot_contexts",
            Category::Memory,
            "Loads and caches a memory heapsnapshot to identify and rank closure contexts holding dead captured fields—variables no remaining live closure can read. Scopes are ranked globally by the retained size of these dead values to provide a prioritizing heuristic, rather than an exact measure of reclaimable bytes.",
        )
            .read_only()
            .condition("memoryDebugging")
            .file_param("filePath")
    }

    fn handle(p: Params, response: &mut Response) -> devtools_tool::Result<()> {
        respond(
            memory::analyze_contexts(
                &p.file_path,
                p.retained_size.as_deref(),
                p.scope_info_node_id,
                list_options(p.page_idx, p.page_size, p.max_name_length),
            ),
            response,
        )
    }
}

devtools_tool::register_global_tool!(AnalyzeHeapsnapshotContexts);
