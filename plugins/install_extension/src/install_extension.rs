//! `install_extension`: installs an unpacked extension from a folder the sandbox allows.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {
    /// Absolute path to the unpacked extension folder.
    path: String,
}

struct InstallExtension;

impl GlobalTool for InstallExtension {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "install_extension",
            Category::Extensions,
            "Installs a Chrome extension from the given path.",
        )
        .file_param("path")
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let id = devtools_tool::extensions::install(&params.path)?;
        response.line(format!("Extension installed. Id: {id}"));
        Ok(())
    }
}

devtools_tool::register_global_tool!(InstallExtension);
