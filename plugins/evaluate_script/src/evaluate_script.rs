//! `evaluate_script`: runs a JavaScript function in the page and returns its JSON result.

use devtools_tool::{Category, Definition, EvaluateOptions, Flags, GlobalTool, Response, pages};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Targets a specific page by ID.
    page_id: Option<u32>,
    /// A JavaScript function declaration to be executed by the tool in the currently selected page.
    /// Example without arguments: `() => document.title` or `async () => await fetch("example.com")`.
    /// Example with arguments: `(el) => el.innerText`
    function: String,
    /// An optional list of arguments to pass to the function.
    args: Option<Vec<String>>,
    /// The absolute or relative path to a file to save the script output to. If omitted, the output is returned inline.
    file_path: Option<String>,
    /// Handle dialogs while execution. "accept", "dismiss", or string for response of window.prompt. Defaults to accept.
    dialog_action: Option<String>,
    /// Whether to wait for the DOM to settle. Pass false if the script only reads data. Defaults to true.
    wait_for_stable_dom: Option<bool>,
}

struct EvaluateScript;

impl GlobalTool for EvaluateScript {
    type Params = Params;

    fn definition(flags: &Flags) -> Definition {
        let definition = Definition::new(
            "evaluate_script",
            Category::Debugging,
            "Evaluate a JavaScript function inside the currently selected page. Returns the response as JSON, so returned values have to be JSON-serializable.",
        )
        .blocked_by_dialog()
        .file_param("filePath");
        // The reference adds `pageId` itself (it is not page-scoped) when routing is on.
        if flags.enabled("experimentalPageIdRouting") && !flags.enabled("slim") {
            definition.require_param("pageId")
        } else {
            definition.hide_param("pageId")
        }
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let page = match params.page_id {
            Some(id) => pages::get(id)?,
            None => pages::selected()?,
        };
        let options = EvaluateOptions {
            dialog_action: params.dialog_action,
            wait_for_stable_dom: params.wait_for_stable_dom.unwrap_or(true),
        };
        let result = page.evaluate(&params.function, &params.args.unwrap_or_default(), &options)?;
        if let Some(path) = params.file_path {
            let file = response.save_file(&path, result.as_bytes(), ".json")?;
            response.line(format!("Script ran on page. Output saved to {file}."));
            return Ok(());
        }
        response.line("Script ran on page and returned:");
        response.line("```json");
        response.line(result);
        response.line("```");
        Ok(())
    }
}

devtools_tool::register_global_tool!(EvaluateScript);
