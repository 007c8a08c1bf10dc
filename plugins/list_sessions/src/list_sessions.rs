//! `list_sessions` (beyond 1.11.0, `--sessionStore`): the sessions saved with `save_session`,
//! each with its counts and sites, never a value.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, sessions};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {}

struct ListSessions;

impl GlobalTool for ListSessions {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "list_sessions",
            Category::Navigation,
            "List the sessions saved with save_session: each name with how many cookies it holds, for which sites, and the origins whose storage it holds (never the values).",
        )
        .condition("sessionStore")
        .read_only()
    }

    fn handle(_params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = sessions::list_saved()?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_global_tool!(ListSessions);
