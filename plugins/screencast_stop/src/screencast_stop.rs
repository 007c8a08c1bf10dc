//! `screencast_stop`: stops the page's recording and saves the video.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {}

struct ScreencastStop;

impl PageTool for ScreencastStop {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "screencast_stop",
            Category::Debugging,
            "Stops the active screencast recording on the target page.",
        )
    }

    fn handle(page: &Page, _params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = devtools_tool::screencast::stop(page)?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(ScreencastStop);
