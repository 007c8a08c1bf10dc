//! `wait_for`: waits until any of the texts appears, then shows a snapshot.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Non-empty list of texts. Resolves when any value appears on the page.
    #[schemars(length(min = 1))]
    text: Vec<String>,
    /// Maximum wait time in milliseconds. If set to 0, the default timeout will be used.
    timeout: Option<i64>,
}

struct WaitFor;

impl PageTool for WaitFor {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "wait_for",
            Category::Navigation,
            "Wait for the specified text to appear on the selected page.",
        )
        .read_only()
        .blocked_by_dialog()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let timeout = params
            .timeout
            .and_then(|ms| u32::try_from(ms).ok())
            .filter(|ms| *ms > 0);
        page.wait_for(&params.text, timeout)?;
        let texts = params
            .text
            .iter()
            .map(|text| format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\"")))
            .collect::<Vec<_>>()
            .join(",");
        response.line(format!("Element matching one of [{texts}] found."));
        response.include_snapshot(false, None);
        Ok(())
    }
}

devtools_tool::register_page_tool!(WaitFor);
