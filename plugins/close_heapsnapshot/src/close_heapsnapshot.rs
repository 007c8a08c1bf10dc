//! `close_heapsnapshot`: forgets a loaded heap snapshot (`--memoryDebugging`; the analysis runs in the host).

#[path = "../../heap_params.rs"]
mod heap_params;

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, memory};
use heap_params::respond;
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// A path to the .heapsnapshot file to close.
    file_path: String,
}

struct CloseHeapsnapshot;

impl GlobalTool for CloseHeapsnapshot {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "close_heapsnapshot",
            Category::Memory,
            "Closes a previously loaded and cached memory heapsnapshot, freeing its memory.",
        )
        .condition("memoryDebugging")
        .file_param("filePath")
    }

    fn handle(p: Params, response: &mut Response) -> devtools_tool::Result<()> {
        respond(memory::close(&p.file_path), response)
    }
}

devtools_tool::register_global_tool!(CloseHeapsnapshot);
