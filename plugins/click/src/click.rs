//! `click`: clicks an element of the latest snapshot by uid.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The uid of an element on the page from the page content snapshot
    uid: String,
    /// Set to true for double clicks. Default is false.
    dbl_click: Option<bool>,
    /// Whether to include a snapshot in the response. Default is false.
    include_snapshot: Option<bool>,
}

struct Click;

impl PageTool for Click {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new("click", Category::Input, "Clicks on the provided element")
            .blocked_by_dialog()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let double = params.dbl_click.unwrap_or(false);
        let clicked = page.click(&params.uid, if double { 2 } else { 1 });
        // A dialog interrupts the action: the reference says so instead of failing.
        if page.dialog().is_some() {
            response.line(if double {
                "The element was double clicked and it opened a dialog."
            } else {
                "The element was clicked and it opened a dialog."
            });
            return Ok(());
        }
        clicked?;
        response.line(if double {
            "Successfully double clicked on the element"
        } else {
            "Successfully clicked on the element"
        });
        if params.include_snapshot.unwrap_or(false) {
            response.include_snapshot(false, None);
        }
        Ok(())
    }
}

devtools_tool::register_page_tool!(Click);
