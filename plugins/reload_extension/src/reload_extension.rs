//! `reload_extension`: loads an unpacked extension again from its folder.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {
    /// ID of the extension to reload.
    id: String,
}

struct ReloadExtension;

impl GlobalTool for ReloadExtension {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "reload_extension",
            Category::Extensions,
            "Reloads an unpacked Chrome extension by its ID.",
        )
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        devtools_tool::extensions::reload(&params.id)?;
        response.line("Extension reloaded.");
        Ok(())
    }
}

devtools_tool::register_global_tool!(ReloadExtension);
