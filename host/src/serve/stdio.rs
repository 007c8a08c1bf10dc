//! The MCP face of the server, written by hand over rmcp: tools come from the loaded plugins,
//! calls go through the pipeline, and the client's roots widen the file sandbox.

use crate::pipeline::{CallError, Pipeline};
use crate::session::Session;
use futures::FutureExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// How long the first call waits for the client's roots, as the reference does.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(5);

/// One MCP connection's view: the shared pipeline and the session it acts in.
#[derive(Clone)]
pub struct McpServer {
    pipeline: Arc<Pipeline>,
    session: Session,
    /// Becomes true once the client's roots (if it offers any) are in the sandbox, so that the
    /// first call's file parameters are checked against them.
    roots_ready: Arc<watch::Sender<bool>>,
    /// `--watch`: the tool list can change, and clients are told when it does.
    list_changes: bool,
    /// Told when a tool list has been answered (see [`McpServer::listed`]).
    listed: Arc<tokio::sync::Notify>,
}

impl McpServer {
    pub fn new(pipeline: Arc<Pipeline>, session: Session, list_changes: bool) -> McpServer {
        McpServer {
            pipeline,
            session,
            roots_ready: Arc::new(watch::channel(false).0),
            list_changes,
            listed: Arc::default(),
        }
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

    async fn wait_for_roots(&self) {
        let mut ready = self.roots_ready.subscribe();
        let _waited = tokio::time::timeout(ROOTS_TIMEOUT, ready.wait_for(|ready| *ready)).await;
    }

    /// Adds the client's `file://` roots to the sandbox. Roots are deprecated by SEP-2577 but
    /// are what today's clients send, and the reference honours them.
    #[allow(deprecated)]
    async fn refresh_roots(&self, peer: &rmcp::service::Peer<RoleServer>) {
        let supports_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !supports_roots {
            return;
        }
        let listed = tokio::time::timeout(ROOTS_TIMEOUT, peer.list_roots()).await;
        let roots = match listed {
            Ok(Ok(result)) => result.roots,
            Ok(Err(error)) => {
                tracing::warn!(%error, "the client did not list its roots");
                return;
            }
            Err(_) => {
                tracing::warn!("the client did not answer roots/list within 5 s");
                return;
            }
        };
        let mut state = self.session.lock().await;
        for root in roots {
            let Some(path) = root.uri.strip_prefix("file://") else {
                continue;
            };
            let path = percent_decode(path);
            if let Err(error) = state.sandbox.add_root(std::path::Path::new(&path)) {
                tracing::warn!(root = %root.uri, %error, "ignoring a client root");
            }
        }
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(hex) = text.get(index + 1..index + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            decoded.push(byte);
            index += 3;
            continue;
        }
        decoded.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&decoded).into_owned()
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
        ServerConfig::new(super::capabilities()).with_server_info(implementation)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let listings = self
            .pipeline
            .tools
            .current()
            .listings(self.pipeline.via_cli);
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

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.wait_for_roots().await;
        // A bug in the host must cost one call, not the connection: a panic becomes an error.
        let call = std::panic::AssertUnwindSafe(self.pipeline.call(
            &self.session,
            &request.name,
            request.arguments,
        ))
        .catch_unwind();
        // A cancelled call drops the pipeline future, and with it the session lock.
        tokio::select! {
            result = call => match result {
                Ok(Ok(result)) => Ok(result.into()),
                Ok(Err(error @ CallError::UnknownTool(_))) => Err(ErrorData::invalid_params(error.to_string(), None)),
                Err(_) => Err(ErrorData::internal_error(
                    format!("devtools-mcp failed while running {}; the server keeps serving. Please report this.", request.name),
                    None,
                )),
            },
            _ = context.ct.cancelled() => Err(ErrorData::internal_error("The call was cancelled.", None)),
        }
    }

    /// Protocol 2026-07-28 clients hear about changes on a `subscriptions/listen` stream.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        (self.list_changes && requested.tools_list_changed == Some(true))
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
            server.refresh_roots(&context.peer).await;
            server.roots_ready.send_replace(true);
        });
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.refresh_roots(&context.peer).await;
    }
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn root_uris_are_percent_decoded() {
        assert_eq!(percent_decode("/tmp/my%20dir"), "/tmp/my dir");
        assert_eq!(percent_decode("/tmp/100%"), "/tmp/100%");
    }
}
