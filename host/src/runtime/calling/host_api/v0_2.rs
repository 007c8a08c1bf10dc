//! `devtools:tool@0.2.0`, released and frozen, linked on top of today's host functions: each
//! old function converts its arguments and calls the newest contract's function that does the
//! same, so it passes the same gate (capability, landing check, long-lived effects, output)
//! and the same file gateway. Strings the old contract took for closed sets are checked here
//! with the messages 0.2.0 gave.

use super::{CallState, Outcome, PageHandle, emulation, lighthouse, memory, pages, pwa};
use crate::browser::EmulateRequest;
use crate::runtime::calling::bindings::v0_2::devtools::tool as old;
use crate::runtime::calling::bindings::v0_3::devtools::tool as new;
use wasmtime::component::Resource;

type Lines = Outcome<Vec<String>>;

fn evaluate_options(options: old::pages::EvaluateOptions) -> new::types::EvaluateOptions {
    new::types::EvaluateOptions {
        dialog_action: options.dialog_action.map(|action| match action.as_str() {
            "accept" => new::types::DialogAction::Accept,
            "dismiss" => new::types::DialogAction::Dismiss,
            _ => new::types::DialogAction::AcceptWith(action),
        }),
        wait_for_stable_dom: options.wait_for_stable_dom,
        format: match options.format.as_deref() {
            Some("script") => new::types::ScriptFormat::Script,
            _ => new::types::ScriptFormat::Function,
        },
        source_path: options.source_path,
    }
}

fn list_options(options: old::response::ListOptions) -> new::response::ListOptions {
    new::response::ListOptions {
        page_size: options.page_size,
        page_idx: options.page_idx,
        types: options.types,
        include_preserved: options.include_preserved,
        include_stack_traces: options.include_stack_traces,
        service_worker_id: options.service_worker_id,
    }
}

fn heap_list(options: old::heap::ListOptions) -> new::memory::ListOptions {
    new::memory::ListOptions {
        page_idx: options.page_idx,
        page_size: options.page_size,
        max_name_length: options.max_name_length,
    }
}

/// 0.2.0's filter (the reference's `filterName`, and `objectId` for a native context).
fn heap_filter(
    filter: Option<old::heap::NodeFilter>,
) -> Result<Option<new::memory::NodeFilter>, String> {
    use new::memory::NodeFilter as Filter;
    let Some(filter) = filter else {
        return Ok(None);
    };
    Ok(Some(match filter.name.as_str() {
        "objectsRetainedByDetachedDomNodes" => Filter::RetainedByDetachedDomNodes,
        "objectsRetainedByConsole" => Filter::RetainedByConsole,
        "objectsRetainedByEventHandlers" => Filter::RetainedByEventHandlers,
        "objectsRetainedByContexts" => Filter::RetainedByContexts,
        "sharedNativeContext" => Filter::SharedNativeContext,
        "noNativeContext" => Filter::NoNativeContext,
        "attributedToSpecificNativeContext" => match filter.object_id {
            Some(id) => Filter::AttributedToSpecificNativeContext(id),
            None => {
                return Err(
                    "objectId is required when filterName is attributedToSpecificNativeContext"
                        .into(),
                );
            }
        },
        _ => return Err("Invalid filter name".into()),
    }))
}

impl CallState {
    /// An argument 0.2.0 refused: the same refusal, after the function's capability check.
    async fn refuse<T: super::provenance::Strings>(
        &mut self,
        function: &'static super::function::HostFunction,
        message: String,
    ) -> Outcome<T> {
        self.dispatch(function, async |_| Ok(Err(message))).await
    }
}

impl old::pages::Host for CallState {
    async fn selected(&mut self) -> Outcome<Resource<PageHandle>> {
        new::pages::Host::selected(self).await
    }

    async fn get(&mut self, id: u32) -> Outcome<Resource<PageHandle>> {
        new::pages::Host::get(self, id).await
    }

    async fn select(&mut self, id: u32, bring_to_front: bool) -> Outcome<()> {
        new::pages_manage::Host::select(self, id, bring_to_front).await
    }

