//! `list_pages`: the open pages with their ids.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {}

struct ListPages;

impl GlobalTool for ListPages {
    type Params = Params;

    fn definition(flags: &Flags) -> Definition {
        let workers = if flags.enabled("categoryExtensions") {
            " including extension service workers"
        } else {
            ""
        };
        Definition::new(
            "list_pages",
            Category::Navigation,
            format!("Get a list of pages{workers} open in the browser."),
        )
        .read_only()
    }

    fn handle(_params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        response.include_pages();
        Ok(())
    }
}

devtools_tool::register_global_tool!(ListPages);
