//! `resize_page`: resizes the page's content area.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {
    /// Page width
    #[schemars(range(min = 1))]
    width: u32,
    /// Page height
    #[schemars(range(min = 1))]
    height: u32,
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
        let dimension = |value: u32, name: &str| {
            if value >= 1 {
                Ok(value)
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
