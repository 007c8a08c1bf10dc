//! `launch_pwa`: opens an installed web app in its saved display mode.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The manifest ID of the web app: the resolved `id` member of its manifest. If `id` is omitted, it defaults to the resolved `start_url` (e.g. "https://example.com/"). See https://w3c.github.io/manifest/#id-member.
    manifest_id: String,
    /// Optional URL within the app to open instead of the default start URL.
    url: Option<String>,
}

struct LaunchPwa;

impl GlobalTool for LaunchPwa {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "launch_pwa",
            Category::Pwa,
            "Launches an installed Progressive Web App using its saved display mode. Optionally opens a specific URL within the same app instead of the default start URL.",
        )
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let page = devtools_tool::pwa::launch(&params.manifest_id, params.url.as_deref())?;
        response.line(format!(
            "Launched PWA with manifest ID: {} ({})",
            params.manifest_id,
            page.url()
        ));
        response.include_pages();
        Ok(())
    }
}

devtools_tool::register_global_tool!(LaunchPwa);
