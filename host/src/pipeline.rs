//! One tool call, in the reference's order: gating -> unknown arguments -> schema -> lock ->
//! lazy browser -> response -> file sandbox -> page routing -> dialog check -> handler ->
//! response assembly -> telemetry -> unlock (the lock guard is dropped on every path).

pub mod arguments;
pub mod gate;
mod routing;
mod toolset;

pub use toolset::{ToolEntry, ToolSet};

use crate::plugin::{CallState, Runtime};
use crate::response::Assembly;
use crate::session::Session;
use crate::telemetry::{TelemetrySink, ToolInvocation};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Instant;

/// Linear memory a tool instance may use.
const TOOL_MEMORY_LIMIT: usize = 64 << 20;

/// A call that is not a tool result at all (a protocol error for the client).
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("Tool {0} not found")]
    UnknownTool(String),
}

/// Everything a call needs besides the session: the tools, the runtime and the output options.
pub struct Pipeline {
    pub tools: Arc<ToolSet>,
    pub runtime: Runtime,
    pub via_cli: bool,
    pub structured_content: bool,
    /// `--slim`: responses are the tool's lines only.
    pub slim: bool,
    pub telemetry: Option<TelemetrySink>,
}

impl Pipeline {
    pub async fn call(
        &self,
        session: &Session,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<CallToolResult, CallError> {
        self.call_limited(session, name, arguments, TOOL_MEMORY_LIMIT)
            .await
    }

    /// [`Pipeline::call`] with the tool's linear memory capped at `memory_limit` bytes (a
    /// tenant's quota).
    pub async fn call_limited(
        &self,
        session: &Session,
        name: &str,
        arguments: Option<Map<String, Value>>,
        memory_limit: usize,
    ) -> Result<CallToolResult, CallError> {
        let started = Instant::now();
        let tool = self
            .tools
            .get(name)
            .filter(|tool| tool.listed(self.via_cli))
            .ok_or_else(|| CallError::UnknownTool(name.to_string()))?;
        let arguments = arguments.unwrap_or_default();
        let result = self
            .run(session, tool, arguments.clone(), memory_limit)
            .await;
        if let Some(sink) = &self.telemetry {
            let success = result.is_error != Some(true);
            sink.record(&ToolInvocation::new(
                name,
                success,
                started.elapsed(),
                &arguments,
                &Value::Object(tool.schema.clone()),
            ));
        }
        Ok(result)
    }

    async fn run(
        &self,
        session: &Session,
        tool: &ToolEntry,
        mut arguments: Map<String, Value>,
        memory_limit: usize,
    ) -> CallToolResult {
        let name = tool.definition().name.as_str();
        if let Some(message) = &tool.disabled {
            return plain_error(message);
        }
        if let Some(message) = arguments::unknown_arguments_message(name, &arguments, &tool.schema)
        {
            return plain_error(&message);
        }
        if let Some(message) = arguments::validation_message(name, &tool.validator, &arguments) {
            return plain_error(&message);
        }

        let mut state = session.lock().await;
        if let Err(error) = state.ensure_browser().await {
            return plain_error(&error.to_string());
        }
        let reconnected = state.take_reconnected();

        for parameter in &tool.definition().file_params {
            if let Some(value) = arguments.get_mut(parameter)
                && let Err(error) = resolve_paths(&state.sandbox, value)
            {
                return plain_error(&error);
            }
        }

        let page = match routing::target_page(tool, &mut arguments, &state) {
            Ok(page) => page,
            Err(message) => return plain_error(&message),
        };
        let dialog_error = match page {
            Some(id) if tool.definition().blocked_by_dialog => state
                .page(id)
                .and_then(|page| page.ensure_no_dialog())
                .err(),
            _ => None,
        };

        let params_json = Value::Object(arguments).to_string();
        let (mut call_state, handler_error) = match dialog_error {
            Some(error) => (CallState::new(state, memory_limit), Some(error)),
            None => {
                let call_state = CallState::new(state, memory_limit);
                let (call_state, outcome) = self
                    .runtime
                    .handle(&tool.loaded.component, call_state, &params_json, page)
                    .await;
                let error = match outcome {
                    Ok(Ok(())) => None,
                    Ok(Err(message)) => Some(message),
                    Err(trap) => Some(trap_message(&tool.loaded.source, &trap)),
                };
                (call_state, error)
            }
        };
        let Some(mut state) = call_state.session.take() else {
            return plain_error("The session was lost during the call.");
        };
        Assembly {
            draft: std::mem::take(&mut call_state.response),
            page,
            reconnected,
            error: handler_error,
            structured: self.structured_content,
            slim: self.slim,
            state: &mut state,
        }
        .render()
        .await
    }
}

/// Checks a file parameter (a path, or a list of paths) against the sandbox and rewrites it to
/// the canonical paths, as the reference's `verifyFilesSchema` does.
fn resolve_paths(sandbox: &crate::sandbox::Sandbox, value: &mut Value) -> Result<(), String> {
    match value {
        Value::String(path) => {
            *path = sandbox.resolve(path).map_err(|error| error.to_string())?;
            Ok(())
        }
        Value::Array(items) => items
            .iter_mut()
            .try_for_each(|item| resolve_paths(sandbox, item)),
        _ => Ok(()),
    }
}

/// A trap is the plugin's fault: say which plugin, and that the server is fine.
fn trap_message(source: &std::path::Path, trap: &wasmtime::Error) -> String {
    let root = trap.root_cause().to_string();
    format!(
        "The tool's plugin ({}) crashed: {root}. The server is still running.",
        source.display()
    )
}

/// An error before the handler runs: the message alone, as the reference's outer catch does.
fn plain_error(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}
