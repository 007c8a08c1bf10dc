//! `hover`: moves the mouse over an element of the latest snapshot.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The uid of an element on the page from the page content snapshot
    uid: String,
    /// Whether to include a snapshot in the response. Default is false.
    include_snapshot: Option<bool>,
}

struct Hover;

impl PageTool for Hover {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new("hover", Category::Input, "Hover over the provided element")
            .blocked_by_dialog()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let hovered = page.hover(&params.uid);
        // A dialog interrupts the action: the reference says so instead of failing.
        if page.dialog().is_some() {
            response.line("The element was hovered and it opened a dialog.");
            return Ok(());
        }
        hovered?;
        response.line("Successfully hovered over the element");
        if params.include_snapshot.unwrap_or(false) {
            response.include_snapshot(false, None);
        }
        Ok(())
    }
}

devtools_tool::register_page_tool!(Hover);
