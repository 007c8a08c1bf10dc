//! `delete_session` (beyond 1.11.0, `--sessionStore`): deletes a saved session.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, sessions};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {
    /// The name of the saved session to delete (see list_sessions).
    #[schemars(length(min = 1, max = 64))]
    name: String,
}

struct DeleteSession;

impl GlobalTool for DeleteSession {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "delete_session",
            Category::Navigation,
            "Delete a session saved with save_session.",
        )
        .condition("sessionStore")
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = sessions::delete(&params.name)?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_global_tool!(DeleteSession);
