//! Downloads (beyond 1.11.0, `--experimentalDownloads`): every download of a session's
//! browser contexts is saved into the session's own folder, never the user's download folder.
//! The browser names each file by its guid while it arrives; once complete it is renamed to a
//! safe form of the name the page suggested. A download past the per-file size, the call's
//! count or the session's total is cancelled, so a page cannot fill the disk.

use chromiumoxide::Browser;
use chromiumoxide::cdp::browser_protocol::browser::{
    DownloadProgressState, EventDownloadProgress, EventDownloadWillBegin,
};
use futures::StreamExt;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The server's download settings (`--experimentalDownloads` and its limits).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DownloadSettings {
    /// `--downloadsDir`; `None`: a private temp folder (a tenant's: under its sandbox root).
    pub dir: Option<PathBuf>,
    pub limits: DownloadLimits,
}

/// Limits on what pages may download into a session's folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DownloadLimits {
    /// Bytes of one file.
    pub max_file_bytes: u64,
    /// Downloads one call may start.
    pub per_call: usize,
    /// Bytes the session's folder may hold from downloads, in all.
    pub total_bytes: u64,
}

impl Default for DownloadLimits {
    fn default() -> DownloadLimits {
        DownloadLimits {
            max_file_bytes: 100 << 20,
            per_call: 5,
            total_bytes: 1 << 30,
        }
    }
}

/// Where a download stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DownloadState {
    InProgress,
    Completed,
    /// Cancelled by the page or the browser, or by a limit (the reason).
    Failed(String),
}

/// One download of the session.
#[derive(Clone, Debug)]
pub struct Download {
    guid: String,
    pub url: String,
    /// The file's name in the folder: the page's suggestion made safe, once complete.
    pub name: String,
    pub path: Option<PathBuf>,
    pub received_bytes: u64,
    pub total_bytes: u64,
    pub state: DownloadState,
    /// Whether an answer has listed it as finished.
    reported: bool,
    /// Whether an answer has listed it at all (while it still arrived).
    announced: bool,
}

impl Download {
    /// The file's type, guessed from its name.
    pub fn mime_type(&self) -> String {
        mime_guess::from_path(&self.name)
            .first_or_octet_stream()
            .essence_str()
            .to_string()
    }
}

/// How long the browser has to answer a cancellation.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(2);

/// Whether a frame (by id) is one of the session's pages: in a shared browser every
/// session's connection hears every download, and takes only its own.
pub type OwnsFrame = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// A session's downloads and its folder.
pub struct Downloads {
    folder: PathBuf,
    limits: DownloadLimits,
    entries: Mutex<Vec<Download>>,
    /// The browser contexts whose downloads come here (`None`: the default context): where a
    /// download is cancelled.
    contexts: Mutex<Vec<Option<String>>>,
    /// How many downloads had begun when the running call started.
    call_start: Mutex<usize>,
    changed: tokio::sync::Notify,
}

#[derive(Debug, thiserror::Error)]
pub enum DownloadsError {
    #[error(
        "Cannot create the downloads folder {folder}: {source}. Pass --downloadsDir with a folder this user can write, or leave --experimentalDownloads out."
    )]
    Folder {
        folder: PathBuf,
        source: std::io::Error,
    },
}

impl Downloads {
    /// Downloads into `folder` (created, private to this user, if missing).
    pub fn new(folder: PathBuf, limits: DownloadLimits) -> Result<Downloads, DownloadsError> {
        create_private_folder(&folder).map_err(|source| DownloadsError::Folder {
            folder: folder.clone(),
            source,
        })?;
        Ok(Downloads {
            folder,
            limits,
            entries: Mutex::default(),
            contexts: Mutex::default(),
            call_start: Mutex::default(),
            changed: tokio::sync::Notify::new(),
        })
    }

    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Tells the browser to save the downloads of `context` (the default context when `None`)
    /// into the folder, by guid, and to report their progress.
    pub async fn allow(&self, browser: &Browser, context: Option<&str>) -> Result<(), String> {
        let mut params = json!({
            "behavior": "allowAndName",
            "downloadPath": self.folder,
            "eventsEnabled": true,
        });
        if let Some(context) = context {
            params["browserContextId"] = json!(context);
        }
        browser
            .execute(crate::browser::cdp::cdp(
                "Browser.setDownloadBehavior",
                params,
            ))
            .await
            .map_err(|error| format!("The browser refused to save downloads: {error}"))?;
        let mut contexts = lock(&self.contexts);
        let context = context.map(String::from);
        if !contexts.contains(&context) {
            contexts.push(context);
        }
        Ok(())
    }

