//! Slim `screenshot`: saves a PNG of the viewport to a temp file and answers with its path.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response, ScreenshotOptions};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {}

struct Screenshot;

impl PageTool for Screenshot {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new("screenshot", Category::Debugging, "Takes a screenshot")
            .blocked_by_dialog()
            .condition("slim")
    }

    fn handle(page: &Page, _params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let options = ScreenshotOptions {
            format: Some(devtools_tool::ImageFormat::Png),
            quality: None,
            uid: None,
            full_page: false,
        };
        let shot = page.screenshot(&options)?;
        let path = response.save_temp_file("screenshot.png", &shot.data)?;
        response.line(path);
        Ok(())
    }
}

devtools_tool::register_page_tool!(Screenshot);
