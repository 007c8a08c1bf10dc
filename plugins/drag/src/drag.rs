//! `drag`: drags one element onto another.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The uid of the element to drag
    #[serde(rename = "from_uid")]
    from_uid: String,
    /// The uid of the element to drop into
    #[serde(rename = "to_uid")]
    to_uid: String,
    /// Whether to include a snapshot in the response. Default is false.
    include_snapshot: Option<bool>,
}

struct Drag;

impl PageTool for Drag {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "drag",
            Category::Input,
            "Drag an element onto another element",
        )
        .blocked_by_dialog()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        page.drag(&params.from_uid, &params.to_uid)?;
        response.line("Successfully dragged an element");
        if params.include_snapshot.unwrap_or(false) {
            response.include_snapshot(false, None);
        }
        Ok(())
    }
}

devtools_tool::register_page_tool!(Drag);
