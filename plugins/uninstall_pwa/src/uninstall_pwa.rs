//! `uninstall_pwa`: uninstalls a web app; the browser closes its windows.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The manifest ID of the web app: the resolved `id` member of its manifest. If `id` is omitted, it defaults to the resolved `start_url` (e.g. "https://example.com/"). See https://w3c.github.io/manifest/#id-member.
    manifest_id: String,
}

struct UninstallPwa;

impl GlobalTool for UninstallPwa {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "uninstall_pwa",
            Category::Pwa,
            "Uninstalls a Progressive Web App identified by its manifest ID and closes any open app windows.",
        )
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        devtools_tool::pwa::uninstall(&params.manifest_id)?;
        response.line(format!(
            "Uninstalled PWA with manifest ID: {}",
            params.manifest_id
        ));
        response.include_pages();
        Ok(())
    }
}

devtools_tool::register_global_tool!(UninstallPwa);
