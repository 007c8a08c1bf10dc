//! `select_page`: the page later page-scoped calls act on.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, pages};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The ID of the page to select. Call list_pages to get available pages.
    page_id: u32,
    /// Whether to focus the page and bring it to the top.
    bring_to_front: Option<bool>,
}

struct SelectPage;

impl GlobalTool for SelectPage {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "select_page",
            Category::Navigation,
            "Select a page as a context for future tool calls.",
        )
        .read_only()
        .number_param("pageId")
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        pages::select(params.page_id, params.bring_to_front.unwrap_or(false))?;
        response.include_pages();
        Ok(())
    }
}

devtools_tool::register_global_tool!(SelectPage);
