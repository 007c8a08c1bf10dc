//! `devtools:tool/response`: intents recorded for assembly, and the file writes a tool may ask
//! for (always through the sandbox).

use super::CallState;
use crate::plugin::bindings::devtools::tool::response;
use crate::plugin::capability::Capability;
use crate::plugin::limits::{LimitExceeded, MAX_IMAGES};
use crate::response::{ListRequest, NetworkRequestDetail, SnapshotRequest};
use crate::sandbox::save_temporary_file;

/// Images this large or larger go to a file instead of inline, as in the reference.
const INLINE_IMAGE_LIMIT: usize = 2_000_000;

/// The extensions the host writes files with. A plugin picks one of these, never its own: no
/// `.desktop`, `.sh`, `.html` or dotfile lands anywhere because a plugin asked.
pub const SAFE_EXTENSIONS: [&str; 12] = [
    ".png",
    ".jpeg",
    ".jpg",
    ".webp",
    ".json",
    ".txt",
    ".md",
    ".csv",
    ".heapsnapshot",
    ".network-request",
    ".network-response",
    ".gz",
];

/// The longest file name a plugin may give a temporary file.
const MAX_TEMP_NAME: usize = 100;

fn check_extension(extension: &str) -> Result<(), String> {
    if SAFE_EXTENSIONS.contains(&extension) {
        Ok(())
    } else {
        Err(format!(
            "The extension {} is not one the server writes; use one of {}.",
            super::super::definition::escape(extension),
            SAFE_EXTENSIONS.join(", ")
        ))
    }
}

impl CallState {
    /// Writes through the sandbox: the path is checked again here, since a plugin may pass
    /// any string, not only its declared file parameters.
    fn write_checked(
        &mut self,
        path: &str,
        data: &[u8],
        extension: &str,
    ) -> Result<String, String> {
        check_extension(extension)?;
        let session = self.session()?;
        session
            .sandbox
            .save(path, extension, data)
            .map_err(|error| error.to_string())
    }

    /// Counts an image (and its MIME type) against the output budget.
    fn charge_image(&mut self, data: &[u8], mime_type: &str) -> wasmtime::Result<()> {
        self.images += 1;
        if self.images > MAX_IMAGES {
            return Err(wasmtime::Error::new(LimitExceeded::Images {
                limit: MAX_IMAGES,
            }));
        }
        self.charge(data.len().saturating_add(mime_type.len()), 0)
    }
}

/// A new file in a fresh folder of the temp dir (kept after the call). The name is a plain
/// file name (letters, digits, `-`, `_`, one `.` before a safe extension).
fn write_temp(file_name: &str, data: &[u8]) -> Result<String, String> {
    let invalid = || {
        format!(
            "Invalid file name: {} (use letters, digits, `-` and `_`, then one of {})",
            super::super::definition::escape(file_name),
            SAFE_EXTENSIONS.join(", ")
        )
    };
    let (stem, extension) = match file_name.find('.') {
        Some(dot) => file_name.split_at(dot),
        None => return Err(invalid()),
    };
    let plain_stem = !stem.is_empty()
        && file_name.len() <= MAX_TEMP_NAME
        && stem
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
    if !plain_stem || check_extension(extension).is_err() {
        return Err(invalid());
    }
    save_temporary_file(data, file_name).map(|path| path.display().to_string())
}

impl response::Host for CallState {
    async fn append_line(&mut self, text: String) -> wasmtime::Result<()> {
        self.charge(text.len(), 1)?;
        self.response.lines.push(text);
        Ok(())
    }

    async fn include_pages(&mut self) -> wasmtime::Result<()> {
        self.response.include_pages = true;
        Ok(())
    }

    async fn include_snapshot(
        &mut self,
        options: response::SnapshotOptions,
    ) -> wasmtime::Result<()> {
        self.require_file(options.file_path.as_deref(), "include-snapshot")?;
        self.charge(options.file_path.as_ref().map_or(0, String::len), 0)?;
        self.response.snapshot = Some(SnapshotRequest {
            verbose: options.verbose,
            file_path: options.file_path,
        });
        Ok(())
    }

