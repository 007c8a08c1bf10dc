//! What a handler declared, and the response assembled from it in the reference's order:
//! reconnect note, the tool's lines, `Page navigated to`, the open dialog, `## Pages`, the
//! snapshot, `Error:`. One text item, then images.

use crate::sandbox::ensure_extension;
use crate::session::SessionState;
use crate::snapshot::next_snapshot_id;
use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

/// The intents a handler declared through the `response` interface.
#[derive(Default, Debug)]
pub struct ResponseDraft {
    pub lines: Vec<String>,
    pub include_pages: bool,
    pub snapshot: Option<SnapshotRequest>,
    pub images: Vec<(Vec<u8>, String)>,
    /// Set by the host when an action of this call navigated the page.
    pub navigated_to: Option<String>,
}

#[derive(Debug, Clone)]
pub struct SnapshotRequest {
    pub verbose: bool,
    pub file_path: Option<String>,
}

/// Everything assembly needs besides the draft.
pub struct Assembly<'a> {
    pub draft: ResponseDraft,
    /// The page of a page-scoped tool: its dialog is shown and its snapshot taken.
    pub page: Option<u32>,
    pub reconnected: bool,
    pub error: Option<String>,
    pub structured: bool,
    pub state: &'a mut SessionState,
}

impl Assembly<'_> {
    pub async fn render(self) -> CallToolResult {
        let Assembly {
            draft,
            page,
            reconnected,
            mut error,
            structured,
            state,
        } = self;
        let mut text: Vec<String> = Vec::new();
        let mut data = Map::new();
        if reconnected {
            text.push("Note: the browser was restarted or reconnected since the last call. Page ids have changed. Call list_pages to see open pages.".into());
            data.insert("reconnected".into(), Value::Bool(true));
        }
        if !draft.lines.is_empty() {
            data.insert("message".into(), Value::from(draft.lines.join("\n")));
            text.extend(draft.lines.iter().cloned());
        }
        if let Some(url) = &draft.navigated_to {
            text.push(format!("Page navigated to {url}."));
            data.insert("navigatedToUrl".into(), Value::from(url.as_str()));
        }
        if let Some(dialog) = page
            .and_then(|id| state.page(id).ok())
            .and_then(|page| page.dialog())
        {
            let default_value = match (&dialog.default_value, dialog.kind.as_str()) {
                (Some(value), "prompt") => format!(" (default value: \"{value}\")"),
                _ => String::new(),
            };
            text.push(format!(
                "# Open dialog\n{}: {}{default_value}.\nCall handle_dialog to handle it before continuing.",
                dialog.kind, dialog.message
            ));
            data.insert(
                "dialog".into(),
                json!({ "type": dialog.kind, "message": dialog.message, "defaultValue": dialog.default_value.unwrap_or_default() }),
            );
        }
        if draft.include_pages {
            let entries = state.page_list().await;
            if !entries.is_empty() {
                text.push("## Pages".into());
                let mut pages = Vec::new();
                for entry in &entries {
                    let title = truncate_title(&entry.title);
                    let label = if title.is_empty() {
                        entry.url.clone()
                    } else {
                        format!("{title} ({})", entry.url)
                    };
                    let selected = if entry.selected { " [selected]" } else { "" };
                    let context = entry
                        .isolated_context
                        .as_ref()
                        .map(|name| format!(" isolatedContext={name}"))
                        .unwrap_or_default();
                    text.push(format!("{}: {label}{selected}{context}", entry.id));
                    let mut page = json!({ "id": entry.id, "url": entry.url, "title": title, "selected": entry.selected });
                    if let Some(name) = &entry.isolated_context {
                        page["isolatedContext"] = Value::from(name.as_str());
                    }
                    pages.push(page);
                }
                data.insert("pages".into(), Value::Array(pages));
            }
        }
        if let Some(request) = &draft.snapshot {
            match snapshot_section(state, page, request).await {
                Ok(Section::Inline { text: tree, json }) => {
                    text.push("## Latest page snapshot".into());
                    text.push(tree);
                    data.insert("snapshot".into(), json);
                }
                Ok(Section::Saved(file)) => {
                    text.push(format!("Saved snapshot to {file}."));
                    data.insert("snapshotFilePath".into(), Value::from(file));
                }
                Err(snapshot_error) => {
                    error.get_or_insert(snapshot_error);
                }
            }
        }
        if let Some(message) = &error {
            text.push(format!("Error: {message}"));
            data.insert("errorMessage".into(), Value::from(message.as_str()));
        }
        let mut content = vec![ContentBlock::text(text.join("\n"))];
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
            result.structured_content = Some(Value::Object(data));
        }
        result
    }
}

enum Section {
    Inline { text: String, json: Value },
    Saved(String),
}

async fn snapshot_section(
    state: &mut SessionState,
    page: Option<u32>,
    request: &SnapshotRequest,
) -> Result<Section, String> {
    let id = match page {
        Some(id) => id,
        None => state.selected_id()?,
    };
    let snapshot = state
        .page_mut(id)?
        .take_snapshot(next_snapshot_id(), request.verbose)
        .await?;
    let text = snapshot.to_text();
    match &request.file_path {
        None => Ok(Section::Inline {
            json: snapshot.to_json(),
            text,
        }),
        Some(path) => {
            let file = ensure_extension(path, ".txt");
            let file = state
                .sandbox
                .resolve(&file)
                .map_err(|error| error.to_string())?;
            state
                .sandbox
                .write(std::path::Path::new(&file), text.as_bytes())
                .map_err(|error| error.to_string())?;
            Ok(Section::Saved(file))
        }
    }
}

/// The reference's 50-character title cut (counted in UTF-16 units, as JavaScript does).
fn truncate_title(title: &str) -> String {
    const MAX: usize = 50;
    let units: Vec<u16> = title.encode_utf16().collect();
    if units.len() <= MAX {
        return title.to_string();
    }
    format!("{}...", String::from_utf16_lossy(&units[..MAX - 3]))
}

#[cfg(test)]
mod tests {
    use super::truncate_title;

    #[test]
    fn titles_are_cut_at_fifty_characters() {
        assert_eq!(truncate_title("short"), "short");
        let long = "x".repeat(60);
        assert_eq!(truncate_title(&long), format!("{}...", "x".repeat(47)));
        assert_eq!(truncate_title(&"y".repeat(50)), "y".repeat(50));
    }
}
