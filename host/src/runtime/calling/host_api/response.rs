//! `devtools:tool/response`: intents recorded for assembly (the files a tool writes itself are
//! `files.rs`).

use super::files::plugin_kind;
use super::function::{HostFunction as F, Marks as M};
use super::{Call, CallState};
use crate::policy::capability::Capability::FilesWrite;
use crate::response::{FindRequest, ListRequest, NetworkRequestDetail, SnapshotRequest};
use crate::runtime::calling::bindings::v0_3::devtools::tool::response;
use crate::sandbox::{FileKind, save_temporary_file};

pub use crate::sandbox::PLUGIN_FILE_EXTENSIONS;

const APPEND_LINE: F = F::new("response", "append-line", M::NONE);
const INCLUDE_PAGES: F = F::new("response", "include-pages", M::NONE);
/// With `file-path` the snapshot is written (by the assembly, through the gateway).
const INCLUDE_SNAPSHOT: F =
    F::new("response", "include-snapshot", M::WRITES).depending(&[FilesWrite]);
/// A fresh snapshot, searched: reads the page as `include-snapshot` does.
const INCLUDE_FIND: F = F::new("response", "include-find", M::NONE);
const ATTACH_IMAGE: F = F::new("response", "attach-image", M::NONE);
/// Written to `file-path`, or to a temp file when too large to inline: both need `files.write`.
const ATTACH_SCREENSHOT: F =
    F::new("response", "attach-screenshot", M::WRITES).depending(&[FilesWrite]);
const INCLUDE_CONSOLE_MESSAGES: F = F::new("response", "include-console-messages", M::NONE);
const INCLUDE_CONSOLE_MESSAGE: F = F::new("response", "include-console-message", M::NONE);
const INCLUDE_NETWORK_REQUESTS: F = F::new("response", "include-network-requests", M::NONE);
/// Bodies saved to files (by the assembly, through the gateway) need `files.write`.
const INCLUDE_NETWORK_REQUEST: F =
    F::new("response", "include-network-request", M::WRITES).depending(&[FilesWrite]);
/// Since 0.3.1: from `definition`, the schema of the tool's structured results.
const DECLARE_OUTPUT_SCHEMA: F = F::new("response", "declare-output-schema", M::NONE);
/// Since 0.3.1: from `handle`, this call's structured result (validated after the handler).
const SET_STRUCTURED_RESULT: F = F::new("response", "set-structured-result", M::NONE);

pub(super) const FUNCTIONS: &[&F] = &[
    &APPEND_LINE,
    &INCLUDE_PAGES,
    &INCLUDE_SNAPSHOT,
    &INCLUDE_FIND,
    &ATTACH_IMAGE,
    &ATTACH_SCREENSHOT,
    &INCLUDE_CONSOLE_MESSAGES,
    &INCLUDE_CONSOLE_MESSAGE,
    &INCLUDE_NETWORK_REQUESTS,
    &INCLUDE_NETWORK_REQUEST,
    &DECLARE_OUTPUT_SCHEMA,
    &SET_STRUCTURED_RESULT,
];

/// Images this large or larger go to a file instead of inline, as in the reference.
const INLINE_IMAGE_LIMIT: usize = 2_000_000;

/// A screenshot too large to inline, spilled to a temp file with a name the host chose.
fn spill_screenshot(call: &mut Call<'_>, data: &[u8], mime_type: &str) -> Result<String, String> {
    if call.require(FilesWrite).is_err() {
        return Err(format!(
            "The screenshot ({} bytes) is too large to attach, and saving it to a file needs the capability `files.write`, which this tool's policy does not grant. Take a smaller screenshot (an element, or no full page).",
            data.len()
        ));
    }
    let name = format!("screenshot{}", FileKind::image(mime_type).extension());
    save_temporary_file(data, &name).map(|path| path.display().to_string())
}

/// A function of one phase called in the other: the author's mistake, said as such.
#[derive(Debug, thiserror::Error)]
#[error(
    "response.{function} may be called only from the tool's `{phase}` export; move the call there"
)]
pub struct WrongPhase {
    function: &'static str,
    phase: &'static str,
}

impl response::Host for CallState {
    async fn declare_output_schema(&mut self, schema: String) -> wasmtime::Result<()> {
        self.dispatch(&DECLARE_OUTPUT_SCHEMA, async |call| {
            if !call.defining() {
                return Err(wasmtime::Error::new(WrongPhase {
                    function: DECLARE_OUTPUT_SCHEMA.name,
                    phase: "definition",
                }));
            }
            call.charge(schema.len(), 0)?;
            call.response().output_schema = Some(schema);
            Ok(())
        })
        .await
    }

    async fn set_structured_result(&mut self, json: String) -> wasmtime::Result<()> {
        self.dispatch(&SET_STRUCTURED_RESULT, async |call| {
            if call.defining() {
                return Err(wasmtime::Error::new(WrongPhase {
                    function: SET_STRUCTURED_RESULT.name,
                    phase: "handle",
                }));
            }
            call.charge(json.len(), 0)?;
            call.response().structured_result = Some(json);
            Ok(())
        })
        .await
    }

