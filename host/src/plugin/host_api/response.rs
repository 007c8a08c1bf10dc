//! `devtools:tool/response`: intents recorded for assembly, and the file writes a tool may ask
//! for (always through the sandbox).

use super::CallState;
use crate::plugin::bindings::devtools::tool::response;
use crate::plugin::capability::Capability;
use crate::response::{ListRequest, NetworkRequestDetail, SnapshotRequest};
use crate::sandbox::save_temporary_file;
use std::path::Path;

/// Images this large or larger go to a file instead of inline, as in the reference.
const INLINE_IMAGE_LIMIT: usize = 2_000_000;

impl CallState {
    /// Writes through the sandbox: the path is checked again here, since a plugin may pass
    /// any string, not only its declared file parameters.
    fn write_checked(
        &mut self,
        path: &str,
        data: &[u8],
        extension: &str,
    ) -> Result<String, String> {
        let session = self.session()?;
        session
            .sandbox
            .save(path, extension, data)
            .map_err(|error| error.to_string())
    }
}

/// A new file in a fresh folder of the temp dir (kept after the call), by bare file name.
fn write_temp(file_name: &str, data: &[u8]) -> Result<String, String> {
    let name = Path::new(file_name)
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| format!("Invalid file name: {file_name}"))?;
    save_temporary_file(data, name).map(|path| path.display().to_string())
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
        self.response.snapshot = Some(SnapshotRequest {
            verbose: options.verbose,
            file_path: options.file_path,
        });
        Ok(())
    }

    async fn attach_image(&mut self, data: Vec<u8>, mime_type: String) -> wasmtime::Result<()> {
        self.charge(data.len(), 0)?;
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
        self.charge(data.len(), 0)?;
        let saved = match file_path {
            Some(path) => Some(self.write_checked(&path, &data, &extension)),
            None if data.len() >= INLINE_IMAGE_LIMIT => {
                Some(write_temp(&format!("screenshot{extension}"), &data))
            }
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
