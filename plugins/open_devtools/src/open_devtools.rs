//! `open_devtools` (hidden `--devtoolsComments`, as in 1.11.0): a DevTools window for the page.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {}

struct OpenDevtools;

impl PageTool for OpenDevtools {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "open_devtools",
            Category::Debugging,
            "Open a DevTools window for the selected page.",
        )
        .read_only()
        .condition("devtoolsComments")
    }

    fn handle(page: &Page, _params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        match page.open_devtools() {
            Ok(()) => response.line("DevTools window opened successfully."),
            Err(message) => response.line(format!("Failed to open DevTools: {message}")),
        }
        response.include_pages();
        Ok(())
    }
}

devtools_tool::register_page_tool!(OpenDevtools);