    async fn attach_image(&mut self, data: Vec<u8>, mime_type: String) -> wasmtime::Result<()> {
        self.charge_image(&data, &mime_type)?;
        self.response.images.push((data, mime_type));
        Ok(())
    }

    async fn attach_screenshot(
        &mut self,
        data: Vec<u8>,
        mime_type: String,
        extension: String,
        file_path: Option<String>,
    ) -> wasmtime::Result<()> {
        self.require_file(file_path.as_deref(), "attach-screenshot")?;
        self.charge_image(&data, &mime_type)?;
        let saved = match file_path {
            Some(path) => Some(self.write_checked(&path, &data, &extension)),
            // Spilling to a file is a write: only with `files.write`, and with a name and
            // extension the host chose.
            None if data.len() >= INLINE_IMAGE_LIMIT => Some(
                self.require(Capability::FilesWrite, "attach-screenshot")
                    .map_err(|_| {
                        format!(
                            "The screenshot ({} bytes) is too large to attach, and saving it to a file needs the capability `files.write`, which this tool's policy does not grant. Take a smaller screenshot (an element, or no full page).",
                            data.len()
                        )
                    })
                    .and_then(|()| {
                        let extension = match mime_type.as_str() {
                            "image/jpeg" => ".jpeg",
                            "image/webp" => ".webp",
                            _ => ".png",
                        };
                        write_temp(&format!("screenshot{extension}"), &data)
                    }),
            ),
            None => None,
        };
        match saved {
            Some(Ok(file)) => self
                .response
                .lines
                .push(format!("Saved screenshot to {file}.")),
            Some(Err(error)) => self.response.errors.push(error),
            None => self.response.images.push((data, mime_type)),
        }
        Ok(())
    }

    async fn save_file(
        &mut self,
        path: String,
        data: Vec<u8>,
        extension: String,
    ) -> wasmtime::Result<Result<String, String>> {
        self.require(Capability::FilesWrite, "save-file")?;
        self.charge(data.len(), 0)?;
        Ok(self.write_checked(&path, &data, &extension))
    }

    async fn save_temp_file(
        &mut self,
        file_name: String,
        data: Vec<u8>,
    ) -> wasmtime::Result<Result<String, String>> {
        self.require(Capability::FilesWrite, "save-temp-file")?;
        self.charge(data.len(), 0)?;
        Ok(write_temp(&file_name, &data))
    }

    async fn include_console_messages(
        &mut self,
        options: response::ListOptions,
    ) -> wasmtime::Result<()> {
        let named: usize = options.types.iter().flatten().map(String::len).sum();
        self.charge(named, 0)?;
        self.response.console_messages = Some(ListRequest::from(options));
        Ok(())
    }

    async fn include_console_message(&mut self, msgid: u32) -> wasmtime::Result<()> {
        self.response.console_message = Some(msgid);
        Ok(())
    }

    async fn include_network_requests(
        &mut self,
        options: response::ListOptions,
    ) -> wasmtime::Result<()> {
        let named: usize = options.types.iter().flatten().map(String::len).sum();
        self.charge(named, 0)?;
        self.response.network_requests = Some(ListRequest::from(options));
        Ok(())
    }

    async fn include_network_request(
        &mut self,
        reqid: Option<u32>,
        request_file: Option<String>,
        response_file: Option<String>,
    ) -> wasmtime::Result<()> {
        let file = request_file.as_deref().or(response_file.as_deref());
        self.require_file(file, "include-network-request")?;
        let named = request_file.as_ref().map_or(0, String::len)
            + response_file.as_ref().map_or(0, String::len);
        self.charge(named, 0)?;
        self.response.network_request = Some(NetworkRequestDetail {
            reqid,
            request_file,
            response_file,
        });
        Ok(())
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
