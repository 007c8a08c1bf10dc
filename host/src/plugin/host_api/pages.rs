//! `devtools:tool/pages`: the page collection and the `page` resource, forwarded to the session.

use super::{CallState, PageHandle, timeout};
use crate::browser::{EmulateRequest, Target};
use crate::plugin::bindings::devtools::tool::pages;
use crate::plugin::capability::Capability;
use std::time::Duration;
use wasmtime::component::Resource;

/// Unwraps the tool-level error of a page lookup into the host function's result.
macro_rules! page_or_return {
    ($state:expr, $handle:expr) => {
        match $state.page(&$handle)? {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        }
    };
}

/// The page and the sandbox together, for actions that write files.
macro_rules! page_and_sandbox_or_return {
    ($state:expr, $handle:expr) => {{
        let id = $state.page_id(&$handle)?;
        match $state
            .session()
            .and_then(|session| session.page_and_sandbox(id))
        {
            Ok(pair) => pair,
            Err(error) => return Ok(Err(error)),
        }
    }};
}

impl pages::Host for CallState {
    async fn selected(&mut self) -> wasmtime::Result<Result<Resource<PageHandle>, String>> {
        self.require(Capability::PagesRead, "selected")?;
        let id = match self.session().and_then(|session| session.selected_id()) {
            Ok(id) => id,
            Err(error) => return Ok(Err(error)),
        };
        Ok(Ok(self.table.push(PageHandle { id })?))
    }

    async fn get(&mut self, id: u32) -> wasmtime::Result<Result<Resource<PageHandle>, String>> {
        self.require(Capability::PagesRead, "get")?;
        if let Err(error) = self
            .session()
            .and_then(|session| session.page(id).map(|_| ()))
        {
            return Ok(Err(error));
        }
        Ok(Ok(self.table.push(PageHandle { id })?))
    }

    async fn select(
        &mut self,
        id: u32,
        bring_to_front: bool,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::PagesManage, "select")?;
        match self.session() {
            Ok(session) => Ok(session.select_page(id, bring_to_front).await),
            Err(error) => Ok(Err(error)),
        }
    }

    async fn new_page(
        &mut self,
        url: String,
        background: bool,
        isolated_context: Option<String>,
        timeout_ms: Option<u32>,
    ) -> wasmtime::Result<Result<Resource<PageHandle>, String>> {
        self.require(Capability::PagesManage, "new-page")?;
        let url = if url == "about:blank" {
            url
        } else {
            self.require_url(&url, "new-page")?
        };
        let session = match self.session() {
            Ok(session) => session,
            Err(error) => return Ok(Err(error)),
        };
        // Checked before a page is created, as the reference does.
        if let Err(refused) = session.navigation_policy().check(&url) {
            return Ok(Err(refused));
        }
        let created = session
            .new_page(
                &url,
                background,
                isolated_context.as_deref(),
                timeout(timeout_ms),
            )
            .await;
        match created {
            Ok(id) => {
                self.check_landed(id).await?;
                Ok(Ok(self.table.push(PageHandle { id })?))
            }
            Err(error) => Ok(Err(error)),
        }
    }

    async fn close(&mut self, id: u32) -> wasmtime::Result<Result<bool, String>> {
        self.require(Capability::PagesManage, "close")?;
        match self.session() {
            Ok(session) => Ok(session.close_page(id).await),
            Err(error) => Ok(Err(error)),
        }
    }
}

