//! `press_key`: presses a key or a combination such as `Control+Shift+R`.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// A key or a combination (e.g., "Enter", "Control+A", "Control++", "Control+Shift+R"). Modifiers: Control, Shift, Alt, Meta
    key: String,
    /// Whether to include a snapshot in the response. Default is false.
    include_snapshot: Option<bool>,
}

struct PressKey;

impl PageTool for PressKey {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "press_key",
            Category::Input,
            "Press a key or key combination. Use this when other input methods like fill() cannot be used (e.g., keyboard shortcuts, navigation keys, or special key combinations).",
        )
        .blocked_by_dialog()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        page.press_key(&params.key)?;
        response.line(format!("Successfully pressed key: {}", params.key));
        if params.include_snapshot.unwrap_or(false) {
            response.include_snapshot(false, None);
        }
        Ok(())
    }
}

devtools_tool::register_page_tool!(PressKey);
