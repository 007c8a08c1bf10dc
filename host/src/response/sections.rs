//! The sections of a response, each rendered from the session's state.

use super::parts::{Fencing, Part};
use super::{FindRequest, ListRequest, NetworkRequestDetail, Output, SnapshotRequest};
use crate::browser::McpPage;
use crate::browser::features::collectors::{Collectors, Page as Pagination};
use crate::browser::features::downloads::{Download, DownloadState};
use crate::browser::page::snapshot::CapturedTree;
use crate::sandbox::FileKind;
use crate::session::SessionState;
use crate::snapshot::{Query, Snapshot, next_snapshot_id};
use serde_json::{Value, json};

/// `Emulating ...` lines of the page's emulation state.
pub fn emulation(out: &mut Output, state: &SessionState, page: u32) {
    if let Ok(page) = state.page(page) {
        let (lines, data) = page.emulation().lines();
        out.text.extend(lines);
        out.data.extend(data);
    }
}

/// `# Open dialog` while one is open on the page.
pub fn dialog(out: &mut Output, state: &SessionState, page: u32) {
    let Some(dialog) = state.page(page).ok().and_then(|page| page.dialog()) else {
        return;
    };
    let default_value = match (&dialog.default_value, dialog.kind.as_str()) {
        (Some(value), "prompt") => format!(" (default value: \"{value}\")"),
        _ => String::new(),
    };
    out.text.push(format!(
        "# Open dialog\n{}: {}{default_value}.\nCall handle_dialog to handle it before continuing.",
        dialog.kind, dialog.message
    ));
    out.data.insert(
        "dialog".into(),
        json!({ "type": dialog.kind, "message": dialog.message, "defaultValue": dialog.default_value.unwrap_or_default() }),
    );
}

