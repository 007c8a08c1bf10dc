//! `handle_dialog`: accepts or dismisses the open alert, confirm, prompt or beforeunload.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum Action {
    Accept,
    Dismiss,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Whether to dismiss or accept the dialog
    action: Action,
    /// Optional prompt text to enter into the dialog.
    prompt_text: Option<String>,
}

struct HandleDialog;

impl PageTool for HandleDialog {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "handle_dialog",
            Category::Input,
            "If a browser dialog was opened, use this command to handle it",
        )
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        if page.dialog().is_none() {
            return Err("No open dialog found".into());
        }
        let accept = matches!(params.action, Action::Accept);
        // Like the reference, a dialog already closed by someone else is not an error.
        let _already_handled = page.handle_dialog(accept, params.prompt_text.as_deref());
        response.line(if accept {
            "Successfully accepted the dialog"
        } else {
            "Successfully dismissed the dialog"
        });
        response.include_pages();
        Ok(())
    }
}

devtools_tool::register_page_tool!(HandleDialog);
