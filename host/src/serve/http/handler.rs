//! The MCP handler of the HTTP server. Every request carries its tenant (authenticated before
//! rmcp saw it); a call runs in that tenant's session, under its policy and quotas, and an MCP
//! session stays bound to the tenant that opened it.

use super::auth::AuthenticatedTenant;
use super::disconnect::Disconnected;
use super::live_view;
use super::metrics::Metrics;
use crate::pipeline::{CallError, Pipeline};
use crate::policy::tenant_urls::UrlPolicy;
use crate::runtime::definition::category_info;
use crate::serve::tenants::registry::{Registry, SessionSlot};
use crate::serve::tenants::{BrowserMode, Tenant};
use futures::FutureExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One MCP session (or one stateless request) of the HTTP server.
#[derive(Clone)]
pub struct TenantServer {
    pipeline: Arc<Pipeline>,
    tenants: Arc<Registry>,
    metrics: Arc<Metrics>,
    /// Set by `initialize`: the tenant this MCP session belongs to, counted in its quota.
    slot: Arc<Mutex<Option<SessionSlot>>>,
    /// `--experimentalTasks`: this MCP session's long calls, as tasks.
    tasks: Arc<crate::serve::tasks::CallTasks>,
}

mod tasks;

impl TenantServer {
    pub fn new(pipeline: Arc<Pipeline>, tenants: Arc<Registry>, metrics: Arc<Metrics>) -> Self {
        TenantServer {
            pipeline,
            tenants,
            metrics,
            slot: Arc::new(Mutex::new(None)),
            tasks: Arc::default(),
        }
    }

    /// The request's tenant, as authenticated and as the tenants file says now.
    fn tenant(&self, context: &RequestContext<RoleServer>) -> Result<Arc<Tenant>, ErrorData> {
        let authenticated = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<AuthenticatedTenant>())
            .ok_or_else(|| ErrorData::internal_error("The request has no tenant.", None))?;
        let tenant = authenticated.0.clone();
        let bound = self
            .slot
            .lock()
            .ok()
            .and_then(|slot| slot.as_ref().map(|slot| slot.tenant.clone()));
        if bound.is_some_and(|bound| bound != tenant.name) {
            return Err(ErrorData::invalid_request(
                "This MCP session belongs to another tenant; open a session with your own token.",
                None,
            ));
        }
        Ok(tenant)
    }

    /// The flags deciding which tools this tenant has: the server's, with its own laid over
    /// them (`None` when it has none of its own). Computed once per request.
    /// A person's live view is opt-in per tenant: off for one that did not set it.
    fn flags(&self, tenant: &Tenant) -> Option<Map<String, Value>> {
        let withheld = live_view::server_allows(&self.pipeline) && !live_view::opted_in(tenant);
        if !withheld {
            return (!tenant.flags.is_empty()).then(|| self.pipeline.flags_with(&tenant.flags));
        }
        let mut own = tenant.flags.clone();
        own.insert(live_view::FLAG.into(), Value::Bool(false));
        Some(self.pipeline.flags_with(&own))
    }

    /// The tenant's output budget: the lower of the server's and its own.
    fn output_tokens(&self, tenant: &Tenant) -> Option<u32> {
        match (self.pipeline.output_tokens, tenant.quotas.output_tokens) {
            (Some(server), Some(own)) => Some(server.min(own)),
            (server, own) => server.or(own),
        }
    }

    /// Whether any answer may be cut (the server's budget, or a tenant's): then `resources`
    /// are declared, for reading cut answers whole.
    fn output_budget_anywhere(&self) -> bool {
        self.pipeline.output_tokens.is_some() || self.tenants.any_output_budget()
    }

    /// Why the tenant may not use the tool, if it may not.
    fn refusal(
        &self,
        tenant: &Tenant,
        flags: Option<&Map<String, Value>>,
        tool: &Tool,
    ) -> Option<String> {
        if tool.name == live_view::TOOL
            && live_view::server_allows(&self.pipeline)
            && !live_view::opted_in(tenant)
        {
            return Some(live_view::refusal(tenant));
        }
        let tools = self.pipeline.tools.current();
        let entry = tools.get(&tool.name);
        if let Some(disabled) = entry.and_then(|entry| self.pipeline.disabled(entry, flags)) {
            return Some(disabled);
        }
        let category = entry
            .map(|entry| category_info(entry.definition().annotations.category).0)
            .unwrap_or_default();
        if !tenant.policy.allows(&tool.name, category) {
            return Some(format!(
                "Tool {} is not allowed for tenant {:?} by the server's tenants file.",
                tool.name, tenant.name
            ));
        }
        if tenant.browser == BrowserMode::Shared && BROWSER_WIDE_TOOLS.contains(&&*tool.name) {
            return Some(format!(
                "Tool {} records every tab of the browser, which tenant {:?} shares with others; it needs browser = \"dedicated\" in the tenants file.",
                tool.name, tenant.name
            ));
        }
        None
    }
}

