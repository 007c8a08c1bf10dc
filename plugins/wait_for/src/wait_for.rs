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
    /// Beyond 1.11.0 (--experimentalScopedSnapshots): snapshot only the subtree under the element with this uid; its uids stay valid.
    uid: Option<String>,
    /// Beyond 1.11.0 (--experimentalScopedSnapshots): at most this many levels below the root (or the uid).
    depth: Option<u32>,
}

struct WaitFor;

/// `uid` and `depth` exist only with --experimentalScopedSnapshots: the default schema is 1.11.0's.
fn scoped(definition: Definition, flags: &Flags) -> Definition {
    match flags.enabled("experimentalScopedSnapshots") {
        true => definition,
        false => definition.hide_param("uid").hide_param("depth"),
    }
}

impl PageTool for WaitFor {
    type Params = Params;

    fn definition(flags: &Flags) -> Definition {
        let definition = Definition::new(
            "wait_for",
            Category::Navigation,
            "Wait for the specified text to appear on the selected page.",
        )
        .read_only()
        .blocked_by_dialog();
        scoped(definition, flags)
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
        response.include_scoped_snapshot(false, None, params.uid, params.depth);
        Ok(())
    }
}

devtools_tool::register_page_tool!(WaitFor);
