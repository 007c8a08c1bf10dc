//! `type_text`: types into the focused element, optionally pressing a key afterwards.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The text to type
    text: String,
    /// Optional key to press after typing. E.g., "Enter", "Tab", "Escape"
    submit_key: Option<String>,
    /// Whether to include a snapshot in the response. Default is false.
    include_snapshot: Option<bool>,
}

struct TypeText;

impl PageTool for TypeText {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "type_text",
            Category::Input,
            "Type text using keyboard into a previously focused input",
        )
        .blocked_by_dialog()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        page.type_text(&params.text, params.submit_key.as_deref())?;
        let submitted = params
            .submit_key
            .map(|key| format!(" + {key}"))
            .unwrap_or_default();
        response.line(format!("Typed text \"{}{submitted}\"", params.text));
        if params.include_snapshot.unwrap_or(false) {
            response.include_snapshot(false, None);
        }
        Ok(())
    }
}

devtools_tool::register_page_tool!(TypeText);