    async fn new_page(
        &mut self,
        url: String,
        background: bool,
        isolated_context: Option<String>,
        timeout_ms: Option<u32>,
    ) -> Outcome<Resource<PageHandle>> {
        new::pages_manage::Host::new_page(self, url, background, isolated_context, timeout_ms).await
    }

    async fn close(&mut self, id: u32) -> Outcome<bool> {
        new::pages_manage::Host::close(self, id).await
    }
}

impl old::pages::HostPage for CallState {
    async fn id(&mut self, page: Resource<PageHandle>) -> wasmtime::Result<u32> {
        new::types::HostPage::id(self, page).await
    }

    async fn url(&mut self, page: Resource<PageHandle>) -> wasmtime::Result<String> {
        new::pages::Host::url(self, page).await
    }

    async fn navigate(
        &mut self,
        page: Resource<PageHandle>,
        target: old::pages::Navigation,
        options: old::pages::NavigateOptions,
    ) -> Outcome<old::pages::Navigated> {
        let target = match target {
            old::pages::Navigation::Url(url) => new::navigate::Navigation::Url(url),
            old::pages::Navigation::Back => new::navigate::Navigation::Back,
            old::pages::Navigation::Forward => new::navigate::Navigation::Forward,
            old::pages::Navigation::Reload(ignore) => new::navigate::Navigation::Reload(ignore),
        };
        let options = new::navigate::NavigateOptions {
            timeout_ms: options.timeout_ms,
            accept_before_unload: options.accept_before_unload,
            init_script: options.init_script,
        };
        let done = new::navigate::Host::navigate(self, page, target, options).await?;
        Ok(done.map(|done| old::pages::Navigated {
            url: done.url,
            before_unload_handled: done.before_unload_handled,
        }))
    }

    async fn click(&mut self, page: Resource<PageHandle>, uid: String, count: u32) -> Outcome<()> {
        new::input::Host::click(self, page, uid, count).await
    }

    async fn evaluate_expression(
        &mut self,
        page: Resource<PageHandle>,
        script: String,
    ) -> Outcome<String> {
        new::script::Host::evaluate_expression(self, page, script).await
    }

    async fn evaluate(
        &mut self,
        page: Resource<PageHandle>,
        function: String,
        args: Vec<String>,
        options: old::pages::EvaluateOptions,
    ) -> Outcome<String> {
        new::script::Host::evaluate(self, page, function, args, evaluate_options(options)).await
    }

    async fn dialog(
        &mut self,
        page: Resource<PageHandle>,
    ) -> wasmtime::Result<Option<old::pages::Dialog>> {
        let dialog = new::pages::Host::open_dialog(self, page).await?;
        Ok(dialog.map(|dialog| old::pages::Dialog {
            kind: match dialog.kind {
                new::pages::DialogKind::Alert => "alert",
                new::pages::DialogKind::Confirm => "confirm",
                new::pages::DialogKind::Prompt => "prompt",
                new::pages::DialogKind::Beforeunload => "beforeunload",
            }
            .to_string(),
            message: dialog.message,
            default_value: dialog.default_value,
        }))
    }

    async fn handle_dialog(
        &mut self,
        page: Resource<PageHandle>,
        accept: bool,
        prompt_text: Option<String>,
    ) -> Outcome<()> {
        new::input::Host::handle_dialog(self, page, accept, prompt_text).await
    }

    async fn hover(&mut self, page: Resource<PageHandle>, uid: String) -> Outcome<()> {
        new::input::Host::hover(self, page, uid).await
    }

    async fn fill(
        &mut self,
        page: Resource<PageHandle>,
        uid: String,
        value: String,
    ) -> Outcome<()> {
        new::input::Host::fill(self, page, uid, value).await
    }

    async fn type_text(
        &mut self,
        page: Resource<PageHandle>,
        text: String,
        submit_key: Option<String>,
    ) -> Outcome<()> {
        new::input::Host::type_text(self, page, text, submit_key).await
    }

    async fn press_key(&mut self, page: Resource<PageHandle>, key: String) -> Outcome<()> {
        new::input::Host::press_key(self, page, key).await
    }

