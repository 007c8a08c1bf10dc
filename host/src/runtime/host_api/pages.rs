//! `devtools:tool/pages`: the page collection and the `page` resource, forwarded to the session.

use super::function::{HostFunction as F, Marks as M};
use super::{Call, CallState, PageHandle, or_return, timeout};
use crate::browser::features::heap;
use crate::browser::features::performance;
use crate::browser::{EmulateRequest, Target};
use crate::policy::capability::Capability::{
    Emulate, FilesRead, FilesWrite, Input, Memory, Navigate, PagesManage, PagesRead, Performance,
    Script,
};
use crate::runtime::bindings::devtools::tool::pages;
use std::time::Duration;
use wasmtime::component::Resource;

const SELECTED: F = F::new("pages", "selected", &[PagesRead], M::NONE);
const GET: F = F::new("pages", "get", &[PagesRead], M::NONE);
const SELECT: F = F::new("pages", "select", &[PagesManage], M::NONE);
/// Opening at a URL other than about:blank needs `navigate` (and `script` for a URL that runs
/// script); the page is new, so it is landing-checked.
const NEW_PAGE: F =
    F::new("pages", "new-page", &[PagesManage], M::NAVIGATES).depending(&[Navigate, Script]);
const CLOSE: F = F::new("pages", "close", &[PagesManage], M::NONE);
const ID: F = F::new("pages", "[method]page.id", &[PagesRead], M::NONE);
const URL: F = F::new("pages", "[method]page.url", &[PagesRead], M::NONE);
/// An init script or a `javascript:`/`data:` URL runs script.
const NAVIGATE: F =
    F::new("pages", "[method]page.navigate", &[Navigate], M::NAVIGATES).depending(&[Script]);
const CLICK: F = F::new("pages", "[method]page.click", &[Input], M::NAVIGATES);
const EVALUATE_EXPRESSION: F = F::new(
    "pages",
    "[method]page.evaluate-expression",
    &[Script],
    M::NAVIGATES,
);
/// `source-path` reads a script file (`files.read`).
const EVALUATE: F = F::new(
    "pages",
    "[method]page.evaluate",
    &[Script],
    M::NAVIGATES.and(M::READS),
)
.depending(&[FilesRead]);
const DIALOG: F = F::new("pages", "[method]page.dialog", &[PagesRead], M::NONE);
const HANDLE_DIALOG: F = F::new(
    "pages",
    "[method]page.handle-dialog",
    &[Input],
    M::NAVIGATES,
);
const HOVER: F = F::new("pages", "[method]page.hover", &[Input], M::NAVIGATES);
const FILL: F = F::new("pages", "[method]page.fill", &[Input], M::NAVIGATES);
const TYPE_TEXT: F = F::new("pages", "[method]page.type-text", &[Input], M::NAVIGATES);
const PRESS_KEY: F = F::new("pages", "[method]page.press-key", &[Input], M::NAVIGATES);
const DRAG: F = F::new("pages", "[method]page.drag", &[Input], M::NAVIGATES);
/// The page receives the files: they are read (by the browser) from paths the host checks.
const UPLOAD_FILES: F = F::new(
    "pages",
    "[method]page.upload-files",
    &[FilesRead],
    M::NAVIGATES.and(M::READS),
);
const WAIT_FOR: F = F::new("pages", "[method]page.wait-for", &[PagesRead], M::NONE);
const RESIZE: F = F::new("pages", "[method]page.resize", &[Emulate], M::NAVIGATES);
const EMULATE: F = F::new("pages", "[method]page.emulate", &[Emulate], M::NAVIGATES);
/// A full-page capture resizes the viewport for a moment (resize listeners run).
const SCREENSHOT: F = F::new(
    "pages",
    "[method]page.screenshot",
    &[PagesRead],
    M::NAVIGATES,
);
/// Reloads the page when asked, records until stopped, writes the trace when given a path.
const START_TRACE: F = F::new(
    "pages",
    "[method]page.start-trace",
    &[Performance],
    M::NAVIGATES.and(M::WRITES).and(M::LONG_LIVED),
)
.depending(&[FilesWrite]);
const STOP_TRACE: F = F::new(
    "pages",
    "[method]page.stop-trace",
    &[Performance],
    M::WRITES,
)
.depending(&[FilesWrite]);
const ANALYZE_INSIGHT: F = F::new(
    "pages",
    "[method]page.analyze-insight",
    &[Performance],
    M::NONE,
);
const TAKE_HEAP_SNAPSHOT: F = F::new(
    "pages",
    "[method]page.take-heap-snapshot",
    &[Memory, FilesWrite],
    M::WRITES,
);
const DROP: F = F::new("pages", "[resource-drop]page", &[], M::NONE);

