//! `get_devtools_comments` (hidden `--devtoolsComments`, as in 1.11.0).

#[path = "../../devtools_comments.rs"]
mod devtools_comments;

use devtools_comments::answer;
use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {}

struct GetDevtoolsComments;

impl PageTool for GetDevtoolsComments {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "get_devtools_comments",
            Category::Debugging,
            "Retrieve user comments from the DevTools window for the page.",
        )
        .read_only()
        .condition("devtoolsComments")
    }

    fn handle(page: &Page, _params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        answer(page, response);
        Ok(())
    }
}

devtools_tool::register_page_tool!(GetDevtoolsComments);
