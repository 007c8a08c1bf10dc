//! `resolve_devtools_comment` (hidden `--devtoolsComments`, as in 1.11.0).

#[path = "../../devtools_comments.rs"]
mod devtools_comments;

use devtools_comments::answer;
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