pub(super) const FUNCTIONS: &[&F] = &[
    &SELECTED,
    &GET,
    &SELECT,
    &NEW_PAGE,
    &CLOSE,
    &ID,
    &URL,
    &NAVIGATE,
    &CLICK,
    &EVALUATE_EXPRESSION,
    &EVALUATE,
    &DIALOG,
    &HANDLE_DIALOG,
    &HOVER,
    &FILL,
    &TYPE_TEXT,
    &PRESS_KEY,
    &DRAG,
    &UPLOAD_FILES,
    &WAIT_FOR,
    &RESIZE,
    &EMULATE,
    &SCREENSHOT,
    &START_TRACE,
    &STOP_TRACE,
    &ANALYZE_INSIGHT,
    &TAKE_HEAP_SNAPSHOT,
    &DROP,
];

type Outcome<T> = wasmtime::Result<Result<T, String>>;

impl pages::Host for CallState {
    async fn selected(&mut self) -> Outcome<Resource<PageHandle>> {
        self.dispatch(&SELECTED, async |call| {
            let id = or_return!(call.session().and_then(|session| session.selected_id()));
            Ok(Ok(call.handle(id)?))
        })
        .await
    }

    async fn get(&mut self, id: u32) -> Outcome<Resource<PageHandle>> {
        self.dispatch(&GET, async |call| {
            or_return!(
                call.session()
                    .and_then(|session| session.page(id).map(|_| ()))
            );
            Ok(Ok(call.handle(id)?))
        })
        .await
    }

    async fn select(&mut self, id: u32, bring_to_front: bool) -> Outcome<()> {
        self.dispatch(&SELECT, async |call| {
            let session = or_return!(call.session());
            Ok(session.select_page(id, bring_to_front).await)
        })
        .await
    }

    async fn new_page(
        &mut self,
        url: String,
        background: bool,
        isolated_context: Option<String>,
        timeout_ms: Option<u32>,
    ) -> Outcome<Resource<PageHandle>> {
        self.dispatch(&NEW_PAGE, async |call| {
            let url = if url == "about:blank" {
                url.clone()
            } else {
                call.require_url(&url)?
            };
            let session = or_return!(call.session());
            // Checked before a page is created, as the reference does.
            or_return!(session.navigation_policy().check(&url));
            let created = session
                .new_page(
                    &url,
                    background,
                    isolated_context.as_deref(),
                    timeout(timeout_ms),
                )
                .await;
            Ok(Ok(call.handle(or_return!(created))?))
        })
        .await
    }

    async fn close(&mut self, id: u32) -> Outcome<bool> {
        self.dispatch(&CLOSE, async |call| {
            let session = or_return!(call.session());
            Ok(session.close_page(id).await)
        })
        .await
    }
}

/// The input actions: each is the page's own method, and reports a navigation it caused.
async fn act<'p>(
    call: &mut Call<'_>,
    handle: &Resource<PageHandle>,
    action: impl AsyncFnOnce(&mut crate::browser::McpPage) -> Result<Option<String>, String>,
) -> Outcome<()> {
    let page = or_return!(call.page(handle)?);
    let navigated = or_return!(action(page).await);
    call.navigated(navigated);
    Ok(Ok(()))
}