    async fn drag(
        &mut self,
        page: Resource<PageHandle>,
        from_uid: String,
        to_uid: String,
    ) -> Outcome<()> {
        new::input::Host::drag(self, page, from_uid, to_uid).await
    }

    async fn upload_files(
        &mut self,
        page: Resource<PageHandle>,
        uid: String,
        paths: Vec<String>,
    ) -> Outcome<()> {
        new::files_read::Host::upload_files(self, page, uid, paths).await
    }

    async fn wait_for(
        &mut self,
        page: Resource<PageHandle>,
        texts: Vec<String>,
        timeout_ms: Option<u32>,
    ) -> Outcome<()> {
        new::pages::Host::wait_for(self, page, texts, timeout_ms).await
    }

    async fn resize(&mut self, page: Resource<PageHandle>, width: u32, height: u32) -> Outcome<()> {
        new::emulation::Host::resize(self, page, width, height).await
    }

    async fn emulate(
        &mut self,
        page: Resource<PageHandle>,
        settings: old::pages::Emulation,
    ) -> Outcome<()> {
        // The media features stay strings: the page's emulation answers a wrong one with the
        // reference's message, as it did for 0.2.0.
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
        self.dispatch(&emulation::EMULATE, async |call| {
            emulation::apply(call, &page, request).await
        })
        .await
    }

    async fn screenshot(
        &mut self,
        page: Resource<PageHandle>,
        options: old::pages::ScreenshotOptions,
    ) -> Outcome<old::pages::Screenshot> {
        self.dispatch(&pages::SCREENSHOT, async |call| {
            let shot = pages::capture(
                call,
                &page,
                options.format.clone(),
                options.quality,
                options.uid.as_deref(),
                options.full_page,
            )
            .await?;
            Ok(shot.map(|shot| old::pages::Screenshot {
                data: shot.bytes,
                mime_type: shot.mime_type,
                extension: shot.extension.to_string(),
            }))
        })
        .await
    }

    async fn start_trace(
        &mut self,
        page: Resource<PageHandle>,
        options: old::pages::TraceOptions,
    ) -> Lines {
        let options = new::performance::TraceOptions {
            reload: options.reload,
            auto_stop: options.auto_stop,
            ignore_cache: options.ignore_cache,
            file_path: options.file_path,
        };
        new::performance::Host::start_trace(self, page, options).await
    }

    async fn stop_trace(&mut self, page: Resource<PageHandle>, file_path: Option<String>) -> Lines {
        new::performance::Host::stop_trace(self, page, file_path).await
    }

    async fn analyze_insight(
        &mut self,
        page: Resource<PageHandle>,
        insight_set_id: String,
        insight_name: String,
    ) -> Lines {
        new::performance::Host::analyze_insight(self, page, insight_set_id, insight_name).await
    }

    async fn take_heap_snapshot(&mut self, page: Resource<PageHandle>, file_path: String) -> Lines {
        new::memory::Host::take_snapshot(self, page, file_path).await
    }

    async fn drop(&mut self, page: Resource<PageHandle>) -> wasmtime::Result<()> {
        new::types::HostPage::drop(self, page).await
    }
}

impl old::response::Host for CallState {
    async fn append_line(&mut self, text: String) -> wasmtime::Result<()> {
        new::response::Host::append_line(self, text).await
    }

    async fn include_pages(&mut self) -> wasmtime::Result<()> {
        new::response::Host::include_pages(self).await
    }

    async fn include_snapshot(
        &mut self,
        options: old::response::SnapshotOptions,
    ) -> wasmtime::Result<()> {
        let options = new::response::SnapshotOptions {
            verbose: options.verbose,
            file_path: options.file_path,
            root_uid: None,
            depth: None,
        };
        new::response::Host::include_snapshot(self, options).await
    }

    async fn attach_image(&mut self, data: Vec<u8>, mime_type: String) -> wasmtime::Result<()> {
        new::response::Host::attach_image(self, data, mime_type).await
    }

