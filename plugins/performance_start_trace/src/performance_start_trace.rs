//! `performance_start_trace`: records a performance trace, by default around a reload.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response, TraceOptions};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Determines if, once tracing has started, the target page should be automatically reloaded. Navigate the page to the right URL using the navigate_page tool BEFORE starting the trace if reload or autoStop is set to true.
    reload: Option<bool>,
    /// Determines if the trace recording should be automatically stopped.
    auto_stop: Option<bool>,
    /// Whether to bypass the HTTP cache when reloading the page, to measure a cold page load. Only applies if reload is true.
    ignore_cache: Option<bool>,
    /// The absolute file path, or a file path relative to the current working directory, to save the raw trace data. For example, trace.json.gz (compressed) or trace.json (uncompressed).
    file_path: Option<String>,
}

struct StartTrace;

impl PageTool for StartTrace {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "performance_start_trace",
            Category::Performance,
            "Start a performance trace on the target webpage. Use to find frontend performance issues, Core Web Vitals (LCP, INP, CLS), and improve page load speed.",
        )
        .blocked_by_dialog()
        .param_default("reload", true)
        .param_default("autoStop", true)
        .file_param("filePath")
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = page.start_trace(&TraceOptions {
            reload: params.reload.unwrap_or(true),
            auto_stop: params.auto_stop.unwrap_or(true),
            ignore_cache: params.ignore_cache.unwrap_or(false),
            file_path: params.file_path,
        })?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(StartTrace);