    async fn append_line(&mut self, text: String) -> wasmtime::Result<()> {
        self.dispatch(&APPEND_LINE, async |call| {
            call.charge(text.len(), 1)?;
            // The Rust SDK's panic hook: for the crash report, not the answer's lines.
            if let Some(panic) =
                text.strip_prefix(crate::runtime::calling::guest_report::PANIC_MARK)
            {
                call.report_panic(panic);
                return Ok(());
            }
            call.response().lines.push(text);
            Ok(())
        })
        .await
    }

    async fn include_pages(&mut self) -> wasmtime::Result<()> {
        self.dispatch(&INCLUDE_PAGES, async |call| {
            call.response().include_pages = true;
            Ok(())
        })
        .await
    }

    async fn include_snapshot(
        &mut self,
        options: response::SnapshotOptions,
    ) -> wasmtime::Result<()> {
        self.dispatch(&INCLUDE_SNAPSHOT, async |call| {
            if options.file_path.is_some() {
                call.require(FilesWrite)?;
            }
            call.charge(options.file_path.as_ref().map_or(0, String::len), 0)?;
            call.charge(options.root_uid.as_ref().map_or(0, String::len), 0)?;
            call.response().snapshot = Some(SnapshotRequest {
                verbose: options.verbose,
                file_path: options.file_path,
                root_uid: options.root_uid,
                depth: options.depth,
            });
            Ok(())
        })
        .await
    }

    async fn include_find(&mut self, options: response::FindOptions) -> wasmtime::Result<()> {
        self.dispatch(&INCLUDE_FIND, async |call| {
            call.charge(options.query.len(), 0)?;
            call.response().find = Some(FindRequest {
                query: options.query,
                regex: options.regex,
                page_size: options.page_size,
                page_idx: options.page_idx,
            });
            Ok(())
        })
        .await
    }

    async fn attach_image(&mut self, data: Vec<u8>, mime_type: String) -> wasmtime::Result<()> {
        self.dispatch(&ATTACH_IMAGE, async |call| {
            call.charge_image(&data, &mime_type)?;
            call.response().images.push((data, mime_type));
            Ok(())
        })
        .await
    }

    async fn attach_screenshot(
        &mut self,
        data: Vec<u8>,
        mime_type: String,
        extension: String,
        file_path: Option<String>,
    ) -> wasmtime::Result<()> {
        self.dispatch(&ATTACH_SCREENSHOT, async |call| {
            call.charge_image(&data, &mime_type)?;
            let saved = match &file_path {
                Some(path) => Some(match plugin_kind(&extension) {
                    Ok(kind) => call.write_file(path, kind, &data)?,
                    Err(error) => Err(error),
                }),
                // Spilling to a file is a write: only with `files.write`, and with a name and
                // extension the host chose.
                None if data.len() >= INLINE_IMAGE_LIMIT => {
                    Some(spill_screenshot(call, &data, &mime_type))
                }
                None => None,
            };
            let response = call.response();
            match saved {
                Some(Ok(file)) => response.lines.push(format!("Saved screenshot to {file}.")),
                Some(Err(error)) => response.errors.push(error),
                None => response.images.push((data, mime_type)),
            }
            Ok(())
        })
        .await
    }

    async fn include_console_messages(
        &mut self,
        options: response::ListOptions,
    ) -> wasmtime::Result<()> {
        self.dispatch(&INCLUDE_CONSOLE_MESSAGES, async |call| {
            let named: usize = options.types.iter().flatten().map(String::len).sum();
            call.charge(named, 0)?;
            call.response().console_messages = Some(ListRequest::from(options));
            Ok(())
        })
        .await
    }

    async fn include_console_message(&mut self, msgid: u32) -> wasmtime::Result<()> {
        self.dispatch(&INCLUDE_CONSOLE_MESSAGE, async |call| {
            call.response().console_message = Some(msgid);
            Ok(())
        })
        .await
    }

    async fn include_network_requests(
        &mut self,
        options: response::ListOptions,
    ) -> wasmtime::Result<()> {
        self.dispatch(&INCLUDE_NETWORK_REQUESTS, async |call| {
            let named: usize = options.types.iter().flatten().map(String::len).sum();
            call.charge(named, 0)?;
            call.response().network_requests = Some(ListRequest::from(options));
            Ok(())
        })
        .await
    }

    async fn include_network_request(
        &mut self,
        reqid: Option<u32>,
        request_file: Option<String>,
        response_file: Option<String>,
    ) -> wasmtime::Result<()> {
        self.dispatch(&INCLUDE_NETWORK_REQUEST, async |call| {
            if request_file.is_some() || response_file.is_some() {
                call.require(FilesWrite)?;
            }
            let named = request_file.as_ref().map_or(0, String::len)
                + response_file.as_ref().map_or(0, String::len);
            call.charge(named, 0)?;
            call.response().network_request = Some(NetworkRequestDetail {
                reqid,
                request_file,
                response_file,
            });
            Ok(())
        })
        .await
    }
}

impl From<response::ListOptions> for ListRequest {
    fn from(options: response::ListOptions) -> ListRequest {
        ListRequest {
            page_size: options.page_size,
            page_idx: options.page_idx,
            types: options.types,
            include_preserved: options.include_preserved,
            include_stack_traces: options.include_stack_traces,
            service_worker_id: options.service_worker_id,
        }
    }
}
