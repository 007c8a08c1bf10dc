//! `performance_stop_trace`: stops the running trace and summarises it.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The absolute file path, or a file path relative to the current working directory, to save the raw trace data. For example, trace.json.gz (compressed) or trace.json (uncompressed).
    file_path: Option<String>,
}

struct StopTrace;

impl PageTool for StopTrace {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "performance_stop_trace",
            Category::Performance,
            "Stop the active performance trace recording on the target webpage.",
        )
        .blocked_by_dialog()
        .file_param("filePath")
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = page.stop_trace(params.file_path.as_deref())?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(StopTrace);
