//! `save_session` (beyond 1.11.0, `--sessionStore`): the session's cookies, local storage and
//! IndexedDB saved under a name, sealed with the operator's key; the answer gives counts and sites only.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, sessions};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {
    /// The name to save the session under (1 to 64 characters of A-Z, a-z, 0-9, `_`, `-` and `.`, starting with a letter or digit). Saving under an existing name replaces it.
    #[schemars(length(min = 1, max = 64))]
    name: String,
}

struct SaveSession;

impl GlobalTool for SaveSession {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "save_session",
            Category::Navigation,
            "Save the browser session's sign-ins (cookies, HttpOnly included, and the local storage and IndexedDB of the open pages' origins) under a name, sealed with the server operator's key, to restore later with restore_session, also after the server restarts. Answers with what was saved in counts and sites, never the values.",
        )
        .condition("sessionStore")
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = sessions::save(&params.name)?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_global_tool!(SaveSession);
