//! The response a handler declares; the host renders it in the reference's section order.

use crate::__bindings::devtools::tool::response as wit_response;
use crate::{ListOptions, Screenshot};

/// Intents for the response of this call. Nothing is rendered in the component: the host
/// assembles the text, the snapshot and the images after the handler returns.
pub struct Response {
    _private: (),
}

impl Response {
    pub(crate) fn new() -> Self {
        Response { _private: () }
    }

    /// Appends one line to the tool's own output.
    pub fn line(&mut self, text: impl AsRef<str>) {
        wit_response::append_line(text.as_ref());
    }

    /// Adds the `## Pages` section.
    pub fn include_pages(&mut self) {
        wit_response::include_pages();
    }

    /// Adds a fresh accessibility snapshot; with `file_path` it is saved there instead.
    pub fn include_snapshot(&mut self, verbose: bool, file_path: Option<String>) {
        self.include_scoped_snapshot(verbose, file_path, None, None);
    }

    /// A snapshot of the subtree under `root_uid` (the whole page when `None`), at most `depth`
    /// levels below it; uids are the full snapshot's.
    pub fn include_scoped_snapshot(
        &mut self,
        verbose: bool,
        file_path: Option<String>,
        root_uid: Option<String>,
        depth: Option<u32>,
    ) {
        wit_response::include_snapshot(&wit_response::SnapshotOptions {
            verbose,
            file_path,
            root_uid,
            depth,
        });
    }

    /// Adds `## Found in page`: the elements whose name or role matches `query` (a regular
    /// expression when `regex`), with uids and paths, a page of results at a time.
    pub fn include_find(
        &mut self,
        query: &str,
        regex: bool,
        page_size: Option<u32>,
        page_idx: Option<u32>,
    ) {
        wit_response::include_find(&wit_response::FindOptions {
            query: query.to_string(),
            regex,
            page_size,
            page_idx,
        });
    }

    /// Sets this call's structured result, beside the text: a value of the type the definition
    /// declared with [`crate::Definition::output`]. The host validates it against that schema
    /// before the answer leaves (an invalid one fails the call, naming where it is wrong).
    pub fn structured<T: serde::Serialize>(&mut self, value: &T) -> crate::Result<()> {
        let json = serde_json::to_string(value)
            .map_err(|error| format!("The structured result is not JSON: {error}"))?;
        wit_response::set_structured_result(&json);
        Ok(())
    }

    /// Attaches an image content item.
    pub fn attach_image(&mut self, data: &[u8], mime_type: &str) {
        wit_response::attach_image(data, mime_type);
    }

    /// Attaches a screenshot, or has the host save it to `file_path` (or to a temp file when it
    /// is too large to inline).
    pub fn attach_screenshot(&mut self, screenshot: &Screenshot, file_path: Option<&str>) {
        wit_response::attach_screenshot(
            &screenshot.data,
            &screenshot.mime_type,
            &screenshot.extension,
            file_path,
        );
    }

    /// Writes `data` to a (host-checked) path with `extension` forced; returns the final path
    /// (capability `files.write`).
    pub fn save_file(&mut self, path: &str, data: &[u8], extension: &str) -> crate::Result<String> {
        crate::__bindings::devtools::tool::files::save_file(path, data, extension)
    }

    /// Writes `data` to a new temp file named `file_name`; returns its path (`files.write`).
    pub fn save_temp_file(&mut self, file_name: &str, data: &[u8]) -> crate::Result<String> {
        crate::__bindings::devtools::tool::files::save_temp_file(file_name, data)
    }

    /// Adds `## Console messages`.
    pub fn include_console_messages(&mut self, options: &ListOptions) {
        wit_response::include_console_messages(options);
    }

    /// Adds one console message in detail.
    pub fn include_console_message(&mut self, msgid: u32) {
        wit_response::include_console_message(msgid);
    }

    /// Adds `## Network requests`.
    pub fn include_network_requests(&mut self, options: &ListOptions) {
        wit_response::include_network_requests(options);
    }

    /// Adds one request in detail; bodies optionally saved to files.
    pub fn include_network_request(
        &mut self,
        reqid: Option<u32>,
        request_file: Option<&str>,
        response_file: Option<&str>,
    ) {
        wit_response::include_network_request(reqid, request_file, response_file);
    }
}
