//! `resolve_devtools_comment` (hidden `--devtoolsComments`, as in 1.11.0).

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // read by the comment bridge, which answers before they are used
struct Params {
    /// The unique identifier of the comment thread to resolve (e.g. "comment-1").
    thread_id: String,
    /// Optional reply explanation from the AI agent to append to the resolved comment thread.
    reply_text: Option<String>,
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

struct ResolveDevtoolsComment;

impl PageTool for ResolveDevtoolsComment {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "resolve_devtools_comment",
            Category::Debugging,
            "Append an agent reply to a DevTools comment thread and mark it as resolved.",
        )
        .condition("devtoolsComments")
    }

    fn handle(page: &Page, _params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        answer(page, response);
        Ok(())
    }
}

devtools_tool::register_page_tool!(ResolveDevtoolsComment);
