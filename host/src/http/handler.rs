//! The MCP handler of the HTTP server. Every request carries its tenant (authenticated before
//! rmcp saw it); a call runs in that tenant's session, under its policy and quotas, and an MCP
//! session stays bound to the tenant that opened it.

use super::auth::AuthenticatedTenant;
use super::disconnect::Disconnected;
use super::metrics::Metrics;
use crate::pipeline::gate::category_info;
use crate::pipeline::{CallError, Pipeline};
use crate::tenants::registry::{Registry, SessionSlot};
use crate::tenants::{BrowserMode, Tenant};
use futures::FutureExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
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
}

impl TenantServer {
    pub fn new(pipeline: Arc<Pipeline>, tenants: Arc<Registry>, metrics: Arc<Metrics>) -> Self {
        TenantServer {
            pipeline,
            tenants,
            metrics,
            slot: Arc::new(Mutex::new(None)),
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
    fn flags(&self, tenant: &Tenant) -> Option<Map<String, Value>> {
        (!tenant.flags.is_empty()).then(|| self.pipeline.flags_with(&tenant.flags))
    }

    /// Why the tenant may not use the tool, if it may not.
    fn refusal(
        &self,
        tenant: &Tenant,
        flags: Option<&Map<String, Value>>,
        tool: &Tool,
    ) -> Option<String> {
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

/// URL schemes a tenant may not open: the browser would read the server's files (other
/// tenants' roots included) or its own internal pages for it.
const REFUSED_URL_SCHEMES: [&str; 6] = [
    "file:",
    "filesystem:",
    "chrome:",
    "chrome-untrusted:",
    "devtools:",
    "view-source:",
];

/// Why a URL argument is refused, if one is.
fn local_url_refusal(arguments: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    arguments
        .iter()
        .filter(|(key, _)| key.to_ascii_lowercase().contains("url"))
        .filter_map(|(key, value)| Some((key, value.as_str()?)))
        .find_map(|(key, url)| {
            let lowered = url.trim().to_ascii_lowercase();
            REFUSED_URL_SCHEMES
                .iter()
                .find(|scheme| lowered.starts_with(*scheme))
                .map(|scheme| {
                    format!(
                        "{key}: {scheme} URLs are not available over HTTP; use an http(s) or data: URL."
                    )
                })
        })
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

impl ServerHandler for TenantServer {
    fn get_info(&self) -> ServerConfig {
        let mut implementation = Implementation::new("devtools_mcp", env!("CARGO_PKG_VERSION"));
        implementation.title =
            Some("devtools-mcp: Chrome DevTools tools as WebAssembly components".into());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(implementation)
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
        Ok(ListToolsResult::with_all_items(tools))
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
        let outcome = self.run(&tenant, request, &context).await;
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
}

impl TenantServer {
    async fn run(
        &self,
        tenant: &Tenant,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
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
        if let Some(message) = request.arguments.as_ref().and_then(local_url_refusal) {
            return Ok(error_result(message));
        }
        let ticket = self
            .tenants
            .enter(tenant)
            .map_err(|message| ErrorData::internal_error(message, None))?;
        let quotas = &tenant.quotas;
        let disconnected = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Disconnected>())
            .map(|disconnected| disconnected.0.clone())
            .unwrap_or_default();
        // A bug in the host must cost one call, not the server: a panic becomes an error.
        let call = std::panic::AssertUnwindSafe(self.pipeline.call(
            &ticket.runtime.session,
            &request.name,
            request.arguments,
        ))
        .catch_unwind();
        // Dropping the call (cancelled, over budget) releases the tenant's lock.
        tokio::select! {
            result = tokio::time::timeout(quotas.call_timeout, call) => match result {
                Ok(Ok(Ok(result))) => Ok(result),
                Ok(Ok(Err(error @ CallError::UnknownTool(_)))) => Err(ErrorData::invalid_params(error.to_string(), None)),
                Ok(Err(_)) => Err(ErrorData::internal_error(
                    format!("devtools-mcp failed while running {}; the server keeps serving. Please report this.", request.name),
                    None,
                )),
                Err(_) => Ok(error_result(format!(
                    "The call did not finish within this tenant's budget of {} s and was stopped.",
                    quotas.call_timeout.as_secs()
                ))),
            },
            _ = context.ct.cancelled() => Err(ErrorData::internal_error("The call was cancelled.", None)),
            _ = disconnected.cancelled() => {
                tracing::info!(tenant = %tenant.name, tool = %request.name, "the client hung up; call stopped");
                Err(ErrorData::internal_error("The client disconnected; the call was stopped.", None))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::local_url_refusal;
    use serde_json::json;

    #[test]
    fn refuses_urls_that_reach_the_server_or_browser_internals() {
        let refused = |url: &str| {
            let arguments = json!({ "url": url });
            local_url_refusal(arguments.as_object().expect("an object")).is_some()
        };
        assert!(refused("file:///etc/passwd"));
        assert!(refused("  FILE:///tmp/other-tenant/secret.txt"));
        assert!(refused("chrome://settings"));
        assert!(refused("view-source:http://127.0.0.1/"));
        assert!(!refused("http://127.0.0.1:8080/file:"));
        assert!(!refused("data:text/html,hi"));
        assert!(!refused("about:blank"));
        let other_key = json!({ "function": "file:///x" });
        assert!(local_url_refusal(other_key.as_object().expect("an object")).is_none());
    }
}
