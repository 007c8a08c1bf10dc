//! `take_heapsnapshot`: writes a V8 heap snapshot of the page to a file.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// A path to a .heapsnapshot file to save the heapsnapshot to.
    file_path: String,
}

struct TakeHeapSnapshot;

impl PageTool for TakeHeapSnapshot {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new("take_heapsnapshot", Category::Memory, "Capture a heap snapshot of the target page. Use to analyze the memory distribution of JavaScript objects and debug memory leaks.")
            .blocked_by_dialog()
            .file_param("filePath")
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = page.take_heap_snapshot(&params.file_path)?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(TakeHeapSnapshot);