/// How long `## New pages` waits for a new tab's first URL.
const NEW_PAGE_URL_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// `## New pages`: the pages the call opened (adopted now if the browser has just made them),
/// with the ids the next calls take.
pub async fn new_pages(out: &mut Output, state: &mut SessionState, before: &[u32]) {
    // A tab the call just opened may not have committed its first URL yet: give it a moment
    // (bounded) so the section names where it went.
    let deadline = std::time::Instant::now() + NEW_PAGE_URL_WAIT;
    let entries = loop {
        let entries = state.page_list().await;
        let pending = entries
            .iter()
            .any(|entry| !before.contains(&entry.id) && entry.url.is_empty());
        if !pending || std::time::Instant::now() >= deadline {
            break entries;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let opened: Vec<_> = entries
        .iter()
        .filter(|entry| !before.contains(&entry.id))
        .collect();
    if opened.is_empty() {
        return;
    }
    out.text.push("## New pages".into());
    let rows = page_rows(out, &opened);
    out.data.insert("newPages".into(), Value::Array(rows));
}

/// `## Downloads` (`--experimentalDownloads`): each download that finished since the last
/// answer, or is still arriving, with where its file is.
pub fn downloads(out: &mut Output, downloads: &[Download]) {
    if downloads.is_empty() {
        return;
    }
    out.text.push("## Downloads".into());
    let mut rows = Vec::with_capacity(downloads.len());
    for download in downloads {
        let mut row = json!({ "name": download.name, "url": download.url });
        match (&download.state, &download.path) {
            (DownloadState::Completed, Some(path)) => {
                let mime_type = download.mime_type();
                out.text.push(format!(
                    "{} ({} bytes, {mime_type}) saved to {} (from {})",
                    download.name,
                    download.received_bytes,
                    path.display(),
                    download.url
                ));
                row["state"] = json!("completed");
                row["size"] = json!(download.received_bytes);
                row["type"] = json!(mime_type);
                row["path"] = json!(path.display().to_string());
            }
            (DownloadState::Failed(_), _) | (DownloadState::Completed, None) => {
                let reason = match &download.state {
                    DownloadState::Failed(reason) => reason.as_str(),
                    _ => "the file is missing",
                };
                out.text.push(format!(
                    "{}: failed ({reason}) (from {})",
                    download.name, download.url
                ));
                row["state"] = json!("failed");
                row["error"] = json!(reason);
            }
            (DownloadState::InProgress, _) => {
                out.text.push(format!(
                    "{}: still arriving ({} of {} bytes); a later answer lists it when it is done (from {})",
                    download.name, download.received_bytes, download.total_bytes, download.url
                ));
                row["state"] = json!("inProgress");
                row["size"] = json!(download.received_bytes);
            }
        }
        rows.push(row);
    }
    out.data.insert("downloads".into(), Value::Array(rows));
}

/// `## Pages`; with `--categoryExtensions`, extension pages apart (`## Extension Pages`) and
/// `## Extension Service Workers`. Without it, extension pages are not listed, as in 1.11.0.
/// Titles and URLs are the pages' own: each section is fenced after its header.
pub async fn pages(out: &mut Output, state: &mut SessionState, fencing: &Fencing) {
    let extensions = state.browser_options().extensions;
    let entries = state.page_list().await;
    let (extension_pages, regular): (Vec<_>, Vec<_>) = entries
        .iter()
        .partition(|entry| entry.url.starts_with("chrome-extension://"));
    if !regular.is_empty() {
        let from = out.text.len();
        out.text.push("## Pages".into());
        let rows = page_rows(out, &regular);
        out.data.insert("pages".into(), Value::Array(rows));
        fencing.finish(out, from, Part::Pages);
    }
    if !extensions {
        return;
    }
    if !extension_pages.is_empty() {
        let from = out.text.len();
        out.text.push("## Extension Pages".into());
        let rows = page_rows(out, &extension_pages);
        out.data.insert("extensionPages".into(), Value::Array(rows));
        fencing.finish(out, from, Part::ExtensionPages);
    }
    let workers = state.extension_service_workers().await;
    let from = out.text.len();
    if !workers.is_empty() {
        out.text.push("## Extension Service Workers".into());
    }
    let mut listed = Vec::with_capacity(workers.len());
    for worker in workers {
        out.text.push(format!("{}: {}", worker.id, worker.url));
        listed.push(json!({ "id": worker.id, "url": worker.url }));
    }
    fencing.finish(out, from, Part::ExtensionServiceWorkers);
    out.data
        .insert("extensionServiceWorkers".into(), Value::Array(listed));
}

/// One line per page (`1: Title (url) [selected]`), and the structured rows.
fn page_rows(out: &mut Output, entries: &[&crate::session::PageEntry]) -> Vec<Value> {
    let mut pages = Vec::with_capacity(entries.len());
    for entry in entries {
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
        out.text
            .push(format!("{}: {label}{selected}{context}", entry.id));
        let mut page =
            json!({ "id": entry.id, "url": entry.url, "title": title, "selected": entry.selected });
        if let Some(name) = &entry.isolated_context {
            page["isolatedContext"] = Value::from(name.as_str());
        }
        pages.push(page);
    }
    pages
}

/// A new snapshot of `page`: of the tree fetched before assembly if there is one, else of one
/// fetched now.
async fn fresh_snapshot(
    page: &mut McpPage,
    tree: Option<Result<CapturedTree, String>>,
    verbose: bool,
) -> Result<&Snapshot, String> {
    match tree {
        Some(tree) => Ok(page.keep_snapshot(tree?, next_snapshot_id())),
        None => page.take_snapshot(next_snapshot_id(), verbose).await,
    }
}

/// `## Latest page snapshot`, or `Saved snapshot to <file>.`
pub async fn snapshot(
    out: &mut Output,
    state: &mut SessionState,
    page: Option<u32>,
    request: &SnapshotRequest,
    tree: Option<Result<CapturedTree, String>>,
) -> Result<(), String> {
    let id = page.ok_or("No page selected")?;
    let snapshot = fresh_snapshot(state.page_mut(id)?, tree, request.verbose).await?;
    let scoped = request.root_uid.is_some() || request.depth.is_some();
    let text = match scoped {
        true => snapshot.scoped_text(request.root_uid.as_deref(), request.depth)?,
        false => snapshot.to_text(),
    };
    match &request.file_path {
        None => {
            // The structured twin is the whole tree; a scoped answer keeps to its text.
            if out.structured && !scoped {
                out.data.insert("snapshot".into(), snapshot.to_json());
            }
            out.text.push("## Latest page snapshot".into());
            out.text.push(text);
        }
        Some(path) => {
            let file = write(state, path, FileKind::Snapshot, text.as_bytes())?;
            out.text.push(format!("Saved snapshot to {file}."));
            out.data
                .insert("snapshotFilePath".into(), Value::from(file));
        }
    }
    Ok(())
}

/// Writes through the sandbox (checked again: the path came from a plugin).
fn write(state: &SessionState, path: &str, kind: FileKind, data: &[u8]) -> Result<String, String> {
    state
        .sandbox
        .save(path, kind, data)
        .map_err(|error| error.to_string())
}

fn pagination(request: &ListRequest) -> Pagination {
    Pagination {
        size: request.page_size,
        index: request.page_idx,
    }
}

pub fn console_messages(
    out: &mut Output,
    state: &SessionState,
    page: Option<u32>,
    request: &ListRequest,
) -> Result<(), String> {
    let page = state.page(page.ok_or("No page selected")?)?;
    // Service workers' messages are not collected: a service worker's list is the empty one,
    // rendered as the reference renders it for a page without service workers.
    let nothing = [String::new()];
    let types = match request.service_worker_id {
        Some(_) => Some(&nothing[..]),
        None => request.types.as_deref(),
    };
    let (lines, data) = Collectors::of(page)?.console_list(
        pagination(request),
        types,
        request.include_preserved,
        request.include_stack_traces,
    );
    out.text.extend(lines);
    merge(out, data);
    Ok(())
}

pub fn console_message(
    out: &mut Output,
    state: &SessionState,
    page: Option<u32>,
    msgid: u32,
) -> Result<(), String> {
    let page = state.page(page.ok_or("No page selected")?)?;
    let snapshot = page.last_snapshot();
    let uid = |node: i64| Some(snapshot?.uid_of_backend_node(node)?.to_string());
    let node = snapshot.map(|_| &uid as &dyn Fn(i64) -> Option<String>);
    let (lines, data) = Collectors::of(page)?.console_detail(u64::from(msgid), node)?;
    out.text.extend(lines);
    merge(out, data);
    Ok(())
}

pub fn network_requests(
    out: &mut Output,
    state: &SessionState,
    page: Option<u32>,
    request: &ListRequest,
) -> Result<(), String> {
    let page = state.page(page.ok_or("No page selected")?)?;
    let (lines, data) = Collectors::of(page)?.network_list(
        pagination(request),
        request.types.as_deref(),
        request.include_preserved,
    );
    out.text.extend(lines);
    merge(out, data);
    Ok(())
}

pub async fn network_request(
    out: &mut Output,
    state: &SessionState,
    page: Option<u32>,
    detail: &NetworkRequestDetail,
) -> Result<(), String> {
    let page = state.page(page.ok_or("No page selected")?)?;
    let request = Collectors::of(page)?
        .network_detail(page.cdp(), detail.reqid.map(u64::from))
        .await?;
    let mut request_file = None;
    if let (Some(path), Some(body)) = (&detail.request_file, &request.request_body) {
        request_file = Some(write(state, path, FileKind::NetworkRequestBody, body)?);
    }
    let mut response_file = None;
    if let (Some(path), Some(body)) = (&detail.response_file, &request.response_body) {
        response_file = Some(write(state, path, FileKind::NetworkResponseBody, body)?);
    }
    let (lines, data) =
        request.with_saved_bodies(request_file.as_deref(), response_file.as_deref());
    out.text.extend(lines);
    merge(out, data);
    Ok(())
}

/// Adds a section's structured keys (an object) to the response's.
fn merge(out: &mut Output, data: Value) {
    if let Value::Object(map) = data {
        out.data.extend(map);
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

/// The longest query `## Found in page` repeats back, in characters.
const ECHO_CHARS: usize = 200;

/// The query as the answer repeats it: quoted, and cut when long (the caller already has it;
/// a megabyte query must not come back whole).
fn echo(query: &str) -> String {
    let count = query.chars().count();
    if count <= ECHO_CHARS {
        return format!("{query:?}");
    }
    let kept: String = query.chars().take(ECHO_CHARS).collect();
    format!("{kept:?}… ({} more characters)", count - ECHO_CHARS)
}

/// How many matches one page of `## Found in page` lists by default.
const FIND_PAGE_SIZE: usize = 20;

/// `## Found in page`: a fresh snapshot (uids as a full one would number them), searched.
pub async fn find(
    out: &mut Output,
    state: &mut SessionState,
    page: Option<u32>,
    request: &FindRequest,
    tree: Option<Result<CapturedTree, String>>,
) -> Result<(), String> {
    let id = page.ok_or("No page selected")?;
    let query = match request.regex {
        true => Query::regex(&request.query)?,
        false => Query::text(&request.query),
    };
    let snapshot = fresh_snapshot(state.page_mut(id)?, tree, false).await?;
    let found = snapshot.find_all(&query);
    out.text.push("## Found in page".into());
    if found.is_empty() {
        out.text
            .push(format!("No element matches {}.", echo(&request.query)));
        return Ok(());
    }
    let size = request
        .page_size
        .map_or(FIND_PAGE_SIZE, |size| (size as usize).max(1));
    let index = request.page_idx.unwrap_or(0) as usize;
    let start = (index * size).min(found.len());
    let end = (start + size).min(found.len());
    out.text.push(format!(
        "{} elements match {}; showing {}-{}{}.",
        found.len(),
        echo(&request.query),
        start + 1,
        end,
        match end < found.len() {
            true => format!(" (next: pageIdx {})", index + 1),
            false => String::new(),
        }
    ));
    let mut items = Vec::new();
    for found in &found[start..end] {
        out.text.push(found.line.clone());
        if !found.path.is_empty() {
            out.text.push(format!("  in: {}", found.path.join(" > ")));
        }
        if !found.next.is_empty() {
            out.text.push(format!("  next: {}", found.next.join(" · ")));
        }
        items.push(
            json!({"uid": found.uid, "line": found.line, "path": found.path, "next": found.next}),
        );
    }
    if out.structured {
        out.data.insert(
            "found".into(),
            json!({"total": found.len(), "items": items}),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{echo, truncate_title};

    #[test]
    fn a_long_query_is_echoed_cut() {
        assert_eq!(echo("add pear"), "\"add pear\"");
        let echoed = echo(&"q".repeat(5000));
        assert!(echoed.ends_with("… (4800 more characters)"), "{echoed}");
        assert!(echoed.len() < 300, "{echoed}");
    }

    #[test]
    fn titles_are_cut_at_fifty_characters() {
        assert_eq!(truncate_title("short"), "short");
        let long = "x".repeat(60);
        assert_eq!(truncate_title(&long), format!("{}...", "x".repeat(47)));
        assert_eq!(truncate_title(&"y".repeat(50)), "y".repeat(50));
    }
}
