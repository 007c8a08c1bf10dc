//! `devtools:tool/files` (`files.write`): the files a tool writes itself, and
//! `devtools:tool/files-read` (`files.read`): local files handed to a page's file input. Every
//! path goes through the file gateway, checked again here whatever the sandbox step saw.

use super::function::{HostFunction as F, Marks as M};
use super::input::act;
use super::{CallState, Outcome, PageHandle, or_return};
use crate::runtime::calling::bindings::v0_3::devtools::tool::{files, files_read};
use crate::sandbox::{FileKind, PLUGIN_FILE_EXTENSIONS, save_temporary_file};
use wasmtime::component::Resource;

const SAVE_FILE: F = F::new("files", "save-file", M::WRITES);
const SAVE_TEMP_FILE: F = F::new("files", "save-temp-file", M::WRITES);
/// The page reads the files and may react to them.
const UPLOAD_FILES: F = F::new(
    "files-read",
    "upload-files",
    M::NAVIGATES.and(M::READS).and(M::ON_PAGE),
);

pub(super) const FUNCTIONS: &[&F] = &[&SAVE_FILE, &SAVE_TEMP_FILE, &UPLOAD_FILES];

/// The longest file name a plugin may give a temporary file.
const MAX_TEMP_NAME: usize = 100;

/// The kind of a file whose extension a plugin chose, or the message listing the choices.
pub(super) fn plugin_kind(extension: &str) -> Result<FileKind, String> {
    FileKind::chosen_by_plugin(extension).ok_or_else(|| {
        format!(
            "The extension {} is not one the server writes; use one of {}.",
            crate::printable::escape(extension),
            PLUGIN_FILE_EXTENSIONS.join(", ")
        )
    })
}

/// A new file in a fresh folder of the temp dir (kept after the call). The name is a plain
/// file name (letters, digits, `-`, `_`, one `.` before an extension plugins may choose).
fn write_temp(file_name: &str, data: &[u8]) -> Result<String, String> {
    let invalid = || {
        format!(
            "Invalid file name: {} (use letters, digits, `-` and `_`, then one of {})",
            crate::printable::escape(file_name),
            PLUGIN_FILE_EXTENSIONS.join(", ")
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
    if !plain_stem || plugin_kind(extension).is_err() {
        return Err(invalid());
    }
    save_temporary_file(data, file_name).map(|path| path.display().to_string())
}

impl files::Host for CallState {
    async fn save_file(
        &mut self,
        path: String,
        data: Vec<u8>,
        extension: String,
    ) -> wasmtime::Result<Result<String, String>> {
        self.dispatch(&SAVE_FILE, async |call| {
            call.charge(data.len(), 0)?;
            match plugin_kind(&extension) {
                Ok(kind) => call.write_file(&path, kind, &data),
                Err(error) => Ok(Err(error)),
            }
        })
        .await
    }

    async fn save_temp_file(
        &mut self,
        file_name: String,
        data: Vec<u8>,
    ) -> wasmtime::Result<Result<String, String>> {
        self.dispatch(&SAVE_TEMP_FILE, async |call| {
            call.charge(data.len(), 0)?;
            Ok(write_temp(&file_name, &data))
        })
        .await
    }
}

impl files_read::Host for CallState {
    async fn upload_files(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
        paths: Vec<String>,
    ) -> Outcome<()> {
        self.dispatch(&UPLOAD_FILES, async |call| {
            // The paths were checked by the sandbox step, but a plugin could pass others here:
            // each is checked again, and must be a regular file (the browser reads it).
            let sandbox = or_return!(call.sandbox()?);
            let checked: Result<Vec<String>, String> = paths
                .iter()
                .map(|path| {
                    sandbox
                        .resolve_regular_file(path)
                        .map_err(|error| error.to_string())
                })
                .collect();
            let paths = or_return!(checked);
            act(call, &handle, async |page| {
                page.upload_files(&uid, &paths).await
            })
            .await
        })
        .await
    }
}
