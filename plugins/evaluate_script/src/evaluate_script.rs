//! `evaluate_script`: runs JavaScript (a function declaration or a classic script, inline or
//! from a file) in the page and returns its JSON result.

use devtools_tool::{
    Category, Definition, DialogAction, EvaluateOptions, Flags, GlobalTool, Response, ScriptFormat,
    pages,
};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
enum Format {
    Function,
    Script,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// Targets a specific page by ID.
    page_id: Option<u32>,
    #[schemars(
        description = "JavaScript source to execute in the target page. Provide either this or sourcePath, but not both. The source is interpreted according to format.\nExample without arguments: `() => document.title` or `async () => await fetch(\"example.com\")`.\nExample with arguments: `(el) => el.innerText`\n"
    )]
    function: Option<String>,
    /// The absolute or relative path to a JavaScript file on the MCP server's local filesystem. Provide either this or function, but not both.
    source_path: Option<String>,
    /// How to interpret the source. "function" treats it as a function declaration and supports args. "script" evaluates it as classic JavaScript and does not support args. Defaults to "function". ECMAScript modules are not supported.
    format: Option<Format>,
    /// An optional list of arguments (element uids from the page content snapshot) to pass to the function.
    args: Option<Vec<Uid>>,
    /// The absolute or relative path to a file to save the script output to. If omitted, the output is returned inline.
    file_path: Option<String>,
    /// Handle dialogs while execution. "accept", "dismiss", or string for response of window.prompt. Defaults to accept.
    dialog_action: Option<String>,
    /// Whether to wait for the DOM to settle. Pass false if the script only reads data. Defaults to true.
    wait_for_stable_dom: Option<bool>,
    /// The optional service worker id to evaluate the script in. If provided, 'pageId' should be omitted. Note: 'args' (element UIDs) cannot be used when evaluating in a service worker.
    service_worker_id: Option<String>,
}

/// The uid of an element on the page from the page content snapshot
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
struct Uid(String);

struct EvaluateScript;

impl GlobalTool for EvaluateScript {
    type Params = Params;

    fn definition(flags: &Flags) -> Definition {
        let extensions = flags.enabled("categoryExtensions");
        let target = if extensions {
            "the target page or service worker"
        } else {
            "the target page"
        };
        let mut definition = Definition::new(
            "evaluate_script",
            Category::Debugging,
            format!("Evaluate JavaScript inside {target}. The source can be provided inline or loaded from a local file. Returns the response as JSON, so returned values have to be JSON-serializable."),
        )
        .condition("javascriptEvaluation")
        .blocked_by_dialog()
        .file_param("filePath")
        .file_param("sourcePath")
        .number_param("pageId");
        if !extensions {
            definition = definition.hide_param("serviceWorkerId");
        }
        // The reference adds `pageId` itself (the tool is not page-scoped) when routing is on;
        // with extensions it is optional, since a service worker may be the target instead.
        let routing = flags.get("pageIdRouting").and_then(|value| value.as_bool()) != Some(false)
            && !flags.enabled("slim");
        match (routing, extensions) {
            (false, _) => definition.hide_param("pageId"),
            (true, false) => definition.require_param("pageId"),
            (true, true) => definition.param_description(
                "pageId",
                "Targets a specific page by ID. Required when not evaluating in a service worker.",
            ),
        }
    }

    fn handle(params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        let (function, source_path) = match (params.function, params.source_path) {
            (Some(function), None) => (function, None),
            (None, Some(path)) => (String::new(), Some(path)),
            _ => return Err("Specify exactly one of function or sourcePath.".into()),
        };
        let args: Vec<String> = params
            .args
            .unwrap_or_default()
            .into_iter()
            .map(|uid| uid.0)
            .collect();
        let format = match params.format {
            Some(Format::Script) => "script",
            _ => "function",
        };
        if format == "script" && !args.is_empty() {
            return Err("args cannot be used when format is \"script\".".into());
        }
        let result = match params.service_worker_id {
            Some(worker) => {
                if !args.is_empty() {
                    return Err(
                        "args (element uids) cannot be used when evaluating in a service worker."
                            .into(),
                    );
                }
                if params.page_id.is_some() {
                    return Err("specify either a pageId or a serviceWorkerId.".into());
                }
                // Service workers have no DOM: nothing to wait for.
                let options = EvaluateOptions {
                    dialog_action: params
                        .dialog_action
                        .as_deref()
                        .map(DialogAction::from_reference),
                    wait_for_stable_dom: false,
                    format: ScriptFormat::from_reference(Some(format)),
                    source_path,
                };
                devtools_tool::extensions::evaluate_in_service_worker(&worker, &function, &options)?
            }
            None => {
                let page = match params.page_id {
                    Some(id) => pages::get(id)?,
                    None => pages::selected()?,
                };
                let options = EvaluateOptions {
                    dialog_action: params
                        .dialog_action
                        .as_deref()
                        .map(DialogAction::from_reference),
                    wait_for_stable_dom: params.wait_for_stable_dom.unwrap_or(true),
                    format: ScriptFormat::from_reference(Some(format)),
                    source_path,
                };
                page.evaluate(&function, &args, &options)?
            }
        };
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
