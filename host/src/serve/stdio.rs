//! The MCP face of the server, written by hand over rmcp: tools come from the loaded plugins,
//! calls go through the pipeline, and the client's roots widen the file sandbox.

pub(crate) mod roots;

use crate::pipeline::{CallError, Pipeline};
use crate::session::Session;
use futures::FutureExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
    SubscriptionFilter, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
pub use roots::TIMEOUT_ENV as ROOTS_TIMEOUT_ENV;
use std::sync::Arc;
use tokio::sync::broadcast;

/// One MCP connection's view: the shared pipeline and the session it acts in.
#[derive(Clone)]
pub struct McpServer {
    pipeline: Arc<Pipeline>,
    session: Session,
    /// The client's roots, which widen the sandbox (see [`roots`] for each revision's way).
    roots: Arc<roots::ClientRoots>,
    /// `--watch`: the tool list can change, and clients are told when it does.
    list_changes: bool,
    /// Told when a tool list has been answered (see [`McpServer::listed`]).
    listed: Arc<tokio::sync::Notify>,
    /// `--experimentalTasks`: this connection's long calls, as tasks.
    tasks: Arc<super::tasks::CallTasks>,
}

impl McpServer {
    /// Fails only when the roots-timeout test hook ([`ROOTS_TIMEOUT_ENV`]) is malformed.
    pub fn new(
        pipeline: Arc<Pipeline>,
        session: Session,
        list_changes: bool,
    ) -> Result<McpServer, String> {
        Ok(McpServer {
            pipeline,
            session,
            roots: Arc::new(roots::ClientRoots::new(roots::timeout_from_env()?)),
            list_changes,
            listed: Arc::default(),
            tasks: Arc::default(),
        })
    }

    /// Notified once the client's tool list has been built: the browser's background launch
    /// waits for it (briefly), so that Chromium starting on the same cores does not slow the
    /// `tools/list` every agent sends right after `initialize`.
    pub fn listed(&self) -> Arc<tokio::sync::Notify> {
        self.listed.clone()
    }

    /// Legacy sessions (protocol <= 2025-11-25) get `notifications/tools/list_changed` on
    /// their connection for as long as it lasts.
    fn forward_list_changes(&self, peer: rmcp::service::Peer<RoleServer>) {
        if !self.list_changes {
            return;
        }
        let mut changes = self.pipeline.tools.subscribe();
        tokio::spawn(async move {
            loop {
                match changes.recv().await {
                    Ok(()) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        if peer.notify_tool_list_changed().await.is_err() {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }
}

impl ServerHandler for McpServer {
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
        let capabilities =
            super::capabilities_for(self.pipeline.output_tokens(&self.session).is_some());
        let capabilities = match self.pipeline.tasks {
            true => super::tasks::declare(capabilities),
            false => capabilities,
        };
        ServerConfig::new(capabilities)
            .with_server_info(implementation)
            .with_instructions(super::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let listings = self
            .pipeline
            .tools
            .current()
            .listings(self.pipeline.via_cli);
        let structured = self.pipeline.structured_for(roots::is_modern(&context));
        let mut listings = self.pipeline.as_listed(listings, structured);
        if self.pipeline.output_tokens(&self.session).is_some() {
            listings = crate::pipeline::budget::with_cursor(listings);
        }
        self.listed.notify_one();
        Ok(ListToolsResult::with_all_items(listings))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.pipeline
            .tools
            .current()
            .get(name)
            .filter(|tool| tool.listed(self.pipeline.via_cli))
            .map(|tool| tool.listing.clone())
    }

    /// Under an output budget: the whole text of an answer it cut, for this session only.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        crate::pipeline::budget::read_whole(&self.session, &request.uri).map(Into::into)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if roots::is_modern(&context) {
            let ask = self
                .roots
                .before_modern_call(&self.session, &request, &context)
                .await;
            if let Some(ask) = ask {
                return Ok(CallToolResponse::InputRequired(ask));
            }
        } else {
            self.roots.wait_until_ready().await;
        }
        let structured = self.pipeline.structured_for(roots::is_modern(&context));
        if self.pipeline.tasks && super::tasks::CallTasks::declared(&context) {
            let (pipeline, session) = (self.pipeline.clone(), self.session.clone());
            let (tool, resource_links) = (
                request.name.to_string(),
                roots::reads_resource_links(&context),
            );
            // A task that waits for a person still hands the client its live view.
            let (peer, token) = (context.peer.clone(), context.meta.get_progress_token());
            let call = async move {
                let call = pipeline.call_as(
                    &session,
                    &tool,
                    request.arguments,
                    structured,
                    resource_links,
                );
                match super::progress::followed(&peer, token, &tool, call).await {
                    Ok(result) => Ok(result),
                    Err(error) => Err(ErrorData::invalid_params(error.to_string(), None)),
                }
            };
            return self
                .tasks
                .run(
                    &context,
                    super::tasks::stopper_of(self.session.clone()),
                    request.name.to_string(),
                    call,
                )
                .await;
        }
        let call_started = std::time::Instant::now();
        // A bug in the host must cost one call, not the connection: a panic becomes an error.
        let call = std::panic::AssertUnwindSafe(self.pipeline.call_as(
            &self.session,
            &request.name,
            request.arguments,
            structured,
            roots::reads_resource_links(&context),
        ))
        .catch_unwind();
        let call = super::progress::reported(&context, &request.name, call);
        // A cancelled call drops the pipeline future, and with it the session lock (and the
        // page's lane); the scripts it started in pages are stopped, so the page is free too.
        tokio::select! {
            result = call => match result {
                Ok(Ok(result)) => Ok(result.into()),
                Ok(Err(error @ CallError::UnknownTool(_))) => Err(ErrorData::invalid_params(error.to_string(), None)),
                Err(_) => Err(ErrorData::internal_error(
                    format!("devtools-mcp failed while running {}; the server keeps serving. Please report this.", request.name),
                    None,
                )),
            },
            _ = context.ct.cancelled() => {
                let (session, tool) = (self.session.clone(), request.name.clone());
                tokio::spawn(async move {
                    let stopped = session.terminate_scripts(call_started).await;
                    tracing::info!(%tool, stopped, "stopped the scripts of a call the client cancelled");
                });
                Err(ErrorData::internal_error("The call was cancelled.", None))
            }
        }
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        self.tasks.get(&request.task_id)
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.update(&request.task_id)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel(&request.task_id)
    }

    /// Protocol 2026-07-28 clients hear about changes on a `subscriptions/listen` stream.
    /// Accepted whatever the flags, as `listChanged` is declared whatever the flags: without
    /// `--watch` or `--config` the list never changes and the stream stays quiet.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        (requested.tools_list_changed == Some(true))
            .then(|| SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.pipeline.tools.subscribe();
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                change = changes.recv() => match change {
                    Ok(()) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        if context.sink().notify_tool_list_changed().await.is_err() {
                            return Ok(());
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return Ok(()),
                },
            }
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.forward_list_changes(context.peer.clone());
        let server = self.clone();
        tokio::spawn(async move {
            (server.roots)
                .fetch_after_initialized(&server.session, &context.peer)
                .await;
        });
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.roots.changed(&self.session, &context.peer).await;
    }
}
