//! What a handler declared, and the response assembled from it in the reference's order:
//! reconnect note, the tool's lines, `Page navigated to`, emulation, the open dialog, `## Pages`,
//! the snapshot, request and message details, the lists, `Error:`. One text item, then images.

mod fence;
pub mod output_schema;
mod sections;

use crate::browser::page::snapshot::CapturedTree;
use crate::session::SessionState;
use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

/// The intents a handler declared through the `response` interface.
#[derive(Default, Debug)]
pub struct ResponseDraft {
    pub lines: Vec<String>,
    pub include_pages: bool,
    pub snapshot: Option<SnapshotRequest>,
    pub find: Option<FindRequest>,
    pub images: Vec<(Vec<u8>, String)>,
    /// Set by the host when an action of this call navigated the page.
    pub navigated_to: Option<String>,
    pub console_messages: Option<ListRequest>,
    pub console_message: Option<u32>,
    pub network_requests: Option<ListRequest>,
    pub network_request: Option<NetworkRequestDetail>,
    /// Failures of declarations (e.g. a file that could not be written): the call fails.
    pub errors: Vec<String>,
    /// `get_tab_id`: the tab id, for `structuredContent.tabId`.
    pub tab_id: Option<String>,
    /// The session's pages before the handler ran (`--experimentalNewPages`): the answer lists
    /// the ones the call opened.
    pub pages_before: Option<Vec<u32>>,
    /// Lines host functions returned from what a page wrote (page tools): fenced wherever the
    /// handler put them, under `--experimentalFencePageContent`.
    pub page_content: std::collections::HashSet<String>,
    /// An argument the reference refuses while parsing it (a zod transform, e.g. `emulate`'s
    /// geolocation): the answer is this message alone, as 1.11.0 gives it.
    pub argument_error: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct SnapshotRequest {
    pub verbose: bool,
    pub file_path: Option<String>,
    /// Only the subtree under this uid.
    pub root_uid: Option<String>,
    /// At most this many levels below the root.
    pub depth: Option<u32>,
}

/// `## Found in page`: nodes of a fresh snapshot matching a query.
#[derive(Debug, Clone)]
pub struct FindRequest {
    pub query: String,
    pub regex: bool,
    pub page_size: Option<u32>,
    pub page_idx: Option<u32>,
}

#[derive(Debug, Clone, Default)]
pub struct ListRequest {
    pub page_size: Option<u32>,
    pub page_idx: Option<u32>,
    pub types: Option<Vec<String>>,
    pub include_preserved: bool,
    pub include_stack_traces: bool,
    /// Only this service worker's messages: none are collected, so the list is empty.
    pub service_worker_id: Option<String>,
}

#[derive(Debug, Clone)]
pub struct NetworkRequestDetail {
    pub reqid: Option<u32>,
    pub request_file: Option<String>,
    pub response_file: Option<String>,
}

/// The text lines and the structured twin being built.
#[derive(Default)]
pub(crate) struct Output {
    pub text: Vec<String>,
    pub data: Map<String, Value>,
    /// Whether `data` is sent at all; a section whose twin is costly (a snapshot of
    /// thousands of nodes) builds it only then.
    pub structured: bool,
}

/// Everything assembly needs besides the draft.
pub struct Assembly<'a> {
    pub draft: ResponseDraft,
    /// The page of a page-scoped tool: its emulation and dialog are shown, its snapshot taken.
    pub page: Option<u32>,
    pub reconnected: bool,
    pub error: Option<String>,
    pub structured: bool,
    /// `--slim`: plain lines, no sections.
    pub slim: bool,
    /// `--experimentalFencePageContent`: what the page wrote is fenced.
    pub fence: bool,
    /// The tree of the snapshot (or find) this answer shows, when it was fetched before with
    /// the session released (`--experimentalParallelPages`); otherwise it is fetched here.
    pub tree: Option<Result<CapturedTree, String>>,
    pub state: &'a mut SessionState,
}