    async fn attach_screenshot(
        &mut self,
        data: Vec<u8>,
        mime_type: String,
        extension: String,
        file_path: Option<String>,
    ) -> wasmtime::Result<()> {
        new::response::Host::attach_screenshot(self, data, mime_type, extension, file_path).await
    }

    async fn save_file(
        &mut self,
        path: String,
        data: Vec<u8>,
        extension: String,
    ) -> Outcome<String> {
        new::files::Host::save_file(self, path, data, extension).await
    }

    async fn save_temp_file(&mut self, file_name: String, data: Vec<u8>) -> Outcome<String> {
        new::files::Host::save_temp_file(self, file_name, data).await
    }

    async fn include_console_messages(
        &mut self,
        options: old::response::ListOptions,
    ) -> wasmtime::Result<()> {
        new::response::Host::include_console_messages(self, list_options(options)).await
    }

    async fn include_console_message(&mut self, msgid: u32) -> wasmtime::Result<()> {
        new::response::Host::include_console_message(self, msgid).await
    }

    async fn include_network_requests(
        &mut self,
        options: old::response::ListOptions,
    ) -> wasmtime::Result<()> {
        new::response::Host::include_network_requests(self, list_options(options)).await
    }

    async fn include_network_request(
        &mut self,
        reqid: Option<u32>,
        request_file: Option<String>,
        response_file: Option<String>,
    ) -> wasmtime::Result<()> {
        new::response::Host::include_network_request(self, reqid, request_file, response_file).await
    }
}

impl old::styles::Host for CallState {
    async fn get_css_styles(
        &mut self,
        page: Resource<PageHandle>,
        uid: String,
        page_size: u32,
        page_idx: u32,
    ) -> Lines {
        new::styles::Host::get_css_styles(self, page, uid, page_size, page_idx).await
    }
}

impl old::screencast::Host for CallState {
    async fn start_screencast(
        &mut self,
        page: Resource<PageHandle>,
        file_path: Option<String>,
    ) -> Lines {
        new::screencast::Host::start(self, page, file_path).await
    }

    async fn stop_screencast(&mut self, page: Resource<PageHandle>) -> Lines {
        new::screencast::Host::stop(self, page).await
    }
}

impl old::lighthouse::Host for CallState {
    async fn run_lighthouse_audit(
        &mut self,
        page: Resource<PageHandle>,
        options: old::lighthouse::AuditOptions,
    ) -> Lines {
        let mode = match options.mode.as_str() {
            "navigation" => new::lighthouse::AuditMode::Navigation,
            "snapshot" => new::lighthouse::AuditMode::Snapshot,
            mode => {
                let message =
                    format!("Invalid mode \"{mode}\": expected \"navigation\" or \"snapshot\".");
                return self
                    .refuse(&lighthouse::RUN_LIGHTHOUSE_AUDIT, message)
                    .await;
            }
        };
        let device = match options.device.as_str() {
            "desktop" => new::lighthouse::Device::Desktop,
            "mobile" => new::lighthouse::Device::Mobile,
            device => {
                let message =
                    format!("Invalid device \"{device}\": expected \"desktop\" or \"mobile\".");
                return self
                    .refuse(&lighthouse::RUN_LIGHTHOUSE_AUDIT, message)
                    .await;
            }
        };
        let options = new::lighthouse::AuditOptions {
            mode,
            device,
            output_dir_path: options.output_dir_path,
        };
        new::lighthouse::Host::run_audit(self, page, options).await
    }
}

impl old::heap::Host for CallState {
    async fn heap_summary(&mut self, file_path: String, max_name_length: Option<u64>) -> Lines {
        new::memory::Host::summary(self, file_path, max_name_length).await
    }

    async fn heap_details(
        &mut self,
        file_path: String,
        filter: Option<old::heap::NodeFilter>,
        options: old::heap::ListOptions,
    ) -> Lines {
        match heap_filter(filter) {
            Ok(filter) => {
                new::memory::Host::details(self, file_path, filter, heap_list(options)).await
            }
            Err(message) => self.refuse(&memory::HEAP_DETAILS, message).await,
        }
    }

