//! `get_console_message`: one console message in detail.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {
    /// The msgid of a console message on the page from the listed console messages
    msgid: u32,
}

struct GetConsoleMessage;

impl PageTool for GetConsoleMessage {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "get_console_message",
            Category::Debugging,
            "Gets a console message by its ID. You can get all messages by calling list_console_messages.",
        )
        .read_only()
        .number_param("msgid")
    }

    fn handle(_page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        response.include_console_message(params.msgid);
        Ok(())
    }
}

devtools_tool::register_page_tool!(GetConsoleMessage);
