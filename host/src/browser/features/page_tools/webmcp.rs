//! WebMCP tools (`document.modelContext.registerTool`), read and run through Chrome's `WebMCP`
//! CDP domain. `WebMCP.enable` reports every tool registered so far as `WebMCP.toolsAdded`,
//! before its answer, so each call enables the domain and collects what it reports: nothing
//! is kept between calls, and a page cannot leave stale tools behind.

use super::PageTools;
use crate::browser::cdp::{cdp, send, settle_events, timeouts};
use chromiumoxide::cdp::CustomEvent;
use chromiumoxide::types::{MethodId, MethodType};
use futures::{FutureExt, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;

/// How long a WebMCP tool may run.
const EXECUTE_TIMEOUT: Duration = Duration::from_secs(60);

/// One tool as `WebMCP.toolsAdded` reports it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebMcpTool {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub input_schema: Option<Value>,
    #[serde(default)]
    pub annotations: Option<Value>,
    pub frame_id: String,
}

impl WebMcpTool {
    /// Tools annotated `debugging: true` belong to `list_3p_developer_tools`.
    pub fn is_debugging(&self) -> bool {
        self.annotations
            .as_ref()
            .and_then(|annotations| annotations.get("debugging"))
            .and_then(Value::as_bool)
            == Some(true)
    }
}

#[derive(Debug, Clone, Deserialize)]
struct ToolsAdded {
    tools: Vec<WebMcpTool>,
}

impl MethodType for ToolsAdded {
    fn method_id() -> MethodId {
        "WebMCP.toolsAdded".into()
    }
}
impl CustomEvent for ToolsAdded {}

/// The outcome of one invocation (`WebMCP.toolResponded`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResponded {
    invocation_id: String,
    pub status: String,
    #[serde(default)]
    pub output: Option<Value>,
    #[serde(default)]
    pub error_text: Option<String>,
    #[serde(default)]
    pub exception: Option<Value>,
}

impl MethodType for ToolResponded {
    fn method_id() -> MethodId {
        "WebMCP.toolResponded".into()
    }
}
impl CustomEvent for ToolResponded {}

impl ToolResponded {
    /// The reference's error text: the exception's description, else its value, else
    /// `errorText`.
    pub fn error(&self) -> Option<Value> {
        let exception = self.exception.as_ref();
        exception
            .and_then(|exception| exception.get("description").cloned())
            .or_else(|| exception.and_then(|exception| exception.get("value").cloned()))
            .or_else(|| self.error_text.clone().map(Value::String))
    }
}

impl PageTools<'_> {
    /// Every WebMCP tool the page's frames registered, in the order Chrome reports them.
    pub async fn webmcp_tools(&self) -> Result<Vec<WebMcpTool>, String> {
        let mut added = self
            .page
            .cdp()
            .event_listener::<ToolsAdded>()
            .await
            .map_err(|error| error.to_string())?;
        send(
            self.page.cdp(),
            cdp("WebMCP.enable", json!({})),
            timeouts::COMMAND,
        )
        .await
        .map_err(|error| format!("WebMCP is not available in this browser: {error}"))?;
        // The events came before the answer; once settled they wait in the listener's queue.
        settle_events(self.page.cdp())
            .await
            .map_err(|error| error.to_string())?;
        let mut tools = Vec::new();
        while let Some(Some(event)) = added.next().now_or_never() {
            tools.extend(event.tools.iter().cloned());
        }
        Ok(tools)
    }

    /// Runs a WebMCP tool with `input` and waits for its answer.
    pub async fn invoke_webmcp_tool(
        &self,
        tool: &WebMcpTool,
        input: &Value,
    ) -> Result<ToolResponded, String> {
        let mut responded = self
            .page
            .cdp()
            .event_listener::<ToolResponded>()
            .await
            .map_err(|error| error.to_string())?;
        let params = json!({ "frameId": tool.frame_id, "toolName": tool.name, "input": input });
        let invoked = send(
            self.page.cdp(),
            cdp("WebMCP.invokeTool", params),
            timeouts::COMMAND,
        )
        .await
        .map_err(|error| error.to_string())?;
        let invocation = invoked["invocationId"]
            .as_str()
            .ok_or("The browser did not return an invocation id.")?
            .to_string();
        let answer = async {
            while let Some(event) = responded.next().await {
                if event.invocation_id == invocation {
                    return Some((*event).clone());
                }
            }
            None
        };
        match tokio::time::timeout(EXECUTE_TIMEOUT, answer).await {
            Ok(Some(event)) => Ok(event),
            Ok(None) => Err("The page closed before the tool answered.".into()),
            Err(_) => {
                let cancel = json!({ "invocationId": invocation });
                let _ignored = send(
                    self.page.cdp(),
                    cdp("WebMCP.cancelInvocation", cancel),
                    timeouts::COMMAND,
                )
                .await;
                Err(format!(
                    "The tool {} did not answer within {} s.",
                    tool.name,
                    EXECUTE_TIMEOUT.as_secs()
                ))
            }
        }
    }
}