    async fn heap_class_nodes(
        &mut self,
        file_path: String,
        class_id: f64,
        filter: Option<old::heap::NodeFilter>,
        options: old::heap::ListOptions,
    ) -> Lines {
        match heap_filter(filter) {
            Ok(filter) => {
                let options = heap_list(options);
                new::memory::Host::class_nodes(self, file_path, class_id, filter, options).await
            }
            Err(message) => self.refuse(&memory::HEAP_CLASS_NODES, message).await,
        }
    }

    async fn heap_retainers(
        &mut self,
        file_path: String,
        node_id: f64,
        options: old::heap::ListOptions,
    ) -> Lines {
        new::memory::Host::retainers(self, file_path, node_id, heap_list(options)).await
    }

    async fn heap_retaining_paths(
        &mut self,
        file_path: String,
        node_id: f64,
        max_depth: Option<f64>,
        max_nodes: Option<f64>,
        max_siblings: Option<f64>,
        max_name_length: Option<u64>,
    ) -> Lines {
        new::memory::Host::retaining_paths(
            self,
            file_path,
            node_id,
            max_depth,
            max_nodes,
            max_siblings,
            max_name_length,
        )
        .await
    }

    async fn heap_edges(
        &mut self,
        file_path: String,
        node_id: f64,
        sort_by: Option<String>,
        retained_size: Option<String>,
        exclude_primitives: Option<bool>,
        options: old::heap::ListOptions,
    ) -> Lines {
        let sort = match sort_by.as_deref() {
            None => None,
            Some("retainedSize") => Some(new::memory::EdgeSort::RetainedSize),
            Some("selfSize") => Some(new::memory::EdgeSort::SelfSize),
            Some("name") => Some(new::memory::EdgeSort::Name),
            Some(other) => {
                let message = format!("Invalid sortBy: {other}");
                return self.refuse(&memory::HEAP_EDGES, message).await;
            }
        };
        new::memory::Host::edges(
            self,
            file_path,
            node_id,
            sort,
            retained_size,
            exclude_primitives,
            heap_list(options),
        )
        .await
    }

    async fn heap_dominators(
        &mut self,
        file_path: String,
        node_id: f64,
        max_name_length: Option<u64>,
    ) -> Lines {
        new::memory::Host::dominators(self, file_path, node_id, max_name_length).await
    }

    async fn heap_object_details(
        &mut self,
        file_path: String,
        node_id: f64,
        max_name_length: Option<u64>,
    ) -> Lines {
        new::memory::Host::object_details(self, file_path, node_id, max_name_length).await
    }

    async fn heap_duplicate_strings(
        &mut self,
        file_path: String,
        options: old::heap::ListOptions,
    ) -> Lines {
        new::memory::Host::duplicate_strings(self, file_path, heap_list(options)).await
    }

    async fn heap_compare(
        &mut self,
        base_file_path: String,
        current_file_path: String,
        class_index: Option<f64>,
        options: old::heap::ListOptions,
    ) -> Lines {
        let options = heap_list(options);
        new::memory::Host::compare(
            self,
            base_file_path,
            current_file_path,
            class_index,
            options,
        )
        .await
    }

    async fn heap_query_objects(
        &mut self,
        file_path: String,
        query: old::heap::ObjectQuery,
        options: old::heap::ListOptions,
    ) -> Lines {
        let sort_by = match query.sort_by.as_deref() {
            None => None,
            Some("retainedSize") => Some(new::memory::NodeSort::RetainedSize),
            Some("selfSize") => Some(new::memory::NodeSort::SelfSize),
            Some("id") => Some(new::memory::NodeSort::Id),
            Some(other) => {
                let message = format!("Invalid sortBy: {other}");
                return self.refuse(&memory::HEAP_QUERY_OBJECTS, message).await;
            }
        };
        let query = new::memory::ObjectQuery {
            class_name: query.class_name,
            property_name: query.property_name,
            node_type: query.node_type,
            retained_size: query.retained_size,
            self_size: query.self_size,
            is_detached: query.is_detached,
            sort_by,
        };
        new::memory::Host::query_objects(self, file_path, query, heap_list(options)).await
    }

