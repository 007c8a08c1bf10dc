//! `get_tab_id`: the browser's id of the tab holding the page, for clients that speak to the
//! browser directly (hidden `--experimentalInteropTools`).

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {}

struct GetTabId;

impl PageTool for GetTabId {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "get_tab_id",
            Category::Navigation,
            "Get the tab ID of the page",
        )
        .condition("experimentalInteropTools")
        .read_only()
    }

    fn handle(page: &Page, _params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let tab_id = page.tab_id()?;
        response.line(format!("Tab ID: {tab_id}"));
        Ok(())
    }
}

devtools_tool::register_page_tool!(GetTabId);
