//! The response a handler declares; the host renders it in the reference's section order.

use crate::__bindings::devtools::tool::response as wit_response;

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
        wit_response::include_snapshot(&wit_response::SnapshotOptions { verbose, file_path });
    }

    /// Attaches an image content item.
    pub fn attach_image(&mut self, data: &[u8], mime_type: &str) {
        wit_response::attach_image(data, mime_type);
    }
}
