//! What a tenant's session is watched for outside its lock (a call may hold the lock for its
//! whole budget): the pages it has, so a call stopped by its budget can have the script it
//! started terminated, and each page's JavaScript heap, so a page past the tenant's cap is
//! closed. What happened is kept as notes for the tenant's next answer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often page heaps are measured.
const MEMORY_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// How long one page has to answer a measurement or a termination.
const PAGE_COMMAND_TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Default)]
pub struct SessionWatch {
    /// The session's pages, as of its last change: (page id, page).
    pages: Mutex<Vec<(u32, chromiumoxide::Page)>>,
    notes: Mutex<Vec<String>>,
}

impl SessionWatch {
    pub fn publish(&self, pages: Vec<(u32, chromiumoxide::Page)>) {
        if let Ok(mut published) = self.pages.lock() {
            *published = pages;
        }
    }

    pub fn note(&self, note: String) {
        tracing::info!(%note, "session note");
        if let Ok(mut notes) = self.notes.lock()
            && !notes.contains(&note)
        {
            notes.push(note);
        }
    }

    pub fn take_notes(&self) -> Vec<String> {
        self.notes
            .lock()
            .map(|mut notes| std::mem::take(&mut *notes))
            .unwrap_or_default()
    }

    fn pages(&self) -> Vec<(u32, chromiumoxide::Page)> {
        self.pages
            .lock()
            .map(|pages| pages.clone())
            .unwrap_or_default()
    }

    /// Stops the JavaScript running in every page of the session (`Runtime.terminateExecution`
    /// interrupts even a page spinning in a loop); the number of pages that answered.
    pub async fn terminate_scripts(&self) -> usize {
        let mut terminated = 0;
        for (_, page) in self.pages() {
            let command = crate::browser::cdp("Runtime.terminateExecution", serde_json::json!({}));
            if let Ok(Ok(_)) =
                tokio::time::timeout(PAGE_COMMAND_TIMEOUT, page.execute(command)).await
            {
                terminated += 1;
            }
        }
        terminated
    }

    /// Closes, with a note, every page whose JavaScript heap is over `cap` bytes; until the
    /// task is aborted.
    pub async fn guard_memory(self: Arc<Self>, cap: u64) {
        loop {
            tokio::time::sleep(MEMORY_POLL_INTERVAL).await;
            for (id, page) in self.pages() {
                let command = crate::browser::cdp("Runtime.getHeapUsage", serde_json::json!({}));
                let Ok(Ok(answer)) =
                    tokio::time::timeout(PAGE_COMMAND_TIMEOUT, page.execute(command)).await
                else {
                    continue;
                };
                let used = answer.result["usedSize"].as_f64().unwrap_or(0.0) as u64;
                if used <= cap {
                    continue;
                }
                let _terminated = tokio::time::timeout(
                    PAGE_COMMAND_TIMEOUT,
                    page.execute(crate::browser::cdp(
                        "Runtime.terminateExecution",
                        serde_json::json!({}),
                    )),
                )
                .await;
                let closed = tokio::time::timeout(PAGE_COMMAND_TIMEOUT, page.clone().close()).await;
                self.note(format!(
                    "Page {id} was closed{}: its JavaScript heap reached {} MiB, over this tenant's renderer_memory_mib of {} MiB.",
                    if matches!(closed, Ok(Ok(()))) { "" } else { " (or is closing)" },
                    used >> 20,
                    cap >> 20
                ));
            }
        }
    }
}

/// Aborts a task when the last holder is gone.
pub struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
