//! `get_css_styles`: the CSS cascade of an element (matched rules, inline, inherited and
//! pseudo-element styles, their at-rule wrappers), paginated by rule.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The uid of the element on the page from the page content snapshot to inspect CSS styles for
    uid: String,
    /// Maximum number of CSS rules to return per page. Defaults to 10.
    #[schemars(range(min = 1), extend("default" = 10))]
    page_size: Option<u32>,
    /// Page number to return (0-based). Defaults to 0 (the first page).
    #[schemars(extend("default" = 0))]
    page_idx: Option<u32>,
}

struct GetCssStyles;

impl PageTool for GetCssStyles {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "get_css_styles",
            Category::Debugging,
            "Retrieve matched CSS rules, inline styles (element.style), inherited styles, custom properties, and cascade wrappers (@layer, @media, @container, @scope) for an element identified by its UID.\nRules are ordered from highest to lowest cascade precedence and include source line numbers (e.g. index:196). Active (winning) declarations have no prefix tag, while (losing) overridden declarations are prefixed with [overloaded].\nTreat the output as authoritative and complete.\nResults are paginated (10 rules per page by default); use pageIdx to page through the remaining rules. Requires a UID from take_snapshot.",
        )
        .read_only()
        .blocked_by_dialog()
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = devtools_tool::styles::get_css_styles(
            page,
            &params.uid,
            params.page_size.unwrap_or(10),
            params.page_idx.unwrap_or(0),
        )?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(GetCssStyles);
