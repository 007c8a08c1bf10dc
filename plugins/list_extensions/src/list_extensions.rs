//! `list_extensions`: the browser's extensions with id, name, version and state.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {}

struct ListExtensions;

impl GlobalTool for ListExtensions {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "list_extensions",
            Category::Extensions,
            "Lists all the Chrome extensions installed in the browser. This includes their name, ID, version, and enabled status.",
        )
        .read_only()
    }

    fn handle(_params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = devtools_tool::extensions::installed()?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_global_tool!(ListExtensions);
