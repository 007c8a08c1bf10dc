//! One tool call, in the reference's order: gating -> argument check (zod's messages) -> schema -> lock ->
//! lazy browser -> response -> file sandbox -> page routing -> dialog check -> handler ->
//! response assembly -> telemetry -> unlock (the lock guard is dropped on every path).

pub mod arguments;
pub mod budget;
pub mod gate;
mod lanes;
mod routing;
mod structured_result;
pub mod tools;

pub use tools::{CurrentToolSet, ToolEntry, ToolFolders, ToolSet};

use crate::policy::capability::Denied;
use crate::response::Assembly;
use crate::runtime::limits::classify;
use crate::runtime::{CallState, Runtime};
use crate::session::Session;
use crate::telemetry::{TelemetrySink, ToolInvocation};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};
use std::time::Instant;

/// A call that is not a tool result at all (a protocol error for the client).
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("Tool {0} not found")]
    UnknownTool(String),
}

/// Everything a call needs besides the session: the tools, the runtime and the output options.
pub struct Pipeline {
    pub tools: CurrentToolSet,
    pub runtime: Runtime,
    pub via_cli: bool,
    pub structured_content: bool,
    /// `--slim`: responses are the tool's lines only.
    pub slim: bool,
    /// `--experimentalNewPages`: answers list the pages a call opened.
    pub new_pages: bool,
    /// `--experimentalFencePageContent`: what pages wrote is fenced in answers.
    pub fence: bool,
    /// `--experimentalParallelPages`: a lock per page; waits release the session.
    pub parallel_pages: bool,
    /// `--experimentalTasks`: a client declaring the Tasks extension gets long calls as tasks.
    pub tasks: bool,
    /// The server's flags, which a session's overrides (a tenant's flags) are laid over.
    pub flags: Map<String, Value>,
    pub telemetry: Option<TelemetrySink>,
    /// `--maxOutputTokens`: no answer's text is longer (a session's own budget may be lower).
    pub output_tokens: Option<u32>,
}

impl Pipeline {
    pub async fn call(
        &self,
        session: &Session,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<CallToolResult, CallError> {
        self.call_as(session, name, arguments, self.structured_content, false)
            .await
    }

    /// The output budget of `session`'s answers: the lower of the server's and its own.
    pub fn output_tokens(&self, session: &Session) -> Option<u32> {
        match (self.output_tokens, session.output_tokens()) {
            (Some(server), Some(own)) => Some(server.min(own)),
            (server, own) => server.or(own),
        }
    }

    /// Whether answers to this client carry `structuredContent` (and tools list their output
    /// schema): a 2026-07-28 client always, an older one with `--experimentalStructuredContent`
    /// (without it the list stays 1.11.0's, which declares no output schema).
    pub fn structured_for(&self, modern_client: bool) -> bool {
        modern_client || self.structured_content
    }

    /// `tools` as a client sees them: with their output schema when it gets structured content.
    pub fn as_listed(
        &self,
        tools: Vec<rmcp::model::Tool>,
        structured: bool,
    ) -> Vec<rmcp::model::Tool> {
        match structured {
            true => crate::response::output_schema::declared(tools, self.slim),
            false => crate::response::output_schema::undeclared(tools),
        }
    }

    /// A call whose answer carries `structuredContent` when `structured` (a 2026-07-28 client
    /// always gets it; an older one with `--experimentalStructuredContent`); under an output
    /// budget, a cut answer links its whole text when the client reads `resource_links`.
    pub async fn call_as(
        &self,
        session: &Session,
        name: &str,
        arguments: Option<Map<String, Value>>,
        structured: bool,
        resource_links: bool,
    ) -> Result<CallToolResult, CallError> {
        let started = Instant::now();
        // This call keeps the set it started with, whatever a reload does meanwhile.
        let mut tools = self.tools.current();
        if tools.get(name).is_none() {
            // It may be a plugin still compiling since start-up: wait for it, bounded.
            self.tools.settled(tools::folders::STARTUP_BUDGET).await;
            tools = self.tools.current();
        }
        let tool = tools
            .get(name)
            .ok_or_else(|| CallError::UnknownTool(name.to_string()))?;
        let flags = session
            .flag_overrides()
            .map(|overrides| self.flags_with(overrides));
        let disabled = self.disabled(tool, flags.as_ref());
        if disabled.is_some() && !self.via_cli {
            return Err(CallError::UnknownTool(name.to_string()));
        }
        let arguments = arguments.unwrap_or_default();
        let budget = self
            .output_tokens(session)
            .map(|tokens| budget::AnswerBudget {
                tokens,
                resource_links,
                structured,
                slim: self.slim,
            });
        let result = match budget {
            Some(budget) if disabled.is_none() && arguments.contains_key(budget::CURSOR) => {
                budget::rest(session, name, &arguments, budget).await
            }
            _ => {
                let mut result = self
                    .run(session, tool, disabled, arguments.clone(), structured)
                    .await;
                crate::response::echoes::shorten_in(
                    &mut result,
                    &crate::response::echoes::long_strings(&arguments),
                );
                match budget {
                    Some(budget) => {
                        budget::held_to(session, name, &arguments, result, budget).await
                    }
                    None => result,
                }
            }
        };
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

    /// Why the flags disable a tool: the server's (decided at load), then `flags` (the server's
    /// with a session's laid over them, from `flags_with`), which can only disable more.
    pub fn disabled(&self, tool: &ToolEntry, flags: Option<&Map<String, Value>>) -> Option<String> {
        match flags {
            None => tool.disabled.clone(),
            Some(flags) => gate::narrowed(tool.disabled.as_deref(), tool.definition(), flags),
        }
    }

    /// The server's flags with `overrides` laid over them.
    pub fn flags_with(&self, overrides: &Map<String, Value>) -> Map<String, Value> {
        let mut flags = self.flags.clone();
        flags.extend(
            overrides
                .iter()
                .map(|(key, value)| (key.clone(), value.clone())),
        );
        flags
    }

    /// A refused path or an unknown page is the call's error, rendered as a handler's error
    /// is (`Error: ...`), as the reference 1.11.0 does.
    fn early_error<'a>(
        &self,
        state: &'a mut crate::session::SessionState,
        reconnected: bool,
        message: String,
        structured: bool,
    ) -> Assembly<'a> {
        Assembly {
            draft: Default::default(),
            page: None,
            reconnected,
            error: Some(message),
            structured,
            slim: self.slim,
            fence: self.fence,
            tree: None,
            state,
        }
    }

