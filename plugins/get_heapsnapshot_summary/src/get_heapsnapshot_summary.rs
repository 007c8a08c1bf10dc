//! `get_heapsnapshot_summary`: statistics, native contexts and the retained-by-context summary of a heap snapshot (`--memoryDebugging`; the analysis runs in the host).

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
    /// Maximum length of names before truncation. Defaults to 100.
    #[serde(default)]
    #[schemars(schema_with = "heap_params::positive_length")]
    max_name_length: Option<u64>,
}

struct GetHeapsnapshotSummary;

impl GlobalTool for GetHeapsnapshotSummary {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "get_heapsnapshot_summary",
            Category::Memory,
            "Loads and caches a memory heapsnapshot and returns snapshot summary stats, including native contexts and their sizes, and retained by context summary.",
        )
            .read_only()
            .condition("memoryDebugging")
            .file_param("filePath")
    }

    fn handle(p: Params, response: &mut Response) -> devtools_tool::Result<()> {
        respond(memory::summary(&p.file_path, p.max_name_length), response)
    }
}

devtools_tool::register_global_tool!(GetHeapsnapshotSummary);
