//! `get_os_app_state`: the badge count and file handlers of an installed web app.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The manifest ID of the web app: the resolved `id` member of its manifest. If `id` is omitted, it defaults to the resolved `start_url` (e.g. "https://example.com/"). See https://w3c.github.io/manifest/#id-member.
    manifest_id: String,
}

struct GetOsAppState;

impl GlobalTool for GetOsAppState {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "get_os_app_state",
            Category::Pwa,
            "Returns the OS integration state (badge count and registered file handlers) for an installed web app, identified by its manifest ID.",
        )
        .read_only()
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let state = devtools_tool::pwa::get_os_app_state(&params.manifest_id)?;
        response.line(format!(
            "OS app state for manifest ID: {}",
            params.manifest_id
        ));
        response.line(format!("Badge count: {}", state.badge_count));
        response.line(format!("File handlers: {}", state.file_handlers));
        Ok(())
    }
}

devtools_tool::register_global_tool!(GetOsAppState);
