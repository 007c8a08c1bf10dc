//! `list_webmcp_tools`: the WebMCP tools the page registered (debugging ones excluded). The
//! host escapes what the page says.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {}

struct ListWebMcpTools;

impl PageTool for ListWebMcpTools {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "list_webmcp_tools",
            Category::ExperimentalWebmcp,
            "Lists all WebMCP tools the page exposes (excluding debugging tools, which are exposed via 'list_3p_developer_tools').",
        )
        .read_only()
    }

    fn handle(page: &Page, _params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = devtools_tool::page_tools::list_webmcp_tools(page)?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(ListWebMcpTools);
