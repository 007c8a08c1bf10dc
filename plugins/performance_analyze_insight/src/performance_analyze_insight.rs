//! `performance_analyze_insight`: one insight of the last recorded trace.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The id for the specific insight set. Only use the ids given in the "Available insight sets" list.
    insight_set_id: String,
    /// The name of the Insight you want more information on. For example: "DocumentLatency" or "LCPBreakdown"
    insight_name: String,
}

struct AnalyzeInsight;

impl PageTool for AnalyzeInsight {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "performance_analyze_insight",
            Category::Performance,
            "Provides more detailed information on a specific Performance Insight of an insight set that was highlighted in the results of a trace recording.",
        )
        .read_only()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = page.analyze_insight(&params.insight_set_id, &params.insight_name)?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(AnalyzeInsight);
