//! `request_human` (beyond 1.11.0, --experimentalHumanInTheLoop): a person does what the agent
//! must not or cannot (a login with a second factor, a CAPTCHA, a consent) in a live view of
//! the page; the call returns when they press Done. The host hands the live view's URL to the
//! client; this tool never sees it.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// What the person should do, in a sentence (shown to them above the page).
    #[schemars(length(min = 1, max = 500))]
    reason: String,
    /// How long to wait for the person to press Done, in seconds (default 300; never longer than the server lets one call run).
    #[schemars(range(min = 1, max = 86400))]
    timeout_seconds: Option<u32>,
}

struct RequestHuman;

impl PageTool for RequestHuman {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "request_human",
            Category::Input,
            "Ask a person to act on the selected page (a login with a second factor, a CAPTCHA, a consent dialog, anything you must not or cannot do yourself). The person gets a live view of the page, acts on it and presses Done; the call returns then (or at the timeout) and says what changed. Take a snapshot afterwards to see the page as the person left it.",
        )
        .condition("experimentalHumanInTheLoop")
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let lines = devtools_tool::human::request(page, &params.reason, params.timeout_seconds)?;
        lines.iter().for_each(|line| response.line(line));
        Ok(())
    }
}

devtools_tool::register_page_tool!(RequestHuman);
