//! `reveal_in_devtools` (hidden `--devtoolsComments`, as in 1.11.0).

#[path = "../../devtools_comments.rs"]
mod devtools_comments;

use devtools_comments::answer;
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
