//! `execute_webmcp_tool`: runs one of the page's WebMCP tools and prints its status, output
//! and error.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The name of the WebMCP tool to execute
    tool_name: String,
    /// The JSON-stringified parameters to pass to the WebMCP tool
    input: Option<String>,
}

struct ExecuteWebMcpTool;

impl PageTool for ExecuteWebMcpTool {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "execute_webmcp_tool",
            Category::ExperimentalWebmcp,
            "Executes a WebMCP tool exposed by the page (for debugging tools, use 'execute_3p_developer_tool').",
        )
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let input = params.input.as_deref().unwrap_or("{}");
        let lines = devtools_tool::page_tools::execute_webmcp_tool(page, &params.tool_name, input)?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(ExecuteWebMcpTool);
