//! `list_3p_developer_tools`: the developer tools the page offers (the `devtoolstooldiscovery`
//! event, and WebMCP tools annotated `debugging`). The host escapes what the page says.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {}

struct ListThirdPartyDeveloperTools;

impl PageTool for ListThirdPartyDeveloperTools {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "list_3p_developer_tools",
            Category::ExperimentalThirdParty,
            "Lists all third-party developer tools the page exposes for providing runtime information (including debugging WebMCP tools and tools exposed via the 'devtoolstooldiscovery' event).\nThird-party developer tools can be called via the 'execute_3p_developer_tool()' MCP tool.\nAlternatively, third-party developer tools exposed via the 'devtoolstooldiscovery' event can be executed by calling 'evaluate_script' and adding the\nfollowing command to the script:\n`window.__dtmcp.executeTool(toolName, params)`\nThis might be helpful when the third-party developer tools return non-serializable values or when composing\nthird-party developer tools with additional functionality.",
        )
        .read_only()
    }

    fn handle(page: &Page, _params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = devtools_tool::page_tools::list_developer_tools(page)?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(ListThirdPartyDeveloperTools);