/// Tools whose effect reaches beyond one browser context: a performance trace records every
/// renderer of the browser. Only tenants with a browser of their own get them.
const BROWSER_WIDE_TOOLS: [&str; 1] = ["performance_start_trace"];

/// Parses and checks every URL argument of a tenant's call (any argument whose name contains
/// `url`), replacing each with the serialization that was checked: the browser then loads
/// exactly what the policy saw. A navigation's `initScript` needs the right to run script.
fn check_url_arguments(
    policy: UrlPolicy,
    arguments: &mut serde_json::Map<String, serde_json::Value>,
) -> Result<(), String> {
    for (key, value) in arguments.iter_mut() {
        if key.eq_ignore_ascii_case("initScript") && !policy.script && !value.is_null() {
            return Err(
                "initScript: runs script in the page, and this tenant may not run script (evaluate_script is not allowed for it).".into(),
            );
        }
        if !key.to_ascii_lowercase().contains("url") {
            continue;
        }
        let Some(raw) = value.as_str() else { continue };
        let checked = policy
            .check(raw)
            .map_err(|refusal| format!("{key}: {refusal}"))?;
        *value = serde_json::Value::String(checked.to_string());
    }
    Ok(())
}

/// Appends what happened outside the call that the tenant should know: requests its egress
/// policy refused, pages closed by its quotas.
fn append_notes(result: &mut CallToolResult, notes: Vec<String>) {
    if notes.is_empty() {
        return;
    }
    let text = notes
        .iter()
        .map(|note| format!("- {note}"))
        .collect::<Vec<_>>()
        .join("\n");
    result
        .content
        .push(ContentBlock::text(format!("## Server notes\n{text}")));
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

impl ServerHandler for TenantServer {
    /// Accepted and ignored, as 1.11.0 does: the server's log goes to stderr at its own level.
    /// (MCP deprecates logging in a later revision; clients of 1.11.0 still send it.)
    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        Ok(())
    }

    fn get_info(&self) -> ServerConfig {
        let mut implementation = Implementation::new("devtools_mcp", env!("CARGO_PKG_VERSION"));
        implementation.title =
            Some("devtools-mcp: Chrome DevTools tools as WebAssembly components".into());
        let capabilities = crate::serve::capabilities_for(self.output_budget_anywhere());
        let capabilities = match self.pipeline.tasks {
            true => crate::serve::tasks::declare(capabilities),
            false => capabilities,
        };
        ServerConfig::new(capabilities)
            .with_server_info(implementation)
            .with_instructions(crate::serve::INSTRUCTIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let tenant = self.tenant(&context)?;
        let slot = self
            .tenants
            .open_session(&tenant)
            .map_err(|message| ErrorData::invalid_request(message, None))?;
        if let Ok(mut current) = self.slot.lock() {
            *current = Some(slot);
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tenant = self.tenant(&context)?;
        // Every tool, gated by the server's flags with the tenant's laid over them.
        let flags = self.flags(&tenant);
        let tools = self
            .pipeline
            .tools
            .current()
            .iter()
            .map(|entry| entry.listing.clone())
            .filter(|tool| self.refusal(&tenant, flags.as_ref(), tool).is_none())
            .collect();
        let structured = self
            .pipeline
            .structured_for(crate::serve::stdio::roots::is_modern(&context));
        let mut tools = self.pipeline.as_listed(tools, structured);
        if self.output_tokens(&tenant).is_some() {
            tools = crate::pipeline::budget::with_cursor(tools);
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    /// Under an output budget: the whole text of an answer it cut, for this tenant only.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let tenant = self.tenant(&context)?;
        let refused = || {
            ErrorData::resource_not_found(
                format!(
                    "{} is not an answer of tenant {:?}: a tenant reads only the answers cut for it. Call the tool again for a fresh answer.",
                    request.uri, tenant.name
                ),
                None,
            )
        };
        let runtime = self.tenants.running(&tenant.name).ok_or_else(refused)?;
        crate::pipeline::budget::read_whole(&runtime.session, &request.uri).map(Into::into)
    }

    /// Any loaded tool: whether this tenant may use it is `refusal`'s to say.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.pipeline
            .tools
            .current()
            .get(name)
            .map(|tool| tool.listing.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = Instant::now();
        let tenant = self.tenant(&context)?;
        let name = request.name.to_string();
        // A request without an MCP session (the stateless protocol) takes a session place
        // for its duration, like any session.
        let stateless = self.slot.lock().map(|slot| slot.is_none()).unwrap_or(true);
        let _place = match stateless {
            true => Some(
                self.tenants
                    .open_session(&tenant)
                    .map_err(|message| ErrorData::invalid_request(message, None))?,
            ),
            false => None,
        };
        if let Some(as_task) = self.as_task(&tenant, stateless, &context) {
            return as_task.run(request, context).await;
        }
        let outcome = self.run(&tenant, request, &context, Scope::Request).await;
        let failed = match &outcome {
            Ok(result) => result.is_error == Some(true),
            Err(_) => true,
        };
        let elapsed = started.elapsed();
        self.metrics
            .record_call(&tenant.name, &name, failed, elapsed);
        tracing::info!(
            tenant = %tenant.name,
            tool = %name,
            failed,
            elapsed_ms = elapsed.as_millis() as u64,
            "tool call"
        );
        outcome.map(Into::into)
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        self.tenant(&context)?;
        self.tasks.get(&request.task_id)
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tenant(&context)?;
        self.tasks.update(&request.task_id)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tenant(&context)?;
        self.tasks.cancel(&request.task_id)
    }
}

/// What may stop a call besides its budget and a reload: the request that carries it, or,
/// for a task, only `tasks/cancel` (the request that created it has been answered).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    Request,
    Task,
}

impl TenantServer {
    async fn run(
        &self,
        tenant: &Tenant,
        mut request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        scope: Scope,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(tool) = self.get_tool(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("Tool {} not found", request.name),
                None,
            ));
        };
        if let Some(message) = self.refusal(tenant, self.flags(tenant).as_ref(), &tool) {
            return Ok(error_result(message));
        }
        if let Some(arguments) = request.arguments.as_mut()
            && let Err(message) = check_url_arguments(tenant.urls, arguments)
        {
            return Ok(error_result(message));
        }
        let ticket = match self.tenants.enter(tenant) {
            Ok(ticket) => ticket,
            Err(message) => return Ok(error_result(message)),
        };
        let runtime = ticket.runtime.clone();
        let mut outcome = self.call(tenant, &ticket, request, context, scope).await;
        // Still counted in flight (a shutdown drains until the answer is complete).
        let _settled = tokio::time::timeout(
            std::time::Duration::from_secs(2),
            runtime.session.settle_pages(),
        )
        .await;
        let mut notes = runtime.session.take_notes();
        notes.extend(
            runtime
                .proxy
                .take_refusals()
                .into_iter()
                .map(|refused| format!("Refused by this server's egress policy: {refused}")),
        );
        if let Ok(result) = &mut outcome {
            append_notes(result, notes);
        }
        drop(ticket);
        outcome
    }

    async fn call(
        &self,
        tenant: &Tenant,
        ticket: &crate::serve::tenants::registry::CallTicket,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        scope: Scope,
    ) -> Result<CallToolResult, ErrorData> {
        let quotas = &tenant.quotas;
        // A task outlives its request and its connection: neither ending stops it.
        let (cancelled, disconnected) = match scope {
            Scope::Request => (
                context.ct.clone(),
                context
                    .extensions
                    .get::<http::request::Parts>()
                    .and_then(|parts| parts.extensions.get::<Disconnected>())
                    .map(|disconnected| disconnected.0.clone())
                    .unwrap_or_default(),
            ),
            Scope::Task => Default::default(),
        };
        let call_started = std::time::Instant::now();
        // A bug in the host must cost one call, not the server: a panic becomes an error.
        let structured = self
            .pipeline
            .structured_for(crate::serve::stdio::roots::is_modern(context));
        // Engine jobs the call starts take this tenant's share of the engine's slots.
        // A live view this call opens is served on the tenant's endpoint.
        let live_views = live_view::endpoint(&self.pipeline, &self.tenants, tenant, context);
        let call = std::panic::AssertUnwindSafe(crate::engine::as_tenant(
            &tenant.name,
            // Boxed: the call is a large future, and a debug build's worker stack holds it
            // once per layer around it (a sessionless request overflowed it unboxed).
            crate::browser::features::human::tenant::serving(
                live_views,
                Box::pin(self.pipeline.call_as(
                    &ticket.runtime.session,
                    &request.name,
                    request.arguments,
                    structured,
                    crate::serve::stdio::roots::reads_resource_links(context),
                )),
            ),
        ))
        .catch_unwind();
        let call = crate::serve::progress::reported(context, &request.name, call);
        // Dropping the call (cancelled, over budget, revoked) releases the tenant's lock; the
        // script it may have started in a page is stopped too.
        let stopped = |why: &'static str| {
            let session = ticket.runtime.session.clone();
            tokio::spawn(async move {
                let terminated = session.terminate_scripts(call_started).await;
                tracing::info!(
                    why,
                    terminated,
                    "stopped the scripts of a call that did not finish"
                );
            });
        };
        tokio::select! {
            result = tokio::time::timeout(quotas.call_timeout, call) => match result {
                Ok(Ok(Ok(result))) => Ok(result),
                Ok(Ok(Err(error @ CallError::UnknownTool(_)))) => Err(ErrorData::invalid_params(error.to_string(), None)),
                Ok(Err(_)) => Err(ErrorData::internal_error(
                    format!("devtools-mcp failed while running {}; the server keeps serving. Please report this.", request.name),
                    None,
                )),
                Err(_) => {
                    stopped("budget");
                    Ok(error_result(format!(
                        "The call did not finish within this tenant's budget of {} s and was stopped (scripts it started in the page were terminated).",
                        quotas.call_timeout.as_secs()
                    )))
                }
            },
            _ = cancelled.cancelled() => {
                stopped("cancelled");
                Err(ErrorData::internal_error("The call was cancelled.", None))
            }
            _ = ticket.runtime.revoked.cancelled() => {
                Err(ErrorData::internal_error("This tenant was revoked, removed or changed by a reload of the tenants file; the call was stopped. Send it again to run it under the new settings.", None))
            }
            _ = disconnected.cancelled() => {
                stopped("disconnected");
                tracing::info!(tenant = %tenant.name, tool = %request.name, "the client hung up; call stopped");
                Err(ErrorData::internal_error("The client disconnected; the call was stopped.", None))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{UrlPolicy, check_url_arguments};
    use serde_json::json;

    fn checked(
        policy: UrlPolicy,
        arguments: serde_json::Value,
    ) -> Result<serde_json::Value, String> {
        let mut map = arguments.as_object().cloned().unwrap_or_default();
        check_url_arguments(policy, &mut map).map(|()| serde_json::Value::Object(map))
    }

    #[test]
    fn url_arguments_are_checked_parsed_and_replaced_by_what_was_checked() {
        let tenant = UrlPolicy { script: false };
        assert!(checked(tenant, json!({ "url": "fi\tle:///etc/passwd" })).is_err());
        assert!(checked(tenant, json!({ "url": " \u{1}chrome://version" })).is_err());
        assert!(checked(tenant, json!({ "targetUrl": "view-source:http://a/" })).is_err());
        let passed = checked(tenant, json!({ "url": "http://EXAMPLE.com/a\nb" })).expect("allowed");
        assert_eq!(passed["url"], "http://example.com/ab");
        let other_key = checked(tenant, json!({ "function": "file:///x" })).expect("not a URL");
        assert_eq!(other_key["function"], "file:///x");
    }

    #[test]
    fn init_scripts_need_the_right_to_run_script() {
        let tenant = UrlPolicy { script: false };
        let refused = checked(tenant, json!({ "url": "http://a/", "initScript": "1" }));
        assert!(refused.is_err_and(|message| message.contains("initScript")));
        let scripting = UrlPolicy { script: true };
        assert!(checked(scripting, json!({ "url": "http://a/", "initScript": "1" })).is_ok());
    }
}
