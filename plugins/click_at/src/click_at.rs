//! `click_at`: clicks at viewport coordinates, for agents that read screenshots
//! (`--experimentalVision`).

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The x coordinate
    x: f64,
    /// The y coordinate
    y: f64,
    /// Set to true for double clicks. Default is false.
    dbl_click: Option<bool>,
    /// Whether to include a snapshot in the response. Default is false.
    include_snapshot: Option<bool>,
}

struct ClickAt;

impl PageTool for ClickAt {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "click_at",
            Category::Input,
            "Clicks at the provided coordinates",
        )
        .condition("experimentalVision")
        .blocked_by_dialog()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let double = params.dbl_click.unwrap_or(false);
        page.click_at(params.x, params.y, if double { 2 } else { 1 })?;
        response.line(if double {
            "Successfully double clicked at the coordinates"
        } else {
            "Successfully clicked at the coordinates"
        });
        if params.include_snapshot.unwrap_or(false) {
            response.include_snapshot(false, None);
        }
        Ok(())
    }
}

devtools_tool::register_page_tool!(ClickAt);
