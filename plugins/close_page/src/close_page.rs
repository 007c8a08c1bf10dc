//! `close_page`: closes a page; the last one stays open.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, pages};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The ID of the page to close. Call list_pages to list pages.
    page_id: u32,
}

struct ClosePage;

impl GlobalTool for ClosePage {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "close_page",
            Category::Navigation,
            "Closes the page by its index. The last open page cannot be closed.",
        )
        .number_param("pageId")
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        if !pages::close(params.page_id)? {
            response.line("The last open page cannot be closed. It is fine to keep it open.");
        }
        response.include_pages();
        Ok(())
    }
}

devtools_tool::register_global_tool!(ClosePage);
