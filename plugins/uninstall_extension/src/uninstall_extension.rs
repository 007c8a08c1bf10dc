//! `uninstall_extension`: removes an extension by id.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {
    /// ID of the extension to uninstall.
    id: String,
}

struct UninstallExtension;

impl GlobalTool for UninstallExtension {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "uninstall_extension",
            Category::Extensions,
            "Uninstalls a Chrome extension by its ID.",
        )
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        devtools_tool::extensions::uninstall(&params.id)?;
        response.line(format!("Extension uninstalled. Id: {}", params.id));
        Ok(())
    }
}

devtools_tool::register_global_tool!(UninstallExtension);