    async fn heap_analyze_contexts(
        &mut self,
        file_path: String,
        retained_size: Option<String>,
        scope_info_node_id: Option<i64>,
        options: old::heap::ListOptions,
    ) -> Lines {
        let options = heap_list(options);
        new::memory::Host::analyze_contexts(
            self,
            file_path,
            retained_size,
            scope_info_node_id,
            options,
        )
        .await
    }

    async fn heap_close(&mut self, file_path: String) -> Lines {
        new::memory::Host::close(self, file_path).await
    }
}

impl old::vision::Host for CallState {
    async fn click_at(
        &mut self,
        page: Resource<PageHandle>,
        x: f64,
        y: f64,
        count: u32,
    ) -> Outcome<()> {
        new::input::Host::click_at(self, page, x, y, count).await
    }
}

impl old::interop::Host for CallState {
    async fn tab_id(&mut self, page: Resource<PageHandle>) -> Outcome<String> {
        new::pages::Host::tab_id(self, page).await
    }
}

impl old::page_tools::Host for CallState {
    async fn list_developer_tools(&mut self, page: Resource<PageHandle>) -> Lines {
        new::page_tools::Host::list_developer_tools(self, page).await
    }

    async fn execute_developer_tool(
        &mut self,
        page: Resource<PageHandle>,
        name: String,
        params: String,
    ) -> Lines {
        new::page_tools::Host::execute_developer_tool(self, page, name, params).await
    }

    async fn list_webmcp_tools(&mut self, page: Resource<PageHandle>) -> Lines {
        new::page_tools::Host::list_webmcp_tools(self, page).await
    }

    async fn execute_webmcp_tool(
        &mut self,
        page: Resource<PageHandle>,
        name: String,
        input: String,
    ) -> Lines {
        new::page_tools::Host::execute_webmcp_tool(self, page, name, input).await
    }
}

impl old::extensions::Host for CallState {
    async fn install_extension(&mut self, path: String) -> Outcome<String> {
        new::extensions_install::Host::install(self, path).await
    }

    async fn uninstall_extension(&mut self, id: String) -> Outcome<()> {
        new::extensions::Host::uninstall(self, id).await
    }

    async fn list_extensions(&mut self) -> Lines {
        new::extensions::Host::installed(self).await
    }

    async fn reload_extension(&mut self, id: String) -> Outcome<()> {
        new::extensions_install::Host::reload(self, id).await
    }

    async fn trigger_extension_action(
        &mut self,
        id: String,
        page: Resource<PageHandle>,
    ) -> Outcome<()> {
        new::extensions::Host::trigger_action(self, id, page).await
    }

    async fn evaluate_in_service_worker(
        &mut self,
        service_worker_id: String,
        function: String,
        options: old::pages::EvaluateOptions,
    ) -> Outcome<String> {
        let options = evaluate_options(options);
        new::script::Host::evaluate_in_service_worker(self, service_worker_id, function, options)
            .await
    }
}

impl old::pwa::Host for CallState {
    async fn install_pwa(
        &mut self,
        manifest_id: String,
        install_url_or_bundle_url: String,
        display_mode: Option<String>,
    ) -> Outcome<()> {
        let mode = match display_mode.as_deref() {
            None => None,
            Some("standalone") => Some(new::pwa::DisplayMode::Standalone),
            Some("browser") => Some(new::pwa::DisplayMode::Browser),
            Some(mode) => {
                let message =
                    format!("Invalid display mode \"{mode}\": use \"standalone\" or \"browser\".");
                return self.refuse(&pwa::INSTALL_PWA, message).await;
            }
        };
        new::pwa::Host::install(self, manifest_id, install_url_or_bundle_url, mode).await
    }

    async fn uninstall_pwa(&mut self, manifest_id: String) -> Outcome<()> {
        new::pwa::Host::uninstall(self, manifest_id).await
    }

