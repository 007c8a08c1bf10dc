//! `reveal_in_devtools` (hidden `--devtoolsComments`, as in 1.11.0).

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // read by the comment bridge, which answers before they are used
struct Params {
    /// The target DevTools panel (e.g. "elements", "network", "sources", "console").
    panel_name: Option<String>,
    /// Optional snapshot element UID to reveal in the Elements panel.
    uid: Option<String>,
    /// Optional network request ID to reveal in the Network panel.
    reqid: Option<u32>,
}

/// 1.11.0's answers: without a DevTools window, and with one whose comment bridge is missing
/// (the bridge is a DevTools frontend feature this server does not drive).
const NOT_OPEN: &str =
    "DevTools window is not open for this page. Call open_devtools first to open DevTools.";
const UNAVAILABLE: &str = "DevTools comments are not working right now. Possible reasons: the connected Chrome version does not support DevTools comments, the feature is disabled, or the DevTools window has not finished loading. Try again later, or continue without DevTools comments.";

fn answer(page: &Page, response: &mut Response) {
    response.line(match page.devtools_open() {
        true => UNAVAILABLE,
        false => NOT_OPEN,
    });
}

struct RevealInDevtools;

impl PageTool for RevealInDevtools {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "reveal_in_devtools",
            Category::Debugging,
            "Navigate DevTools to a specified panel and highlight a target DOM node or network request. The parameters uid and reqid are mutually exclusive.",
        )
        .read_only()
        .condition("devtoolsComments")
        .number_param("reqid")
    }

    fn handle(page: &Page, _params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        answer(page, response);
        Ok(())
    }
}

devtools_tool::register_page_tool!(RevealInDevtools);
