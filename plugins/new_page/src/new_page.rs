//! `new_page`: opens a tab, optionally in a named isolated browser context.

use devtools_tool::{Category, Definition, Flags, GlobalTool, Response, pages};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// URL to load in a new page.
    url: String,
    /// Whether to open the page in the background without bringing it to the front. Default is false (foreground).
    background: Option<bool>,
    /// If specified, the page is created in an isolated browser context with the given name. Pages in the same browser context share cookies and storage. Pages in different browser contexts are fully isolated (useful for clean-slate testing of cookies and authentication).
    isolated_context: Option<String>,
    /// Maximum wait time in milliseconds. If set to 0, the default timeout will be used.
    timeout: Option<i64>,
}

struct NewPage;

impl GlobalTool for NewPage {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "new_page",
            Category::Navigation,
            "Open a new tab and load a URL. Use project URL if not specified otherwise.",
        )
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let timeout = params
            .timeout
            .and_then(|ms| u32::try_from(ms).ok())
            .filter(|ms| *ms > 0);
        pages::new_page(
            &params.url,
            params.background.unwrap_or(false),
            params.isolated_context.as_deref(),
            timeout,
        )?;
        response.include_pages();
        Ok(())
    }
}

devtools_tool::register_global_tool!(NewPage);
