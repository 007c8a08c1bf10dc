//! `find_in_page` (beyond 1.11.0, --experimentalScopedSnapshots): the elements whose name or role
//! matches, each with the uid to act on and the path to it, instead of the whole snapshot.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The text to look for in element names (case-insensitive) and roles, or a regular expression with `regex`.
    #[schemars(length(min = 1, max = 1000))]
    query: String,
    /// Treat `query` as a regular expression (no look-around or back-references).
    regex: Option<bool>,
    /// How many matches per page (default 20).
    #[schemars(range(min = 1))]
    page_size: Option<u32>,
    /// Which page of matches, from 0.
    page_idx: Option<u32>,
}

struct FindInPage;

impl PageTool for FindInPage {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "find_in_page",
            Category::Debugging,
            "Find elements of the target page by text or regular expression in the a11y tree, instead of reading a whole snapshot. Lists each matching element with its uid (usable as the next action's uid, and as take_snapshot's uid to see its subtree) and the path of ancestors to it.",
        )
        .read_only()
        .condition("experimentalScopedSnapshots")
        .blocked_by_dialog()
    }

    fn handle(_page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        response.include_find(
            &params.query,
            params.regex.unwrap_or(false),
            params.page_size,
            params.page_idx,
        );
        Ok(())
    }
}

devtools_tool::register_page_tool!(FindInPage);