    async fn run(
        &self,
        session: &Session,
        tool: &ToolEntry,
        disabled: Option<String>,
        mut arguments: Map<String, Value>,
        structured: bool,
    ) -> CallToolResult {
        let name = tool.definition().name.as_str();
        if let Some(message) = &disabled {
            return plain_error(message);
        }
        if let Some(message) = arguments::input_validation_message(name, &arguments, &tool.schema) {
            return plain_error(&message);
        }
        // Schemas with regular expressions (or large ones) validate off the async workers.
        let invalid = if tool.costly_validation {
            let (validator, checked, tool_name) =
                (tool.validator.clone(), arguments.clone(), name.to_string());
            crate::schema::validate_off_runtime(name, move || {
                arguments::validation_message(&tool_name, &validator, &checked)
            })
            .await
        } else {
            arguments::validation_message(name, &tool.validator, &arguments)
        };
        if let Some(message) = invalid {
            return plain_error(&message);
        }

        // With parallel pages a page-scoped call first takes its page's lane: calls on the same
        // page queue there, calls on other pages only share the session's lock, which waits
        // release (`Call::unlocked`).
        let lane = match self.parallel_pages && tool.definition().page_scoped {
            true => lanes::page_lane(session, tool, &arguments).await,
            false => None,
        };
        let mut state = session.lock().await;
        if let Err(error) = state.ensure_browser().await {
            return plain_error(&error.to_string());
        }
        let reconnected = state.take_reconnected();

        for parameter in &tool.definition().file_params {
            if let Some(value) = arguments.get_mut(parameter)
                && let Err(error) = resolve_paths(&state.sandbox, value)
            {
                return self
                    .early_error(&mut state, reconnected, error, structured)
                    .render()
                    .await;
            }
        }

        let page = match routing::target_page(tool, &mut arguments, &state) {
            Ok(page) => page,
            Err(message) => {
                return self
                    .early_error(&mut state, reconnected, message, structured)
                    .render()
                    .await;
            }
        };
        let dialog_error = match page {
            Some(id) if tool.definition().blocked_by_dialog => state
                .page(id)
                .and_then(|page| page.ensure_no_dialog())
                .err(),
            _ => None,
        };

        // Before the output limit counts it: a long echo is shortened (`response::echoes`).
        let echoes = crate::response::echoes::long_strings(&arguments);
        let params_json = Value::Object(arguments).to_string();
        let limits = match session.limits() {
            Some(cap) => tool.loaded.limits.min(cap),
            None => tool.loaded.limits,
        };
        // The pages before the handler, to tell which the call opened.
        let pages_before = self.new_pages.then(|| state.page_ids());
        state.begin_downloads_call();
        let mut call_state = CallState::new(Some(state), tool.loaded.grants.clone(), limits);
        call_state.source_map = tool.loaded.source_map.clone();
        if self.parallel_pages {
            call_state.allow_parallel_pages();
        }
        if self.fence {
            call_state.fence_page_content();
        }
        let code = match dialog_error {
            Some(error) => Err(error),
            // A built-in tool's code is linked on its first call.
            None => tool.loaded.code.linked(),
        };
        let (mut call_state, handler_error) = match code {
            Err(error) => (call_state, Some(error)),
            Ok(pre) => {
                let handler_started = Instant::now();
                let (mut call_state, outcome) = self
                    .runtime
                    .handle(pre, call_state, &params_json, page)
                    .await;
                if let Some(output) = call_state.wasi_output() {
                    tracing::info!(tool = name, %output, "plugin output");
                }
                let error = match outcome {
                    Ok(Ok(())) => None,
                    Ok(Err(message)) => Some(message),
                    Err(trap) => {
                        // Stopped by its wall clock while the page ran its script: the script
                        // would spin on in the renderer.
                        if call_state.wall_clock_hit
                            && let Some(session) = call_state.session()
                        {
                            session.terminate_scripts(handler_started).await;
                        }
                        let (message, stopped) = trap_message(tool, &call_state, &trap);
                        if stopped {
                            // What a runaway plugin declared is not worth sending (it may be
                            // the very output that hit the limit). What pages wrote stays
                            // recorded: the reason may print it (a refused landing's URL).
                            let written = std::mem::take(&mut call_state.response.page_written);
                            call_state.response = Default::default();
                            call_state.response.page_written = written;
                        }
                        Some(message)
                    }
                };
                (call_state, error)
            }
        };
        // A call stopped while it had released the session (a wait) takes it again.
        let state = match call_state.take_session() {
            Some(state) => state,
            None => session.lock().await,
        };
        let mut draft = std::mem::take(&mut call_state.response);
        draft.pages_before = pages_before;
        // A success carries a structured result exactly when the tool declared its schema.
        let handler_error = match handler_error {
            Some(error) => Some(error),
            None => structured_result::check(tool, &mut draft).await,
        };
        // Only on the page whose lane the call holds: no other call acts on it meanwhile.
        let (mut state, tree) = match (&lane, page) {
            (Some((laned, _)), Some(page)) if *laned == page => {
                lanes::prefetch_tree(session, state, &draft, page).await
            }
            _ => (state, None),
        };
        let mut answer = Assembly {
            draft,
            page,
            reconnected,
            error: handler_error,
            structured,
            slim: self.slim,
            fence: self.fence,
            tree,
            state: &mut state,
        }
        .render()
        .await;
        crate::response::echoes::shorten_in(&mut answer, &echoes);
        // Where each page is now, for a relaunch after the browser dies.
        state.remember_pages().await;
        within_output_budget(tool, answer, limits.output_bytes)
    }
}

