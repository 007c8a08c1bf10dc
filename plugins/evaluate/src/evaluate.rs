//! Slim `evaluate`: runs a script and answers with its JSON result (or the error text).

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
struct Params {
    /// JS script to run on the page
    script: String,
}

struct Evaluate;

impl PageTool for Evaluate {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "evaluate",
            Category::Debugging,
            "Evaluates a JavaScript script",
        )
        .blocked_by_dialog()
        .condition("slim")
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        // The reference answers a thrown error as text, not as a tool error.
        match page.evaluate_expression(&params.script) {
            Ok(json) => response.line(json),
            Err(message) => response.line(message),
        }
        Ok(())
    }
}

devtools_tool::register_page_tool!(Evaluate);
