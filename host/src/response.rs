//! What a handler declared, and the response assembled from it in the reference's order:
//! reconnect note, the tool's lines, `Page navigated to`, emulation, the open dialog, `## Pages`,
//! the snapshot, request and message details, the lists, `Error:`. One text item, then images.

pub mod budget;
pub mod echoes;
mod fence;
pub mod output_schema;
mod parts;
mod provenance;
mod sections;

pub use provenance::PageWritten;

use crate::browser::page::snapshot::CapturedTree;
use crate::session::SessionState;
use base64::Engine as _;
use parts::{Fencing, Part};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

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
    /// What pages wrote that host functions handed the tool (by content): each line of the
    /// answer carrying any of it is fenced, under `--experimentalFencePageContent`.
    pub page_written: PageWritten,
    /// Contract 0.3.1: the output schema a plugin declared in `definition` (JSON text).
    pub output_schema: Option<String>,
    /// Contract 0.3.1: the structured result a plugin's handler set (JSON text), unchecked.
    pub structured_result: Option<String>,
    /// That result once validated against the tool's output schema: `structuredContent.result`.
    pub result: Option<Value>,
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
        let fencing = Fencing {
            fence: fence.then(fence::Fence::new),
            written: std::mem::take(&mut draft.page_written),
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
            return slim_result(draft, error, &fencing);
        }
        if reconnected {
            out.text.push("Note: the browser was restarted or reconnected since the last call. Page ids have changed. Call list_pages to see open pages.".into());
            fencing.finish(&mut out, 0, Part::Reconnected);
            out.data.insert("reconnected".into(), Value::Bool(true));
        }
        if let Some(note) = state.take_recovery_note() {
            let from = out.text.len();
            out.text.push(note.clone());
            fencing.finish(&mut out, from, Part::Recovered);
            out.data.insert("recovered".into(), Value::from(note));
        }
        if !draft.lines.is_empty() {
            out.data
                .insert("message".into(), Value::from(draft.lines.join("\n")));
            let from = out.text.len();
            out.text.append(&mut draft.lines);
            fencing.finish(&mut out, from, Part::Message);
        }
        if let Some(tab_id) = &draft.tab_id {
            out.data
                .insert("tabId".into(), Value::from(tab_id.as_str()));
        }
        // A plugin's own structured result sits under one key beside the host's fields, so
        // neither can shadow the other (see `output_schema::declared`).
        if let Some(result) = draft.result.take().filter(|_| error.is_none()) {
            out.data.insert("result".into(), result);
        }
        if let Some(url) = &draft.navigated_to {
            // Where the page went may hold what the agent sent (a form's value in the query).
            let url = echoes::shortened(url);
            let from = out.text.len();
            out.text.push(format!("Page navigated to {url}."));
            fencing.finish(&mut out, from, Part::NavigatedTo);
            out.data
                .insert("navigatedToUrl".into(), Value::from(url.as_ref()));
        }
        if let Some(id) = page {
            let from = out.text.len();
            sections::emulation(&mut out, state, id);
            fencing.finish(&mut out, from, Part::Emulation);
            let from = out.text.len();
            sections::dialog(&mut out, state, id);
            fencing.finish(&mut out, from, Part::Dialog);
        }
        if draft.include_pages {
            sections::pages(&mut out, state, &fencing).await;
        }
        if let Some(before) = &draft.pages_before {
            let from = out.text.len();
            sections::new_pages(&mut out, state, before).await;
            fencing.finish(&mut out, from, Part::NewPages);
        }
        if let Some(downloads) = state.downloads_to_report().await {
            let from = out.text.len();
            sections::downloads(&mut out, &downloads);
            fencing.finish(&mut out, from, Part::Downloads);
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
            fencing.finish(&mut out, from, Part::Snapshot);
        }
        if let Some(request) = &draft.find {
            let from = out.text.len();
            failure(sections::find(&mut out, state, target, request, tree.take()).await);
            fencing.finish(&mut out, from, Part::Find);
        }
        if let Some(detail) = &draft.network_request {
            let from = out.text.len();
            failure(sections::network_request(&mut out, state, target, detail).await);
            fencing.finish(&mut out, from, Part::NetworkRequest);
        }
        if let Some(msgid) = draft.console_message {
            let from = out.text.len();
            failure(sections::console_message(&mut out, state, target, msgid));
            fencing.finish(&mut out, from, Part::ConsoleMessage);
        }
        if let Some(request) = &draft.network_requests {
            let from = out.text.len();
            failure(sections::network_requests(&mut out, state, target, request));
            fencing.finish(&mut out, from, Part::NetworkRequests);
        }
        if let Some(request) = &draft.console_messages {
            let from = out.text.len();
            failure(sections::console_messages(&mut out, state, target, request));
            fencing.finish(&mut out, from, Part::ConsoleMessages);
        }
        if let Some(message) = section_error {
            return CallToolResult::error(vec![ContentBlock::text(message)]);
        }
        if let Some(message) = &error {
            let from = out.text.len();
            out.text.push(format!("Error: {message}"));
            fencing.finish(&mut out, from, Part::Error);
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
/// Under the fence, its lines that carry page text are fenced as a tool's lines are.
fn slim_result(draft: ResponseDraft, error: Option<String>, fencing: &Fencing) -> CallToolResult {
    let mut out = Output {
        text: draft.lines,
        ..Output::default()
    };
    if let Some(message) = &error {
        out.text.push(message.clone());
    }
    fencing.finish(&mut out, 0, Part::Message);
    let text = out.text.join("\n");
    let mut result = if error.is_some() {
        CallToolResult::error(vec![ContentBlock::text(text.clone())])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text.clone())])
    };
    let mut structured = serde_json::json!({ "type": "text", "text": text });
    if let Some(own) = draft.result.filter(|_| error.is_none()) {
        structured["result"] = own;
    }
    result.structured_content = Some(structured);
    result
}