impl pages::HostPage for CallState {
    async fn id(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<u32> {
        self.require(Capability::PagesRead, "[method]page.id")?;
        self.page_id(&handle)
    }

    async fn url(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<String> {
        self.require(Capability::PagesRead, "[method]page.url")?;
        Ok(match self.page(&handle)? {
            Ok(page) => page.url().await,
            Err(_) => String::new(),
        })
    }

    async fn navigate(
        &mut self,
        handle: Resource<PageHandle>,
        target: pages::Navigation,
        options: pages::NavigateOptions,
    ) -> wasmtime::Result<Result<pages::Navigated, String>> {
        const FUNCTION: &str = "[method]page.navigate";
        let target = match target {
            pages::Navigation::Url(url) => Target::Url(self.require_url(&url, FUNCTION)?),
            other => {
                self.require(Capability::Navigate, FUNCTION)?;
                match other {
                    pages::Navigation::Back => Target::Back,
                    pages::Navigation::Forward => Target::Forward,
                    _ => Target::Reload {
                        ignore_cache: matches!(other, pages::Navigation::Reload(true)),
                    },
                }
            }
        };
        let page_id = self.page_id(&handle)?;
        // The server's navigation policy (--blockedUrlPatterns, JavaScript evaluation) is
        // checked before anything is installed in the page.
        let policy = match self.session() {
            Ok(session) => session.navigation_policy(),
            Err(error) => return Ok(Err(error)),
        };
        if let Target::Url(url) = &target
            && let Err(refused) = policy.check(url)
        {
            return Ok(Err(refused));
        }
        if options.init_script.is_some() && !policy.javascript_evaluation {
            return Ok(Err(
                "initScript is not allowed when JavaScript evaluation is disabled.".into(),
            ));
        }
        // An init script is JavaScript in the page: it needs `script`, and it is removed when
        // the navigation ends (or, if the call is stopped first, when the call ends).
        if let Some(source) = options.init_script.as_deref()
            && let Err(error) = self.add_init_script(page_id, source, FUNCTION).await?
        {
            return Ok(Err(error));
        }
        let page = page_or_return!(self, handle);
        let outcome = page
            .navigate(
                target,
                timeout(options.timeout_ms),
                options.accept_before_unload,
                None,
            )
            .await;
        self.remove_init_scripts(page_id).await;
        self.check_landed(page_id).await?;
        Ok(outcome.map(|done| pages::Navigated {
            url: done.url,
            before_unload_handled: done.before_unload_handled,
        }))
    }

    async fn click(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
        count: u32,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Input, "[method]page.click")?;
        let outcome = page_or_return!(self, handle).click(&uid, count).await;
        self.check_landed(self.page_id(&handle)?).await?;
        Ok(outcome.map(|navigated| self.navigated(navigated)))
    }

    async fn hover(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Input, "[method]page.hover")?;
        let outcome = page_or_return!(self, handle).hover(&uid).await;
        self.check_landed(self.page_id(&handle)?).await?;
        Ok(outcome.map(|navigated| self.navigated(navigated)))
    }