/// The whole answer counts against the tool's output budget, what the host rendered for it
/// (snapshots, listings, details) as much as what it declared: a plugin limited to 1 MiB
/// cannot send a 4 MB snapshot by asking the host for it.
fn within_output_budget(tool: &ToolEntry, answer: CallToolResult, budget: usize) -> CallToolResult {
    let bytes = answer_bytes(&answer);
    if bytes <= budget {
        return answer;
    }
    let exceeded = crate::runtime::limits::LimitExceeded::OutputBytes { limit: budget };
    plain_error(&format!(
        "The tool's plugin ({}) was stopped: its answer, with the sections the server rendered for it, has {bytes} bytes: {exceeded}. The server is still running.",
        tool.loaded.source.display()
    ))
}

/// Bytes of an answer: its texts, its images as decoded bytes, its structured content.
fn answer_bytes(answer: &CallToolResult) -> usize {
    let content: usize = answer
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => text.text.len(),
            ContentBlock::Image(image) => image.data.len() / 4 * 3,
            other => serde_json::to_string(other).map_or(0, |json| json.len()),
        })
        .sum();
    let structured = answer
        .structured_content
        .as_ref()
        .map_or(0, |value| value.to_string().len());
    content.saturating_add(structured)
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

/// A trap is the plugin's fault: say which plugin, which limit or grant stopped it (if one
/// did), and that the server is fine. `true` when a limit or a missing grant stopped it.
fn trap_message(tool: &ToolEntry, state: &CallState, trap: &wasmtime::Error) -> (String, bool) {
    let source = tool.loaded.source.display();
    let stopped = classify(
        trap,
        &state.limits,
        state.limiter.refused.as_ref(),
        state.wall_clock_hit,
    )
    .map(|exceeded| exceeded.to_string())
    .or_else(|| trap.downcast_ref::<Denied>().map(ToString::to_string));
    match stopped {
        Some(reason) => (
            format!(
                "The tool's plugin ({source}) was stopped: {reason}. The server is still running."
            ),
            true,
        ),
        None => {
            let root = trap.root_cause().to_string();
            let mut message = format!(
                "The tool's plugin ({source}) crashed: {root}. The server is still running."
            );
            // The language's own account (traceback, stack, panic), plugin-written text: the
            // answer's error is fenced where it carries page text, as the tool's errors are.
            if let Some(report) = state.crash_report() {
                message.push_str("\nIts code reported, as it crashed:\n");
                message.push_str(&report);
            }
            (message, false)
        }
    }
}

/// An error before the handler runs: the message alone, as the reference's outer catch does.
fn plain_error(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}