    async fn launch_pwa(
        &mut self,
        manifest_id: String,
        url: Option<String>,
    ) -> Outcome<Resource<PageHandle>> {
        new::pwa::Host::launch(self, manifest_id, url).await
    }

    async fn get_os_app_state(&mut self, manifest_id: String) -> Outcome<old::pwa::OsAppState> {
        let state = new::pwa::Host::get_os_app_state(self, manifest_id).await?;
        Ok(state.map(|state| old::pwa::OsAppState {
            badge_count: state.badge_count,
            file_handlers: state.file_handlers,
        }))
    }
}

/// The 0.2.0 function each old (interface, function) reaches, for `plugin check`: what a
/// component built against 0.2.0 can call for is what these need.
pub const V0_2_FUNCTIONS: &[(&str, &str, &str, &str)] = &[
    ("pages", "selected", "pages", "selected"),
    ("pages", "get", "pages", "get"),
    ("pages", "select", "pages-manage", "select"),
    ("pages", "new-page", "pages-manage", "new-page"),
    ("pages", "close", "pages-manage", "close"),
    ("pages", "[method]page.id", "types", "[method]page.id"),
    ("pages", "[method]page.url", "pages", "url"),
    ("pages", "[method]page.navigate", "navigate", "navigate"),
    ("pages", "[method]page.click", "input", "click"),
    (
        "pages",
        "[method]page.evaluate-expression",
        "script",
        "evaluate-expression",
    ),
    ("pages", "[method]page.evaluate", "script", "evaluate"),
    ("pages", "[method]page.dialog", "pages", "open-dialog"),
    (
        "pages",
        "[method]page.handle-dialog",
        "input",
        "handle-dialog",
    ),
    ("pages", "[method]page.hover", "input", "hover"),
    ("pages", "[method]page.fill", "input", "fill"),
    ("pages", "[method]page.type-text", "input", "type-text"),
    ("pages", "[method]page.press-key", "input", "press-key"),
    ("pages", "[method]page.drag", "input", "drag"),
    (
        "pages",
        "[method]page.upload-files",
        "files-read",
        "upload-files",
    ),
    ("pages", "[method]page.wait-for", "pages", "wait-for"),
    ("pages", "[method]page.resize", "emulation", "resize"),
    ("pages", "[method]page.emulate", "emulation", "emulate"),
    (
        "pages",
        "[method]page.screenshot",
        "pages",
        "take-screenshot",
    ),
    (
        "pages",
        "[method]page.start-trace",
        "performance",
        "start-trace",
    ),
    (
        "pages",
        "[method]page.stop-trace",
        "performance",
        "stop-trace",
    ),
    (
        "pages",
        "[method]page.analyze-insight",
        "performance",
        "analyze-insight",
    ),
    (
        "pages",
        "[method]page.take-heap-snapshot",
        "memory",
        "take-snapshot",
    ),
    (
        "pages",
        "[resource-drop]page",
        "types",
        "[resource-drop]page",
    ),
    ("response", "append-line", "response", "append-line"),
    ("response", "include-pages", "response", "include-pages"),
    (
        "response",
        "include-snapshot",
        "response",
        "include-snapshot",
    ),
    ("response", "attach-image", "response", "attach-image"),
    (
        "response",
        "attach-screenshot",
        "response",
        "attach-screenshot",
    ),
    ("response", "save-file", "files", "save-file"),
    ("response", "save-temp-file", "files", "save-temp-file"),
    (
        "response",
        "include-console-messages",
        "response",
        "include-console-messages",
    ),
    (
        "response",
        "include-console-message",
        "response",
        "include-console-message",
    ),
    (
        "response",
        "include-network-requests",
        "response",
        "include-network-requests",
    ),
    (
        "response",
        "include-network-request",
        "response",
        "include-network-request",
    ),
    ("styles", "get-css-styles", "styles", "get-css-styles"),
    ("screencast", "start-screencast", "screencast", "start"),
    ("screencast", "stop-screencast", "screencast", "stop"),
    (
        "lighthouse",
        "run-lighthouse-audit",
        "lighthouse",
        "run-audit",
    ),
    ("heap", "heap-summary", "memory", "summary"),
    ("heap", "heap-details", "memory", "details"),
    ("heap", "heap-class-nodes", "memory", "class-nodes"),
    ("heap", "heap-retainers", "memory", "retainers"),
    ("heap", "heap-retaining-paths", "memory", "retaining-paths"),
    ("heap", "heap-edges", "memory", "edges"),
    ("heap", "heap-dominators", "memory", "dominators"),
    ("heap", "heap-object-details", "memory", "object-details"),
    (
        "heap",
        "heap-duplicate-strings",
        "memory",
        "duplicate-strings",
    ),
    ("heap", "heap-compare", "memory", "compare"),
    ("heap", "heap-query-objects", "memory", "query-objects"),
    (
        "heap",
        "heap-analyze-contexts",
        "memory",
        "analyze-contexts",
    ),
    ("heap", "heap-close", "memory", "close"),
    ("vision", "click-at", "input", "click-at"),
    ("interop", "tab-id", "pages", "tab-id"),
    (
        "page-tools",
        "list-developer-tools",
        "page-tools",
        "list-developer-tools",
    ),
    (
        "page-tools",
        "execute-developer-tool",
        "page-tools",
        "execute-developer-tool",
    ),
    (
        "page-tools",
        "list-webmcp-tools",
        "page-tools",
        "list-webmcp-tools",
    ),
    (
        "page-tools",
        "execute-webmcp-tool",
        "page-tools",
        "execute-webmcp-tool",
    ),
    (
        "extensions",
        "install-extension",
        "extensions-install",
        "install",
    ),
    (
        "extensions",
        "uninstall-extension",
        "extensions",
        "uninstall",
    ),
    ("extensions", "list-extensions", "extensions", "installed"),
    (
        "extensions",
        "reload-extension",
        "extensions-install",
        "reload",
    ),
    (
        "extensions",
        "trigger-extension-action",
        "extensions",
        "trigger-action",
    ),
    (
        "extensions",
        "evaluate-in-service-worker",
        "script",
        "evaluate-in-service-worker",
    ),
    ("pwa", "install-pwa", "pwa", "install"),
    ("pwa", "uninstall-pwa", "pwa", "uninstall"),
    ("pwa", "launch-pwa", "pwa", "launch"),
    ("pwa", "get-os-app-state", "pwa", "get-os-app-state"),
];

