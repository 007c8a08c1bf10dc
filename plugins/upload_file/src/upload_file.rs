//! `upload_file`: sets files on a file input, or on the chooser an element opens.

use devtools_tool::{Category, Definition, Flags, Page, PageTool, Response};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Params {
    /// The uid of the file input element or an element that will open file chooser on the page from the page content snapshot
    uid: String,
    /// One or more files paths to upload. File paths have to be local to the browser instance (not the MCP).
    #[schemars(length(min = 1))]
    file_paths: Vec<String>,
    /// Whether to include a snapshot in the response. Default is false.
    include_snapshot: Option<bool>,
}

struct UploadFile;

impl PageTool for UploadFile {
    type Params = Params;

    fn definition(_flags: &Flags) -> Definition {
        Definition::new(
            "upload_file",
            Category::Input,
            "Upload a file through a provided element.",
        )
        .blocked_by_dialog()
        .file_param("filePaths")
    }

    fn handle(page: &Page, params: Params, response: &mut Response) -> devtools_tool::Result<()> {
        page.upload_files(&params.uid, &params.file_paths)?;
        response.line(format!(
            "File uploaded from {}.",
            params.file_paths.join(", ")
        ));
        if params.include_snapshot.unwrap_or(false) {
            response.include_snapshot(false, None);
        }
        Ok(())
    }
}

devtools_tool::register_page_tool!(UploadFile);