impl Assembly<'_> {
    pub async fn render(self) -> CallToolResult {
        let Assembly {
            mut draft,
            page,
            reconnected,
            error,
            structured,
            slim,
            fence,
            mut tree,
            state,
        } = self;
        let fence = fence.then(fence::Fence::new);
        // Wraps what a section added after its header (`out.text[from..]`, header first).
        let fenced = |out: &mut Output, from: usize, name: &str| {
            if let Some(fence) = &fence
                && out.text.len() > from
            {
                // One line an item (a section may push several lines as one text); joined
                // back with newlines the text is the same.
                let tail: Vec<String> = out
                    .text
                    .drain(from..)
                    .flat_map(|text| text.split('\n').map(String::from).collect::<Vec<_>>())
                    .collect();
                out.text.extend(tail);
                fence.wrap(&mut out.text, from + 1);
                let sections = out
                    .data
                    .entry("untrustedContent")
                    .or_insert_with(|| json!({"marker": fence.marker(), "sections": []}));
                if let Some(list) = sections["sections"].as_array_mut() {
                    list.push(Value::from(name));
                }
            }
        };
        if let Some(message) = draft.argument_error.take() {
            return CallToolResult::error(vec![ContentBlock::text(message)]);
        }
        let error = error.or_else(|| draft.errors.first().cloned());
        let mut out = Output {
            structured,
            ..Output::default()
        };
        if slim {
            return slim_result(draft, error);
        }
        if reconnected {
            out.text.push("Note: the browser was restarted or reconnected since the last call. Page ids have changed. Call list_pages to see open pages.".into());
            out.data.insert("reconnected".into(), Value::Bool(true));
        }
        if !draft.lines.is_empty() {
            out.data
                .insert("message".into(), Value::from(draft.lines.join("\n")));
            let from = out.text.len();
            // One line an item, as host functions returned them.
            out.text.extend(
                draft
                    .lines
                    .drain(..)
                    .flat_map(|text| text.split('\n').map(String::from).collect::<Vec<_>>()),
            );
            if let Some(fence) = &fence
                && fence.wrap_page_content(&mut out.text, from, &draft.page_content)
            {
                let sections = out
                    .data
                    .entry("untrustedContent")
                    .or_insert_with(|| json!({"marker": fence.marker(), "sections": []}));
                if let Some(list) = sections["sections"].as_array_mut() {
                    list.push(Value::from("message"));
                }
            }
        }
        if let Some(tab_id) = &draft.tab_id {
            out.data
                .insert("tabId".into(), Value::from(tab_id.as_str()));
        }
        if let Some(url) = &draft.navigated_to {
            out.text.push(format!("Page navigated to {url}."));
            out.data
                .insert("navigatedToUrl".into(), Value::from(url.as_str()));
        }
        if let Some(id) = page {
            sections::emulation(&mut out, state, id);
            let from = out.text.len();
            sections::dialog(&mut out, state, id);
            fenced(&mut out, from, "dialog");
        }
        if draft.include_pages {
            sections::pages(&mut out, state).await;
        }
        if let Some(before) = &draft.pages_before {
            sections::new_pages(&mut out, state, before).await;
        }
        let target = page.or_else(|| state.selected_id().ok());
        // A section that cannot be rendered fails the whole answer, which is then its message
        // alone: the reference 1.11.0 throws while assembling, outside the tool's own errors.
        let mut section_error: Option<String> = None;
        let mut failure = |result: Result<(), String>| {
            if let Err(message) = result {
                section_error.get_or_insert(message);
            }
        };
        if let Some(request) = &draft.snapshot {
            let from = out.text.len();
            failure(sections::snapshot(&mut out, state, target, request, tree.take()).await);
            fenced(&mut out, from, "snapshot");
        }
        if let Some(request) = &draft.find {
            let from = out.text.len();
            failure(sections::find(&mut out, state, target, request, tree.take()).await);
            fenced(&mut out, from, "find");
        }
        if let Some(detail) = &draft.network_request {
            let from = out.text.len();
            failure(sections::network_request(&mut out, state, target, detail).await);
            fenced(&mut out, from, "networkRequest");
        }
        if let Some(msgid) = draft.console_message {
            let from = out.text.len();
            failure(sections::console_message(&mut out, state, target, msgid));
            fenced(&mut out, from, "consoleMessage");
        }
        if let Some(request) = &draft.network_requests {
            let from = out.text.len();
            failure(sections::network_requests(&mut out, state, target, request));
            fenced(&mut out, from, "networkRequests");
        }
        if let Some(request) = &draft.console_messages {
            let from = out.text.len();
            failure(sections::console_messages(&mut out, state, target, request));
            fenced(&mut out, from, "consoleMessages");
        }
        if let Some(message) = section_error {
            return CallToolResult::error(vec![ContentBlock::text(message)]);
        }
        if let Some(message) = &error {
            out.text.push(format!("Error: {message}"));
            out.data
                .insert("errorMessage".into(), Value::from(message.as_str()));
        }
        let mut content = vec![ContentBlock::text(out.text.join("\n"))];
        for (bytes, mime_type) in draft.images {
            let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
            content.push(ContentBlock::image(encoded, mime_type));
        }
        let mut result = if error.is_some() {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        if structured {
            result.structured_content = Some(Value::Object(out.data));
        }
        result
    }
}

/// The slim response: the tool's lines only; its structured content is the text item itself.
fn slim_result(draft: ResponseDraft, error: Option<String>) -> CallToolResult {
    let mut lines = draft.lines;
    if let Some(message) = &error {
        lines.push(message.clone());
    }
    let text = lines.join("\n");
    let mut result = if error.is_some() {
        CallToolResult::error(vec![ContentBlock::text(text.clone())])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text.clone())])
    };
    result.structured_content = Some(serde_json::json!({ "type": "text", "text": text }));
    result
}
