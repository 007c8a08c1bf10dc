//! `devtools:tool/script` (`script`): JavaScript in a page or in an extension's service
//! worker. Script can move a page, so every function is landing-checked; a source read from a
//! file also needs `files.read` and goes through the file gateway.

use super::function::{HostFunction as F, Marks as M};
use super::{Call, CallState, Outcome, PageHandle, or_return};
use crate::browser::features::extensions;
use crate::policy::capability::Capability::FilesRead;
use crate::runtime::calling::bindings::v0_3::devtools::tool::script;
use crate::runtime::calling::bindings::v0_3::devtools::tool::types::{
    DialogAction, EvaluateOptions, ScriptFormat,
};
use wasmtime::component::Resource;

const EVALUATE_EXPRESSION: F = F::new(
    "script",
    "evaluate-expression",
    M::NAVIGATES.and(M::PAGE_CONTENT).and(M::ON_PAGE),
);
/// `source-path` reads a script file (`files.read`).
const EVALUATE: F = F::new(
    "script",
    "evaluate",
    M::NAVIGATES
        .and(M::READS)
        .and(M::PAGE_CONTENT)
        .and(M::ON_PAGE),
)
.depending(&[FilesRead]);
/// A service worker can move any tab; `source-path` reads a script file.
const EVALUATE_IN_SERVICE_WORKER: F = F::new(
    "script",
    "evaluate-in-service-worker",
    M::NAVIGATES.and(M::READS).and(M::PAGE_CONTENT),
)
.depending(&[FilesRead]);

pub(super) const FUNCTIONS: &[&F] = &[&EVALUATE_EXPRESSION, &EVALUATE, &EVALUATE_IN_SERVICE_WORKER];

/// The largest script `evaluate_script` reads from a file.
const MAX_SCRIPT_BYTES: u64 = 10 << 20;

/// Where an evaluation's code comes from and what it is, in every contract's terms.
pub(super) struct Source<'a> {
    pub text: &'a str,
    /// Classic JavaScript (no arguments) rather than a function declaration.
    pub classic: bool,
    /// Read the code from this file instead of `text`.
    pub path: Option<&'a str>,
}

impl<'a> Source<'a> {
    fn of(text: &'a str, options: &'a EvaluateOptions) -> Source<'a> {
        Source {
            text,
            classic: options.format == ScriptFormat::Script,
            path: options.source_path.as_deref(),
        }
    }
}

/// What the page does with a dialog an evaluation opens, as the browser layer takes it (the
/// reference's `dialogAction`: `accept`, `dismiss` or a prompt text).
fn dialog_action(action: &Option<DialogAction>) -> Option<String> {
    action.as_ref().map(|action| match action {
        DialogAction::Accept => "accept".to_string(),
        DialogAction::Dismiss => "dismiss".to_string(),
        DialogAction::AcceptWith(text) => text.clone(),
    })
}

/// The function declaration to run for an evaluation: the inline source or the file at
/// `path` (which needs `files.read`, read through the file gateway), a classic script made a
/// function that returns its completion value in the global scope.
pub(super) fn evaluation_source(call: &mut Call<'_>, source: Source<'_>) -> Outcome<String> {
    let text = match source.path {
        Some(path) => {
            call.require(FilesRead)?;
            let sandbox = or_return!(call.sandbox()?);
            or_return!(read_script(sandbox, path))
        }
        None => source.text.to_string(),
    };
    Ok(Ok(if source.classic {
        format!(
            "() => (0, eval)({})",
            serde_json::Value::from(text.as_str())
        )
    } else {
        text.trim_end().trim_end_matches(';').to_string()
    }))
}

fn read_script(sandbox: &crate::sandbox::Sandbox, path: &str) -> Result<String, String> {
    let unreadable = |reason: String| format!("Unable to read script source from {path}: {reason}");
    let bytes = sandbox
        .read(path, MAX_SCRIPT_BYTES)
        .map_err(|error| unreadable(error.reason()))?;
    String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".into()))
}

/// `evaluate` in every contract's terms.
pub(super) async fn evaluate(
    call: &mut Call<'_>,
    handle: &Resource<PageHandle>,
    source: Source<'_>,
    args: &[String],
    dialog_action: Option<&str>,
    wait_for_stable_dom: bool,
) -> Outcome<String> {
    let function = or_return!(evaluation_source(call, source)?);
    let page = or_return!(call.page(handle).await?);
    let evaluation = or_return!(page.evaluation(&function, args).await);
    let link = page.link();
    // The script may run long (or forever, until its timeout stops it): other pages' calls go
    // on meanwhile (parallel pages).
    let evaluated = async move {
        link.evaluate(evaluation, dialog_action, wait_for_stable_dom)
            .await
    };
    let (result, navigated) = or_return!(call.unlocked(evaluated).await);
    call.navigated(navigated);
    Ok(Ok(result))
}

/// `evaluate-in-service-worker` in every contract's terms.
pub(super) async fn evaluate_in_service_worker(
    call: &mut Call<'_>,
    service_worker_id: &str,
    source: Source<'_>,
) -> Outcome<String> {
    let function = or_return!(evaluation_source(call, source)?);
    let endpoint = or_return!(super::extensions::ws_endpoint(call));
    let session = or_return!(call.session());
    let Some(worker) = session.extension_service_worker(service_worker_id).await else {
        return Ok(Err("Service worker not found.".into()));
    };
    Ok(extensions::evaluate_in_worker(&endpoint, &worker.target_id, &function).await)
}

impl script::Host for CallState {
    async fn evaluate_expression(
        &mut self,
        handle: Resource<PageHandle>,
        expression: String,
    ) -> Outcome<String> {
        self.dispatch(&EVALUATE_EXPRESSION, async |call| {
            Ok(or_return!(call.page(&handle).await?)
                .evaluate_expression(&expression)
                .await)
        })
        .await
    }

    async fn evaluate(
        &mut self,
        handle: Resource<PageHandle>,
        source: String,
        args: Vec<String>,
        options: EvaluateOptions,
    ) -> Outcome<String> {
        self.dispatch(&EVALUATE, async |call| {
            let action = dialog_action(&options.dialog_action);
            evaluate(
                call,
                &handle,
                Source::of(&source, &options),
                &args,
                action.as_deref(),
                options.wait_for_stable_dom,
            )
            .await
        })
        .await
    }

    async fn evaluate_in_service_worker(
        &mut self,
        service_worker_id: String,
        source: String,
        options: EvaluateOptions,
    ) -> Outcome<String> {
        self.dispatch(&EVALUATE_IN_SERVICE_WORKER, async |call| {
            evaluate_in_service_worker(call, &service_worker_id, Source::of(&source, &options))
                .await
        })
        .await
    }
}