    async fn fill(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
        value: String,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Input, "[method]page.fill")?;
        let outcome = page_or_return!(self, handle).fill(&uid, &value).await;
        self.check_landed(self.page_id(&handle)?).await?;
        Ok(outcome.map(|navigated| self.navigated(navigated)))
    }

    async fn type_text(
        &mut self,
        handle: Resource<PageHandle>,
        text: String,
        submit_key: Option<String>,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Input, "[method]page.type-text")?;
        let outcome = page_or_return!(self, handle)
            .type_text(&text, submit_key.as_deref())
            .await;
        self.check_landed(self.page_id(&handle)?).await?;
        Ok(outcome.map(|navigated| self.navigated(navigated)))
    }

    async fn press_key(
        &mut self,
        handle: Resource<PageHandle>,
        key: String,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Input, "[method]page.press-key")?;
        let outcome = page_or_return!(self, handle).press_key(&key).await;
        self.check_landed(self.page_id(&handle)?).await?;
        Ok(outcome.map(|navigated| self.navigated(navigated)))
    }

    async fn drag(
        &mut self,
        handle: Resource<PageHandle>,
        from_uid: String,
        to_uid: String,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Input, "[method]page.drag")?;
        let outcome = page_or_return!(self, handle).drag(&from_uid, &to_uid).await;
        self.check_landed(self.page_id(&handle)?).await?;
        Ok(outcome.map(|navigated| self.navigated(navigated)))
    }

    async fn upload_files(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
        paths: Vec<String>,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::FilesRead, "[method]page.upload-files")?;
        // The paths were checked by the sandbox step, but a plugin could pass others here.
        let checked: Result<Vec<String>, String> = match self.session() {
            Ok(session) => paths
                .iter()
                .map(|path| {
                    session
                        .sandbox
                        .resolve(path)
                        .map_err(|error| error.to_string())
                })
                .collect(),
            Err(error) => Err(error),
        };
        let paths = match checked {
            Ok(paths) => paths,
            Err(error) => return Ok(Err(error)),
        };
        let outcome = page_or_return!(self, handle)
            .upload_files(&uid, &paths)
            .await;
        self.check_landed(self.page_id(&handle)?).await?;
        Ok(outcome.map(|navigated| self.navigated(navigated)))
    }

    async fn wait_for(
        &mut self,
        handle: Resource<PageHandle>,
        texts: Vec<String>,
        timeout_ms: Option<u32>,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::PagesRead, "[method]page.wait-for")?;
        let page = page_or_return!(self, handle);
        let limit = timeout(timeout_ms).unwrap_or_else(|| page.action_timeout());
        Ok(page.wait_for_text(&texts, limit).await)
    }

    async fn resize(
        &mut self,
        handle: Resource<PageHandle>,
        width: u32,
        height: u32,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Emulate, "[method]page.resize")?;
        Ok(page_or_return!(self, handle).resize(width, height).await)
    }

    async fn emulate(
        &mut self,
        handle: Resource<PageHandle>,
        settings: pages::Emulation,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Emulate, "[method]page.emulate")?;
        let request = EmulateRequest {
            network_conditions: settings.network_conditions,
            cpu_throttling_rate: settings.cpu_throttling_rate,
            geolocation: settings.geolocation,
            user_agent: settings.user_agent,
            color_scheme: settings.color_scheme,
            viewport: settings.viewport,
            extra_http_headers: settings.extra_http_headers,
            forced_colors: settings.forced_colors,
            prefers_contrast: settings.prefers_contrast,
            prefers_reduced_motion: settings.prefers_reduced_motion,
        };
        // Values the reference refuses while parsing the arguments answer alone.
        let checked = page_or_return!(self, handle)
            .emulation()
            .next(request.clone());
        if let Err(message) = checked {
            self.response.argument_error = Some(message.clone());
            return Ok(Err(message));
        }
        Ok(page_or_return!(self, handle).emulate(request).await)
    }

    async fn screenshot(
        &mut self,
        handle: Resource<PageHandle>,
        options: pages::ScreenshotOptions,
    ) -> wasmtime::Result<Result<pages::Screenshot, String>> {
        self.require(Capability::PagesRead, "[method]page.screenshot")?;
        let flags = match self.session() {
            Ok(session) => session.screenshot_flags(),
            Err(error) => return Ok(Err(error)),
        };
        let page = page_or_return!(self, handle);
        let shot = page
            .screenshot(
                options.format,
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
    }

    async fn start_trace(
        &mut self,
        handle: Resource<PageHandle>,
        options: pages::TraceOptions,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::Performance, "[method]page.start-trace")?;
        self.require_file(options.file_path.as_deref(), "[method]page.start-trace")?;
        // Decided on the effect, whatever tool asks: a trace records every tab of the browser.
        let own_browser = self.session().and_then(|session| {
            session.require_own_browser("A performance trace records every tab of the browser")
        });
        if let Err(refused) = own_browser {
            return Ok(Err(refused));
        }
        let (page, sandbox) = page_and_sandbox_or_return!(self, handle);
        Ok(page
            .start_trace(
                options.reload,
                options.auto_stop,
                options.ignore_cache,
                options.file_path.as_deref(),
                sandbox,
            )
            .await)
    }

    async fn stop_trace(
        &mut self,
        handle: Resource<PageHandle>,
        file_path: Option<String>,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::Performance, "[method]page.stop-trace")?;
        self.require_file(file_path.as_deref(), "[method]page.stop-trace")?;
        let (page, sandbox) = page_and_sandbox_or_return!(self, handle);
        Ok(page.stop_trace(file_path.as_deref(), sandbox).await)
    }

    async fn analyze_insight(
        &mut self,
        handle: Resource<PageHandle>,
        insight_set_id: String,
        insight_name: String,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::Performance, "[method]page.analyze-insight")?;
        Ok(page_or_return!(self, handle).analyze_insight(&insight_set_id, &insight_name))
    }

    async fn take_heap_snapshot(
        &mut self,
        handle: Resource<PageHandle>,
        file_path: String,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::Memory, "[method]page.take-heap-snapshot")?;
        self.require(Capability::FilesWrite, "[method]page.take-heap-snapshot")?;
        let (page, sandbox) = page_and_sandbox_or_return!(self, handle);
        Ok(page.take_heap_snapshot(&file_path, sandbox).await)
    }

    async fn evaluate(
        &mut self,
        handle: Resource<PageHandle>,
        function: String,
        args: Vec<String>,
        options: pages::EvaluateOptions,
    ) -> wasmtime::Result<Result<String, String>> {
        self.require(Capability::Script, "[method]page.evaluate")?;
        let function = match self.evaluation_source(function, &options, "[method]page.evaluate")? {
            Ok(function) => function,
            Err(error) => return Ok(Err(error)),
        };
        let outcome = page_or_return!(self, handle)
            .evaluate(
                &function,
                &args,
                options.dialog_action.as_deref(),
                options.wait_for_stable_dom,
            )
            .await;
        self.check_landed(self.page_id(&handle)?).await?;
        Ok(outcome.map(|(result, navigated)| {
            self.navigated(navigated);
            result
        }))
    }

    async fn evaluate_expression(
        &mut self,
        handle: Resource<PageHandle>,
        script: String,
    ) -> wasmtime::Result<Result<String, String>> {
        self.require(Capability::Script, "[method]page.evaluate-expression")?;
        let outcome = page_or_return!(self, handle)
            .evaluate_expression(&script)
            .await;
        self.check_landed(self.page_id(&handle)?).await?;
        Ok(outcome)
    }

    async fn dialog(
        &mut self,
        handle: Resource<PageHandle>,
    ) -> wasmtime::Result<Option<pages::Dialog>> {
        self.require(Capability::PagesRead, "[method]page.dialog")?;
        let dialog = self.page(&handle)?.ok().and_then(|page| page.dialog());
        Ok(dialog.map(|dialog| pages::Dialog {
            kind: dialog.kind,
            message: dialog.message,
            default_value: dialog.default_value,
        }))
    }

    async fn handle_dialog(
        &mut self,
        handle: Resource<PageHandle>,
        accept: bool,
        prompt_text: Option<String>,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Input, "[method]page.handle-dialog")?;
        let page = page_or_return!(self, handle);
        let handled = page.handle_dialog(accept, prompt_text.as_deref()).await;
        // The closed event clears the state; wait for it so the response shows no dialog.
        page.wait_dialog_closed(Duration::from_secs(1)).await;
        self.check_landed(self.page_id(&handle)?).await?;
        Ok(handled)
    }

    async fn drop(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<()> {
        self.table.delete(handle)?;
        Ok(())
    }
}

