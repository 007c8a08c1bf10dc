//! `navigate_page`: go to a URL, back, forward, or reload.

use devtools_tool::{
    Category, Definition, Flags, NavigateOptions, Navigation, Page, PageTool, Response,
};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum Kind {
    Url,
    Back,
    Forward,
    Reload,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum BeforeUnload {
    Accept,
    Dismiss,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Navigate the page by URL, back or forward in history, or reload.
    r#type: Option<Kind>,
    /// Target URL (only type=url)
    url: Option<String>,
    /// Whether to ignore cache on reload.
    ignore_cache: Option<bool>,
    /// Whether to auto accept or beforeunload dialogs triggered by this navigation. Default is accept.
    handle_before_unload: Option<BeforeUnload>,
    /// A JavaScript script to be executed on each new document before any other scripts for the next navigation.
    init_script: Option<String>,
    /// Maximum wait time in milliseconds. If set to 0, the default timeout will be used.
    timeout: Option<i64>,
}

struct NavigatePage;

/// How the host's refusals of a URL begin (`--javascriptEvaluation`, `--fileNavigations`,
/// browser-internal pages, invalid URLs).
const REFUSALS: [&str; 3] = [
    "Navigating to ",
    "Invalid URL: ",
    "initScript is not allowed",
];

impl PageTool for NavigatePage {
    type Params = Params;

    fn definition(flags: &Flags) -> Definition {
        let definition = Definition::new(
            "navigate_page",
            Category::Navigation,
            "Go to a URL, or back, forward, or reload. Use project URL if not specified otherwise.",
        );
        // `--no-javascript-evaluation` takes initScript away, as in the reference.
        if flags
            .get("javascriptEvaluation")
            .and_then(|value| value.as_bool())
            == Some(false)
        {
            definition.hide_param("initScript")
        } else {
            definition
        }
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let kind = match (params.r#type, &params.url) {
            (Some(kind), _) => kind,
            (None, Some(_)) => Kind::Url,
            (None, None) => return Err("Either URL or a type is required.".into()),
        };
        let target = match kind {
            Kind::Url => match params.url {
                Some(url) => Navigation::Url(url),
                None => return Err("A URL is required for navigation of type=url.".into()),
            },
            Kind::Back => Navigation::Back,
            Kind::Forward => Navigation::Forward,
            Kind::Reload => Navigation::Reload(params.ignore_cache.unwrap_or(false)),
        };
        let accept = !matches!(params.handle_before_unload, Some(BeforeUnload::Dismiss));
        let options = NavigateOptions {
            timeout_ms: params
                .timeout
                .and_then(|ms| u32::try_from(ms).ok())
                .filter(|ms| *ms > 0),
            accept_before_unload: accept,
            init_script: params.init_script,
        };
        let outcome = page.navigate(&target, &options);
        // A URL the server refuses is the call's error, not a failed navigation.
        if let Err(error) = &outcome
            && REFUSALS.iter().any(|prefix| error.starts_with(prefix))
        {
            return Err(error.clone());
        }
        response.line(match (&target, &outcome) {
            (Navigation::Url(url), Ok(_)) => format!("Successfully navigated to {url}."),
            (Navigation::Url(_), Err(error)) => {
                format!("Unable to navigate in the selected page: {error}.")
            }
            (Navigation::Back, Ok(done)) => format!("Successfully navigated back to {}.", done.url),
            (Navigation::Back, Err(error)) => {
                format!("Unable to navigate back in the selected page: {error}.")
            }
            (Navigation::Forward, Ok(done)) => {
                format!("Successfully navigated forward to {}.", done.url)
            }
            (Navigation::Forward, Err(error)) => {
                format!("Unable to navigate forward in the selected page: {error}.")
            }
            (Navigation::Reload(_), Ok(_)) => "Successfully reloaded the page.".to_string(),
            (Navigation::Reload(_), Err(error)) => {
                format!("Unable to reload the selected page: {error}.")
            }
        });
        if outcome.is_ok_and(|done| done.before_unload_handled) {
            let verb = if accept { "Accepted" } else { "Dismissed" };
            response.line(format!("{verb} a beforeunload dialog."));
        }
        response.include_pages();
        Ok(())
    }
}

devtools_tool::register_page_tool!(NavigatePage);
