//! `fill`: types into a field, picks a `<select>` option, or sets a checkbox or radio.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The uid of an element on the page from the page content snapshot
    uid: String,
    /// The value to fill in. "true" or "false" for checkboxes and toggles, "true" for radio buttons.
    value: String,
    /// Whether to include a snapshot in the response. Default is false.
    include_snapshot: Option<bool>,
}

struct Fill;

impl PageTool for Fill {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "fill",
            Category::Input,
            "Type text into an input, text area or select an option from a <select> element.",
        )
        .blocked_by_dialog()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let filled = page.fill(&params.uid, &params.value);
        // A dialog interrupts the action: the reference says so instead of failing.
        if page.dialog().is_some() {
            response.line("The element was filled out and it opened a dialog.");
            return Ok(());
        }
        filled?;
        response.line("Successfully filled out the element");
        if params.include_snapshot.unwrap_or(false) {
            response.include_snapshot(false, None);
        }
        Ok(())
    }
}

devtools_tool::register_page_tool!(Fill);
