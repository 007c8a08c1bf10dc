//! `restore_session` (beyond 1.11.0, `--sessionStore`): a saved session's cookies and local
//! storage back in the browser, so sites see its sign-in from their next load.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, sessions};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {
    /// The name of the saved session (see list_sessions).
    #[schemars(length(min = 1, max = 64))]
    name: String,
}

struct RestoreSession;

impl GlobalTool for RestoreSession {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "restore_session",
            Category::Navigation,
            "Restore a session saved with save_session: its cookies, local storage and IndexedDB come back into the browser, so sites see the saved sign-in from the next navigation or reload. Call list_sessions for the saved names.",
        )
        .condition("sessionStore")
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = sessions::restore(&params.name)?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_global_tool!(RestoreSession);