#[cfg(test)]
mod tests {
    use super::V0_2_FUNCTIONS;
    use crate::runtime::calling::host_api::function::find;

    /// Every function of the frozen 0.2.0 world is mapped, once, to a function of today's
    /// contract that exists: `plugin check` of an old component reports what its calls need.
    #[test]
    fn every_function_of_0_2_0_reaches_a_function_of_today() {
        let wit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit/since_v0.2.0");
        let mut resolve = wit_parser::Resolve::default();
        let (package, _) = resolve.push_dir(&wit).expect("0.2.0 parses");
        let world = resolve.packages[package].worlds["plugin"];
        let mut old = Vec::new();
        for item in resolve.worlds[world].imports.values() {
            if let wit_parser::WorldItem::Interface { id, .. } = item {
                let interface = &resolve.interfaces[*id];
                let name = interface.name.clone().unwrap_or_default();
                old.extend(
                    interface
                        .functions
                        .keys()
                        .map(|f| (name.clone(), f.clone())),
                );
                if name == "pages" {
                    old.push((name.clone(), "[resource-drop]page".to_string()));
                }
            }
        }
        for (interface, function) in &old {
            let mapped: Vec<_> = V0_2_FUNCTIONS
                .iter()
                .filter(|(i, f, _, _)| i == interface && f == function)
                .collect();
            assert_eq!(mapped.len(), 1, "{interface}/{function}: {mapped:?}");
            let (_, _, new_interface, new_function) = mapped[0];
            assert!(
                find(new_interface, new_function).is_some(),
                "{interface}/{function} -> {new_interface}/{new_function} is not declared"
            );
        }
        assert_eq!(old.len(), V0_2_FUNCTIONS.len());
    }
}
