//! Slim `navigate`: loads a URL.

use devtools_tool::{
    Category, Definition, Flags, NavigateOptions, Navigation, Page, PageTool, Response,
};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {
    /// URL to navigate to
    url: String,
}

struct Navigate;

impl PageTool for Navigate {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new("navigate", Category::Navigation, "Loads a URL").condition("slim")
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let options = NavigateOptions {
            timeout_ms: Some(30_000),
            accept_before_unload: true,
            init_script: None,
        };
        let done = page.navigate(&Navigation::Url(params.url), &options)?;
        if done.before_unload_handled {
            response.line("Accepted a beforeunload dialog.");
        }
        response.line(format!("Navigated to {}.", done.url));
        Ok(())
    }
}

devtools_tool::register_page_tool!(Navigate);
