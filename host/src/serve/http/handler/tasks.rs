//! Long calls of a tenant as tasks (`--experimentalTasks` over HTTP): the call runs in the
//! tenant's session under its quotas as any call does, and a client that declared the Tasks
//! extension on its MCP session polls it there. Tasks belong to the MCP session that made them
//! (one handler per session), and `tasks/*` requests are checked against its tenant like any
//! other; a request without an MCP session (the stateless protocol) has nowhere to poll, so it
//! is answered directly.

use super::{Scope, TenantServer};
use crate::serve::tasks::{CallTasks, Stopper};
use crate::serve::tenants::Tenant;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use std::sync::Arc;
use std::time::Instant;

/// A call that becomes a task if it runs long.
pub(super) struct AsTask {
    server: TenantServer,
    tenant: Arc<Tenant>,
}

impl TenantServer {
    /// `Some` when this call may become a task: the flag is on, the client declared the
    /// extension, and the request belongs to an MCP session.
    pub(super) fn as_task(
        &self,
        tenant: &Arc<Tenant>,
        stateless: bool,
        context: &RequestContext<RoleServer>,
    ) -> Option<AsTask> {
        (self.pipeline.tasks && !stateless && CallTasks::declared(context)).then(|| AsTask {
            server: self.clone(),
            tenant: tenant.clone(),
        })
    }
}

impl AsTask {
    pub(super) async fn run(
        self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let AsTask { server, tenant } = self;
        let tool = request.name.to_string();
        let stop = stopper(&server, &tenant.name);
        let tasks = server.tasks.clone();
        let call = {
            let (server, tenant, context, tool) = (
                server.clone(),
                tenant.clone(),
                context.clone(),
                tool.clone(),
            );
            async move {
                let started = Instant::now();
                let outcome = server.run(&tenant, request, &context, Scope::Task).await;
                let failed = !matches!(&outcome, Ok(result) if result.is_error != Some(true));
                let elapsed = started.elapsed();
                server
                    .metrics
                    .record_call(&tenant.name, &tool, failed, elapsed);
                tracing::info!(
                    tenant = %tenant.name,
                    tool = %tool,
                    failed,
                    elapsed_ms = elapsed.as_millis() as u64,
                    "tool call (task)"
                );
                outcome
            }
        };
        tasks.run(&context, stop, tool, call).await
    }
}

/// Stops the scripts of the tenant's session (looked up when the task is cancelled: the
/// session exists by then, as the call entered it).
fn stopper(server: &TenantServer, tenant: &str) -> Stopper {
    let (tenants, tenant) = (server.tenants.clone(), tenant.to_string());
    Arc::new(move |since| {
        let runtime = tenants.running(&tenant);
        Box::pin(async move {
            match runtime {
                Some(runtime) => runtime.session.terminate_scripts(since).await,
                None => 0,
            }
        })
    })
}
