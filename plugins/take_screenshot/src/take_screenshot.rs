//! `take_screenshot`: the viewport, the full page, or one element.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response, ScreenshotOptions};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum Format {
    Png,
    Jpeg,
    Webp,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Type of format to save the screenshot as.
    format: Option<Format>,
    /// Compression quality for JPEG and WebP formats (0-100). Higher values mean better quality but larger file sizes. Ignored for PNG format.
    #[schemars(range(min = 0, max = 100))]
    quality: Option<u32>,
    /// The uid of an element on the page from the page content snapshot. If omitted, takes a page screenshot.
    uid: Option<String>,
    /// If set to true takes a screenshot of the full page instead of the currently visible viewport. Incompatible with uid.
    full_page: Option<bool>,
    /// The absolute path, or a path relative to the current working directory, to save the screenshot to instead of attaching it to the response.
    file_path: Option<String>,
}

struct TakeScreenshot;

impl PageTool for TakeScreenshot {
    type Params = Params;

    fn definition(flags: &Flags) -> Definition {
        let default = flags
            .get("screenshotFormat")
            .and_then(|value| value.as_str())
            .unwrap_or("png")
            .to_string();
        Definition::new(
            "take_screenshot",
            Category::Debugging,
            "Take a screenshot of the page or element.",
        )
        .blocked_by_dialog()
        .file_param("filePath")
        .number_param("quality")
        .param_default("format", default.as_str())
        .param_description(
            "format",
            &format!("Type of format to save the screenshot as. Default is \"{default}\""),
        )
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let full_page = params.full_page.unwrap_or(false);
        if params.uid.is_some() && full_page {
            return Err("Providing both \"uid\" and \"fullPage\" is not allowed.".into());
        }
        let format = params.format.map(|format| match format {
            Format::Png => devtools_tool::ImageFormat::Png,
            Format::Jpeg => devtools_tool::ImageFormat::Jpeg,
            Format::Webp => devtools_tool::ImageFormat::Webp,
        });
        let screenshot = page.screenshot(&ScreenshotOptions {
            format,
            quality: params.quality,
            uid: params.uid.clone(),
            full_page,
        })?;
        response.line(match (&params.uid, full_page) {
            (Some(uid), _) => format!("Took a screenshot of node with uid \"{uid}\"."),
            (None, true) => "Took a screenshot of the full current page.".to_string(),
            (None, false) => "Took a screenshot of the current page's viewport.".to_string(),
        });
        response.attach_screenshot(&screenshot, params.file_path.as_deref());
        Ok(())
    }
}

devtools_tool::register_page_tool!(TakeScreenshot);
