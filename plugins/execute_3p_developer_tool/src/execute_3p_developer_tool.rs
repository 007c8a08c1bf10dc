//! `execute_3p_developer_tool`: runs one of the page's developer tools. The parameters are
//! checked against the tool's own schema by the host before the page sees them.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The name of the tool to execute
    tool_name: String,
    /// The JSON-stringified parameters to pass to the tool
    params: Option<String>,
}

struct ExecuteThirdPartyDeveloperTool;

impl PageTool for ExecuteThirdPartyDeveloperTool {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "execute_3p_developer_tool",
            Category::ExperimentalThirdParty,
            "Executes a third-party developer tool exposed by the page.",
        )
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let arguments = params.params.as_deref().unwrap_or("{}");
        let lines =
            devtools_tool::page_tools::execute_developer_tool(page, &params.tool_name, arguments)?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(ExecuteThirdPartyDeveloperTool);