impl pages::HostPage for CallState {
    async fn id(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<u32> {
        self.dispatch(&ID, async |call| call.page_id(&handle)).await
    }

    async fn url(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<String> {
        self.dispatch(&URL, async |call| {
            Ok(match call.page(&handle)? {
                Ok(page) => page.url().await,
                Err(_) => String::new(),
            })
        })
        .await
    }

    async fn navigate(
        &mut self,
        handle: Resource<PageHandle>,
        target: pages::Navigation,
        options: pages::NavigateOptions,
    ) -> Outcome<pages::Navigated> {
        self.dispatch(&NAVIGATE, async |call| {
            let target = match &target {
                pages::Navigation::Url(url) => Target::Url(call.require_url(url)?),
                pages::Navigation::Back => Target::Back,
                pages::Navigation::Forward => Target::Forward,
                pages::Navigation::Reload(ignore_cache) => Target::Reload {
                    ignore_cache: *ignore_cache,
                },
            };
            let page_id = call.page_id(&handle)?;
            // The server's navigation policy (--blockedUrlPatterns, JavaScript evaluation) is
            // checked before anything is installed in the page.
            let policy = or_return!(call.session()).navigation_policy();
            if let Target::Url(url) = &target {
                or_return!(policy.check(url));
            }
            if options.init_script.is_some() && !policy.javascript_evaluation {
                return Ok(Err(
                    "initScript is not allowed when JavaScript evaluation is disabled.".into(),
                ));
            }
            // An init script is JavaScript in the page: it needs `script`, and it is removed
            // when the navigation ends (or, if the call is stopped first, when the call ends).
            if let Some(source) = options.init_script.as_deref() {
                or_return!(call.add_init_script(page_id, source).await?);
            }
            let page = or_return!(call.page(&handle)?);
            let outcome = page
                .navigate(
                    target,
                    timeout(options.timeout_ms),
                    options.accept_before_unload,
                    None,
                )
                .await;
            call.remove_init_scripts(page_id).await;
            Ok(outcome.map(|done| pages::Navigated {
                url: done.url,
                before_unload_handled: done.before_unload_handled,
            }))
        })
        .await
    }

    async fn click(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
        count: u32,
    ) -> Outcome<()> {
        self.dispatch(&CLICK, async |call| {
            act(call, &handle, async |page| page.click(&uid, count).await).await
        })
        .await
    }

    async fn hover(&mut self, handle: Resource<PageHandle>, uid: String) -> Outcome<()> {
        self.dispatch(&HOVER, async |call| {
            act(call, &handle, async |page| page.hover(&uid).await).await
        })
        .await
    }

    async fn fill(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
        value: String,
    ) -> Outcome<()> {
        self.dispatch(&FILL, async |call| {
            act(call, &handle, async |page| page.fill(&uid, &value).await).await
        })
        .await
    }

    async fn type_text(
        &mut self,
        handle: Resource<PageHandle>,
        text: String,
        submit_key: Option<String>,
    ) -> Outcome<()> {
        self.dispatch(&TYPE_TEXT, async |call| {
            act(call, &handle, async |page| {
                page.type_text(&text, submit_key.as_deref()).await
            })
            .await
        })
        .await
    }

    async fn press_key(&mut self, handle: Resource<PageHandle>, key: String) -> Outcome<()> {
        self.dispatch(&PRESS_KEY, async |call| {
            act(call, &handle, async |page| page.press_key(&key).await).await
        })
        .await
    }

    async fn drag(
        &mut self,
        handle: Resource<PageHandle>,
        from_uid: String,
        to_uid: String,
    ) -> Outcome<()> {
        self.dispatch(&DRAG, async |call| {
            act(call, &handle, async |page| {
                page.drag(&from_uid, &to_uid).await
            })
            .await
        })
        .await
    }

    async fn upload_files(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
        paths: Vec<String>,
    ) -> Outcome<()> {
        self.dispatch(&UPLOAD_FILES, async |call| {
            // The paths were checked by the sandbox step, but a plugin could pass others here:
            // each is checked again, and must be a regular file (the browser reads it).
            let sandbox = or_return!(call.sandbox()?);
            let checked: Result<Vec<String>, String> = paths
                .iter()
                .map(|path| {
                    sandbox
                        .resolve_regular_file(path)
                        .map_err(|error| error.to_string())
                })
                .collect();
            let paths = or_return!(checked);
            act(call, &handle, async |page| {
                page.upload_files(&uid, &paths).await
            })
            .await
        })
        .await
    }

    async fn wait_for(
        &mut self,
        handle: Resource<PageHandle>,
        texts: Vec<String>,
        timeout_ms: Option<u32>,
    ) -> Outcome<()> {
        self.dispatch(&WAIT_FOR, async |call| {
            let page = or_return!(call.page(&handle)?);
            let limit = timeout(timeout_ms).unwrap_or_else(|| page.action_timeout());
            Ok(page.wait_for_text(&texts, limit).await)
        })
        .await
    }

    async fn resize(
        &mut self,
        handle: Resource<PageHandle>,
        width: u32,
        height: u32,
    ) -> Outcome<()> {
        self.dispatch(&RESIZE, async |call| {
            Ok(or_return!(call.page(&handle)?).resize(width, height).await)
        })
        .await
    }

    async fn emulate(
        &mut self,
        handle: Resource<PageHandle>,
        settings: pages::Emulation,
    ) -> Outcome<()> {
        self.dispatch(&EMULATE, async |call| {
            let request = EmulateRequest {
                network_conditions: settings.network_conditions.clone(),
                cpu_throttling_rate: settings.cpu_throttling_rate,
                geolocation: settings.geolocation.clone(),
                user_agent: settings.user_agent.clone(),
                color_scheme: settings.color_scheme.clone(),
                viewport: settings.viewport.clone(),
                extra_http_headers: settings.extra_http_headers.clone(),
                forced_colors: settings.forced_colors.clone(),
                prefers_contrast: settings.prefers_contrast.clone(),
                prefers_reduced_motion: settings.prefers_reduced_motion.clone(),
            };
            // Values the reference refuses while parsing the arguments answer alone.
            let checked = or_return!(call.page(&handle)?)
                .emulation()
                .next(request.clone());
            if let Err(message) = checked {
                call.response().argument_error = Some(message.clone());
                return Ok(Err(message));
            }
            Ok(or_return!(call.page(&handle)?).emulate(request).await)
        })
        .await
    }

    async fn screenshot(
        &mut self,
        handle: Resource<PageHandle>,
        options: pages::ScreenshotOptions,
    ) -> Outcome<pages::Screenshot> {
        self.dispatch(&SCREENSHOT, async |call| {
            let flags = or_return!(call.session()).screenshot_flags();
            let page = or_return!(call.page(&handle)?);
            let shot = page
                .screenshot(
                    options.format.clone(),
                    options.quality,
                    options.uid.as_deref(),
                    options.full_page,
                    &flags,
                )
                .await;
            Ok(shot.map(|shot| pages::Screenshot {
                data: shot.bytes,
                mime_type: shot.mime_type,
                extension: shot.extension.to_string(),
            }))
        })
        .await
    }

    async fn start_trace(
        &mut self,
        handle: Resource<PageHandle>,
        options: pages::TraceOptions,
    ) -> Outcome<Vec<String>> {
        self.dispatch(&START_TRACE, async |call| {
            if options.file_path.is_some() {
                call.require(FilesWrite)?;
            }
            // Decided on the effect, whatever tool asks: a trace records every tab of the browser.
            or_return!(call.session().and_then(|session| {
                session.require_own_browser("A performance trace records every tab of the browser")
            }));
            let (page, sandbox) = or_return!(call.page_and_sandbox(&handle)?);
            Ok(performance::Performance::start_trace(
                page,
                options.reload,
                options.auto_stop,
                options.ignore_cache,
                options.file_path.as_deref(),
                sandbox,
            )
            .await)
        })
        .await
    }

    async fn stop_trace(
        &mut self,
        handle: Resource<PageHandle>,
        file_path: Option<String>,
    ) -> Outcome<Vec<String>> {
        self.dispatch(&STOP_TRACE, async |call| {
            if file_path.is_some() {
                call.require(FilesWrite)?;
            }
            let (page, sandbox) = or_return!(call.page_and_sandbox(&handle)?);
            Ok(performance::Performance::stop_trace(page, file_path.as_deref(), sandbox).await)
        })
        .await
    }

    async fn analyze_insight(
        &mut self,
        handle: Resource<PageHandle>,
        insight_set_id: String,
        insight_name: String,
    ) -> Outcome<Vec<String>> {
        self.dispatch(&ANALYZE_INSIGHT, async |call| {
            Ok(performance::Performance::analyze_insight(
                or_return!(call.page(&handle)?),
                &insight_set_id,
                &insight_name,
            ))
        })
        .await
    }

    async fn take_heap_snapshot(
        &mut self,
        handle: Resource<PageHandle>,
        file_path: String,
    ) -> Outcome<Vec<String>> {
        self.dispatch(&TAKE_HEAP_SNAPSHOT, async |call| {
            let (page, sandbox) = or_return!(call.page_and_sandbox(&handle)?);
            Ok(heap::save(page, &file_path, sandbox).await)
        })
        .await
    }

    async fn evaluate(
        &mut self,
        handle: Resource<PageHandle>,
        function: String,
        args: Vec<String>,
        options: pages::EvaluateOptions,
    ) -> Outcome<String> {
        self.dispatch(&EVALUATE, async |call| {
            let function = or_return!(evaluation_source(call, &function, &options)?);
            let page = or_return!(call.page(&handle)?);
            let outcome = page
                .evaluate(
                    &function,
                    &args,
                    options.dialog_action.as_deref(),
                    options.wait_for_stable_dom,
                )
                .await;
            let (result, navigated) = or_return!(outcome);
            call.navigated(navigated);
            Ok(Ok(result))
        })
        .await
    }

    async fn evaluate_expression(
        &mut self,
        handle: Resource<PageHandle>,
        script: String,
    ) -> Outcome<String> {
        self.dispatch(&EVALUATE_EXPRESSION, async |call| {
            Ok(or_return!(call.page(&handle)?)
                .evaluate_expression(&script)
                .await)
        })
        .await
    }

    async fn dialog(
        &mut self,
        handle: Resource<PageHandle>,
    ) -> wasmtime::Result<Option<pages::Dialog>> {
        self.dispatch(&DIALOG, async |call| {
            let dialog = call.page(&handle)?.ok().and_then(|page| page.dialog());
            Ok(dialog.map(|dialog| pages::Dialog {
                kind: dialog.kind,
                message: dialog.message,
                default_value: dialog.default_value,
            }))
        })
        .await
    }

    async fn handle_dialog(
        &mut self,
        handle: Resource<PageHandle>,
        accept: bool,
        prompt_text: Option<String>,
    ) -> Outcome<()> {
        self.dispatch(&HANDLE_DIALOG, async |call| {
            let page = or_return!(call.page(&handle)?);
            let handled = page.handle_dialog(accept, prompt_text.as_deref()).await;
            // The closed event clears the state; wait for it so the response shows no dialog.
            page.wait_dialog_closed(Duration::from_secs(1)).await;
            Ok(handled)
        })
        .await
    }

    async fn drop(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<()> {
        self.dispatch(&DROP, async |call| call.drop_handle(handle))
            .await
    }
}

/// The largest script `evaluate_script` reads from a file.
const MAX_SCRIPT_BYTES: u64 = 10 << 20;

/// The function declaration to run for an evaluation: the inline source or the file at
/// `source_path` (which needs `files.read`, read through the file gateway), a classic script
/// (`format` = `script`) made a function that returns its completion value in the global
/// scope.
pub(super) fn evaluation_source(
    call: &mut Call<'_>,
    function: &str,
    options: &pages::EvaluateOptions,
) -> Outcome<String> {
    let source = match &options.source_path {
        Some(path) => {
            call.require(FilesRead)?;
            let sandbox = or_return!(call.sandbox()?);
            or_return!(read_script(sandbox, path))
        }
        None => function.to_string(),
    };
    Ok(Ok(match options.format.as_deref() {
        Some("script") => format!(
            "() => (0, eval)({})",
            serde_json::Value::from(source.as_str())
        ),
        _ => source.trim_end().trim_end_matches(';').to_string(),
    }))
}

fn read_script(sandbox: &crate::sandbox::Sandbox, path: &str) -> Result<String, String> {
    let unreadable = |reason: String| format!("Unable to read script source from {path}: {reason}");
    let bytes = sandbox
        .read(path, MAX_SCRIPT_BYTES)
        .map_err(|error| unreadable(error.reason()))?;
    String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".into()))
}