    /// Follows the browser's download events until the connection ends.
    pub async fn follow(
        self: Arc<Self>,
        browser: &Browser,
        raw: Arc<crate::browser::RawLink>,
        owns_frame: OwnsFrame,
    ) -> Result<futures::future::BoxFuture<'static, ()>, String> {
        let mut began = browser
            .event_listener::<EventDownloadWillBegin>()
            .await
            .map_err(|error| error.to_string())?;
        let mut progress = browser
            .event_listener::<EventDownloadProgress>()
            .await
            .map_err(|error| error.to_string())?;
        Ok(Box::pin(async move {
            loop {
                let cancel = tokio::select! {
                    Some(event) = began.next() => {
                        if !owns_frame(event.frame_id.inner()) && !self.holds_file(&event.guid) {
                            continue;
                        }
                        self.began(&event)
                    }
                    Some(event) = progress.next() => self.progressed(&event),
                    else => break,
                };
                if let Some((guid, reason)) = cancel {
                    let contexts = lock(&self.contexts).clone();
                    if let Ok(client) = raw.client().await {
                        for context in contexts {
                            let mut params = json!({ "guid": guid });
                            if let Some(context) = context {
                                params["browserContextId"] = json!(context);
                            }
                            let _ = client
                                .call(None, "Browser.cancelDownload", params, CANCEL_TIMEOUT)
                                .await;
                        }
                    }
                    self.failed(&guid, reason);
                }
                self.changed.notify_waiters();
            }
        }))
    }

    /// Whether the browser is writing `guid` into this session's folder (a download from a
    /// frame the session does not know by id, e.g. an iframe's).
    fn holds_file(&self, guid: &str) -> bool {
        self.folder.join(guid).exists() || self.folder.join(format!("{guid}.crdownload")).exists()
    }

    /// Records a download that began; one past the call's count or the session's total is
    /// to be cancelled (the guid and the reason).
    fn began(&self, event: &EventDownloadWillBegin) -> Option<(String, String)> {
        let mut entries = lock(&self.entries);
        if entries.iter().any(|entry| entry.guid == event.guid) {
            return None;
        }
        let start = (*lock(&self.call_start)).min(entries.len());
        let this_call = entries.len() - start;
        let held: u64 = entries.iter().map(|entry| entry.received_bytes).sum();
        entries.push(Download {
            guid: event.guid.clone(),
            url: event.url.clone(),
            name: safe_name(&event.suggested_filename),
            path: None,
            received_bytes: 0,
            total_bytes: 0,
            state: DownloadState::InProgress,
            reported: false,
            announced: false,
        });
        if this_call >= self.limits.per_call {
            return Some((
                event.guid.clone(),
                format!(
                    "cancelled: a call may start at most {} downloads (--maxDownloadsPerCall)",
                    self.limits.per_call
                ),
            ));
        }
        if held >= self.limits.total_bytes {
            return Some((
                event.guid.clone(),
                format!(
                    "cancelled: the session's downloads already hold {} MiB, its limit (--maxDownloadsMib)",
                    self.limits.total_bytes >> 20
                ),
            ));
        }
        None
    }

    /// Records progress; a file past its limit, or past what the session may still hold, is
    /// to be cancelled. A completed file is renamed to its safe name.
    fn progressed(&self, event: &EventDownloadProgress) -> Option<(String, String)> {
        let mut entries = lock(&self.entries);
        let others: u64 = entries
            .iter()
            .filter(|entry| entry.guid != event.guid)
            .map(|entry| entry.received_bytes)
            .sum();
        let entry = entries.iter_mut().find(|entry| entry.guid == event.guid)?;
        if entry.state != DownloadState::InProgress {
            return None;
        }
        entry.received_bytes = event.received_bytes.max(0.0) as u64;
        entry.total_bytes = event.total_bytes.max(0.0) as u64;
        let size = entry.received_bytes.max(entry.total_bytes);
        if size > self.limits.max_file_bytes {
            return Some((
                entry.guid.clone(),
                format!(
                    "cancelled: larger than the {} MiB a file may have (--maxDownloadMib)",
                    self.limits.max_file_bytes >> 20
                ),
            ));
        }
        if others + size > self.limits.total_bytes {
            return Some((
                entry.guid.clone(),
                format!(
                    "cancelled: the session's downloads would pass their {} MiB limit (--maxDownloadsMib)",
                    self.limits.total_bytes >> 20
                ),
            ));
        }
        match event.state {
            DownloadProgressState::InProgress => {}
            DownloadProgressState::Completed => {
                let arrived = self.folder.join(&entry.guid);
                match place(&self.folder, &arrived, &entry.name) {
                    Ok(path) => {
                        entry.name = file_name(&path);
                        entry.path = Some(path);
                        entry.state = DownloadState::Completed;
                    }
                    Err(error) => {
                        entry.state =
                            DownloadState::Failed(format!("the file could not be kept: {error}"));
                    }
                }
            }
            DownloadProgressState::Canceled => {
                entry.state = DownloadState::Failed("cancelled by the page or the browser".into());
            }
        }
        None
    }

    fn failed(&self, guid: &str, reason: String) {
        let mut entries = lock(&self.entries);
        if let Some(entry) = entries.iter_mut().find(|entry| entry.guid == guid) {
            entry.state = DownloadState::Failed(reason);
            entry.received_bytes = 0;
        }
        for leftover in [
            self.folder.join(guid),
            self.folder.join(format!("{guid}.crdownload")),
        ] {
            let _ = std::fs::remove_file(leftover);
        }
    }

    /// A call begins: its downloads are counted from here.
    pub fn begin_call(&self) {
        let begun = lock(&self.entries).len();
        *lock(&self.call_start) = begun;
    }

    /// The downloads to list in an answer: those that finished since they were last listed,
    /// and those still arriving that no answer has announced. Waits up to `wait` for the ones
    /// this call started to finish (a slow one from an earlier call holds no answer up); one
    /// still arriving is listed as such once, and again when it is done.
    pub async fn to_report(&self, wait: Duration) -> Vec<Download> {
        let deadline = tokio::time::Instant::now() + wait;
        let call_start = *lock(&self.call_start);
        loop {
            let changed = self.changed.notified();
            let pending = lock(&self.entries)
                .iter()
                .skip(call_start)
                .any(|entry| entry.state == DownloadState::InProgress);
            if !pending || tokio::time::Instant::now() >= deadline {
                break;
            }
            let _ = tokio::time::timeout_at(deadline, changed).await;
        }
        let mut entries = lock(&self.entries);
        let mut listed = Vec::new();
        for entry in entries.iter_mut().filter(|entry| !entry.reported) {
            let finished = entry.state != DownloadState::InProgress;
            if finished || !entry.announced {
                entry.reported = finished;
                entry.announced = true;
                listed.push(entry.clone());
            }
        }
        listed
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn create_private_folder(folder: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Longest file name kept, in bytes (file systems allow 255).
const MAX_NAME_BYTES: usize = 120;

/// The page's suggested name as a plain file name of this folder: no separators, no control
/// characters, no leading dots (hidden files, `..`), bounded, never empty.
pub fn safe_name(suggested: &str) -> String {
    let cleaned: String = suggested
        .chars()
        .map(|c| match c {
            '/' | '\\' | ':' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    let trimmed = cleaned.trim().trim_start_matches('.').trim();
    let mut name = String::new();
    for c in trimmed.chars() {
        if name.len() + c.len_utf8() > MAX_NAME_BYTES {
            break;
        }
        name.push(c);
    }
    if name.is_empty() {
        "download".to_string()
    } else {
        name
    }
}

/// Moves the arrived file to `name` in `folder`, as `name (2).ext` etc. when taken.
fn place(folder: &Path, arrived: &Path, name: &str) -> std::io::Result<PathBuf> {
    let (stem, extension) = match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => (stem, format!(".{extension}")),
        _ => (name, String::new()),
    };
    for attempt in 1..1000 {
        let candidate = match attempt {
            1 => folder.join(name),
            n => folder.join(format!("{stem} ({n}){extension}")),
        };
        // No overwrite, no race: the name is taken by a hard link, then the guid removed.
        match std::fs::hard_link(arrived, &candidate) {
            Ok(()) => {
                std::fs::remove_file(arrived)?;
                return Ok(candidate);
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
    Err(std::io::Error::other("no free name for the file"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suggested_name_cannot_leave_the_folder_or_hide() {
        assert_eq!(safe_name("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(safe_name("..."), "download");
        assert_eq!(safe_name(".bashrc"), "bashrc");
        assert_eq!(safe_name("a\nb\u{0}c.txt"), "a_b_c.txt");
        assert_eq!(safe_name(""), "download");
        assert_eq!(safe_name("report 2026.csv"), "report 2026.csv");
        assert!(safe_name(&"é".repeat(200)).len() <= MAX_NAME_BYTES);
    }

    #[test]
    fn a_taken_name_gets_a_number_and_nothing_is_overwritten() {
        let folder = tempfile::tempdir().expect("temp dir");
        std::fs::write(folder.path().join("report.csv"), "old").expect("write");
        let arrived = folder.path().join("guid-1");
        std::fs::write(&arrived, "new").expect("write");
        let placed = place(folder.path(), &arrived, "report.csv").expect("placed");
        assert_eq!(file_name(&placed), "report (2).csv");
        assert_eq!(
            std::fs::read_to_string(folder.path().join("report.csv")).expect("old"),
            "old"
        );
        assert_eq!(std::fs::read_to_string(placed).expect("new"), "new");
        assert!(!arrived.exists());
    }

    fn began(guid: &str) -> EventDownloadWillBegin {
        serde_json::from_value(json!({
            "frameId": "F", "guid": guid, "url": "http://127.0.0.1/x", "suggestedFilename": "x.bin"
        }))
        .expect("event")
    }

    fn progress(guid: &str, received: u64, state: &str) -> EventDownloadProgress {
        serde_json::from_value(json!({
            "guid": guid, "totalBytes": received, "receivedBytes": received, "state": state
        }))
        .expect("event")
    }

    #[test]
    fn limits_cancel_past_the_file_size_the_call_count_and_the_total() {
        let folder = tempfile::tempdir().expect("temp dir");
        let limits = DownloadLimits {
            max_file_bytes: 1000,
            per_call: 2,
            total_bytes: 1500,
        };
        let downloads = Downloads::new(folder.path().join("d"), limits).expect("downloads");
        downloads.begin_call();
        assert_eq!(downloads.began(&began("a")), None);
        assert!(
            downloads
                .progressed(&progress("a", 1001, "inProgress"))
                .is_some()
        );
        downloads.failed("a", "too big".into());
        assert_eq!(downloads.began(&began("b")), None);
        let third = downloads
            .began(&began("c"))
            .expect("the third of a call is cancelled");
        assert!(third.1.contains("at most 2 downloads"), "{third:?}");
        downloads.begin_call();
        assert_eq!(downloads.began(&began("d")), None);
        assert_eq!(
            downloads.progressed(&progress("b", 900, "inProgress")),
            None
        );
        let total = downloads
            .progressed(&progress("d", 700, "inProgress"))
            .expect("past the session's total");
        assert!(total.1.contains("--maxDownloadsMib"), "{total:?}");
    }

    #[tokio::test]
    async fn a_slow_download_of_an_earlier_call_holds_no_answer_and_is_listed_twice() {
        let folder = tempfile::tempdir().expect("temp dir");
        let downloads =
            Downloads::new(folder.path().join("d"), DownloadLimits::default()).expect("downloads");
        downloads.begin_call();
        assert_eq!(downloads.began(&began("slow")), None);
        assert_eq!(
            downloads.progressed(&progress("slow", 10, "inProgress")),
            None
        );
        // The call that started it waits for it (here: the whole, short, wait), then says it
        // is still arriving.
        let listed = downloads.to_report(Duration::from_millis(50)).await;
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].state, DownloadState::InProgress);
        // The next call neither waits for it nor lists it again while it arrives.
        downloads.begin_call();
        let started = std::time::Instant::now();
        assert!(
            downloads
                .to_report(Duration::from_secs(10))
                .await
                .is_empty()
        );
        assert!(started.elapsed() < Duration::from_secs(1));
        // Once done, it is listed again, renamed into place.
        std::fs::write(folder.path().join("d").join("slow"), "x").expect("arrived");
        assert_eq!(
            downloads.progressed(&progress("slow", 1, "completed")),
            None
        );
        let listed = downloads.to_report(Duration::from_secs(10)).await;
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].state, DownloadState::Completed);
        assert!(
            downloads
                .to_report(Duration::from_secs(10))
                .await
                .is_empty()
        );
    }
}
