//! `trigger_extension_action`: runs an extension's default action (its toolbar button) on the
//! selected page's tab.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, pages};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {
    /// ID of the extension to trigger the action for.
    id: String,
}

struct TriggerExtensionAction;

impl GlobalTool for TriggerExtensionAction {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "trigger_extension_action",
            Category::Extensions,
            "Triggers the default action of an extension by its ID.",
        )
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let page = pages::selected()?;
        devtools_tool::extensions::trigger_action(&params.id, &page)?;
        response.line(format!("Extension action triggered for ID {}", params.id));
        Ok(())
    }
}

devtools_tool::register_global_tool!(TriggerExtensionAction);
