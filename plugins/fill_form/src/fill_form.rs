//! `fill_form`: fills several form elements in one call, in order.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

/// An element to fill out
#[derive(Deserialize, schemars::JsonSchema)]
struct Element {
    /// The uid of the element to fill out
    uid: String,
    /// Value for the element. "true" or "false" for checkboxes and toggles, "true" for radio buttons.
    value: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Elements from snapshot to fill out.
    elements: Vec<Element>,
    /// Whether to include a snapshot in the response. Default is false.
    include_snapshot: Option<bool>,
}

struct FillForm;

impl PageTool for FillForm {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "fill_form",
            Category::Input,
            "Fill out multiple form elements (inputs, selects, checkboxes, radios) at once. ALWAYS prefer this tool over multiple individual 'fill' or 'click' calls when interacting with forms. It is significantly faster, more reliable, and reduces turn count. Example: Fill username, password, and check \"Remember Me\" in one call.",
        )
        .blocked_by_dialog()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        for (index, element) in params.elements.iter().enumerate() {
            let filled = page.fill(&element.uid, &element.value);
            // A dialog stops the form: the remaining elements wait until it is handled.
            if page.dialog().is_some() {
                let remaining = if index + 1 < params.elements.len() {
                    " The remaining elements were not filled out."
                } else {
                    ""
                };
                response.line(format!(
                    "Filling out the element with uid {} opened a dialog.{remaining}",
                    element.uid
                ));
                return Ok(());
            }
            filled?;
        }
        response.line("Successfully filled out the form");
        if params.include_snapshot.unwrap_or(false) {
            response.include_snapshot(false, None);
        }
        Ok(())
    }
}

devtools_tool::register_page_tool!(FillForm);