/// The largest script `evaluate_script` reads from a file.
const MAX_SCRIPT_BYTES: u64 = 10 << 20;

/// Reads a script file for `evaluate_script`'s `sourcePath`: checked by the sandbox again here,
/// since a plugin could pass any path.
impl CallState {
    /// The function declaration to run for an evaluation: the inline source or the file at
    /// `source_path` (which needs `files.read`), a classic script (`format` = `script`) made
    /// a function that returns its completion value in the global scope.
    pub(super) fn evaluation_source(
        &mut self,
        function: String,
        options: &pages::EvaluateOptions,
        host_function: &'static str,
    ) -> wasmtime::Result<Result<String, String>> {
        let source = match &options.source_path {
            Some(path) => {
                self.require(Capability::FilesRead, host_function)?;
                match self
                    .session()
                    .and_then(|session| read_script(session, path))
                {
                    Ok(source) => source,
                    Err(error) => return Ok(Err(error)),
                }
            }
            None => function,
        };
        Ok(Ok(match options.format.as_deref() {
            Some("script") => format!(
                "() => (0, eval)({})",
                serde_json::Value::from(source.as_str())
            ),
            _ => source.trim_end().trim_end_matches(';').to_string(),
        }))
    }
}

fn read_script(session: &crate::session::SessionState, path: &str) -> Result<String, String> {
    let unreadable = |reason: String| format!("Unable to read script source from {path}: {reason}");
    let resolved = session
        .sandbox
        .resolve(path)
        .map_err(|error| error.to_string())?;
    let local = match resolved.split_once("://") {
        Some(("file", rest)) => rest.to_string(),
        Some(_) => return Err(unreadable("only local files can be read".into())),
        None => resolved,
    };
    let file = std::fs::File::open(&local).map_err(|error| unreadable(error.to_string()))?;
    let mut source = String::new();
    use std::io::Read;
    file.take(MAX_SCRIPT_BYTES + 1)
        .read_to_string(&mut source)
        .map_err(|error| unreadable(error.to_string()))?;
    if source.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(unreadable(format!("larger than {MAX_SCRIPT_BYTES} bytes")));
    }
    Ok(source)
}
