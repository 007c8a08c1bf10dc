//! `resize_page`: resizes the page's content area.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {
    /// Page width
    width: f64,
    /// Page height
    height: f64,
}

struct ResizePage;

impl PageTool for ResizePage {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "resize_page",
            Category::Emulation,
            "Resizes the page's window so that the page has specified dimension",
        )
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let dimension = |value: f64, name: &str| {
            if value.is_finite() && value >= 1.0 && value <= f64::from(u32::MAX) {
                Ok(value.round() as u32)
            } else {
                Err(format!("The {name} must be a positive number of pixels."))
            }
        };
        page.resize(
            dimension(params.width, "width")?,
            dimension(params.height, "height")?,
        )?;
        response.include_pages();
        Ok(())
    }
}

devtools_tool::register_page_tool!(ResizePage);
