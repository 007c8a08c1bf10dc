//! `screencast_start`: starts recording a video of the page (Chrome's recorder, or ffmpeg
//! with `--experimentalScreencast`; the host decides).

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Output file path (.mp4). Uses mkdtemp to generate a unique path if not provided.
    file_path: Option<String>,
}

struct ScreencastStart;

impl PageTool for ScreencastStart {
    type Params = Params;

    fn definition(flags: &Flags) -> Definition {
        let definition = Definition::new(
            "screencast_start",
            Category::Debugging,
            "Starts recording a screencast (video) of the target page.",
        )
        .file_param("filePath");
        if flags.enabled("experimentalScreencast") {
            definition.param_description(
                "filePath",
                "Output file path (.webm,.mp4 are supported). Uses mkdtemp to generate a unique path if not provided.",
            )
        } else {
            definition
        }
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = devtools_tool::screencast::start(page, params.file_path.as_deref())?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(ScreencastStart);
