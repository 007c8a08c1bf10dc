//! What a tenant's session is watched for outside its lock (a call may hold the lock for its
//! whole budget): its pages, so a call stopped by its budget has every script it started
//! stopped, and what each page holds, so a page past the tenant's cap is closed. Both go
//! through every execution context a page has (its cross-process iframes and its workers,
//! see `browser::renderer_memory`), and the browser's renderer processes are held to a
//! ceiling the OS measures (`browser::renderer_processes`). What happened is kept as notes
//! for the tenant's next answer.

use crate::browser::cdp::renderer_processes::RendererCeiling;
use crate::browser::features::renderer_memory::{self, MAX_CONTEXTS};
use crate::browser::{RawClient, RawLink};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often pages are measured.
const MEMORY_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// How long after a call is stopped the workers it created may still start.
const THREAD_START_GRACE: Duration = Duration::from_millis(1000);
/// How long one context has to answer a measurement or a termination.
const PAGE_COMMAND_TIMEOUT: Duration = Duration::from_secs(2);

/// Whether a call holds the session right now: a call may keep its page's thread busy for
/// its whole budget, so a page that does not answer then is not held against it.
pub type CallInFlight = Arc<dyn Fn() -> bool + Send + Sync>;

/// The session's pages as of their last change, and how to reach them.
#[derive(Default, Clone)]
pub struct Watched {
    /// (page id, page).
    pub pages: Vec<(u32, chromiumoxide::Page)>,
    /// Our own connection to the browser.
    pub raw: Option<Arc<RawLink>>,
    /// Whether the browser's renderers are processes of this machine (a browser we launched).
    pub local_renderers: bool,
}

#[derive(Default)]
pub struct SessionWatch {
    watched: Mutex<Watched>,
    notes: Mutex<Vec<String>>,
}

impl SessionWatch {
    pub fn publish(&self, watched: Watched) {
        if let Ok(mut published) = self.watched.lock() {
            *published = watched;
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

    /// The pages and our connection to their browser, when there is one.
    async fn reach(&self) -> Option<(Watched, Arc<RawClient>)> {
        let watched = self.watched.lock().ok()?.clone();
        let client = watched.raw.as_ref()?.client().await.ok()?;
        Some((watched, client))
    }

    /// Stops the script running in every context of every page of the session; a page in
    /// which a worker or worklet was started since `since` (the stopped call's start) is
    /// closed, since stopping a script does not stop the threads it started. A worker the
    /// call created starts once the page's thread is free, so pages are looked at again
    /// after [`THREAD_START_GRACE`]. The number of contexts that answered.
    pub async fn terminate_scripts(&self, since: Instant) -> usize {
        let Some((watched, client)) = self.reach().await else {
            return 0;
        };
        let mut terminated = 0;
        for (_, page) in &watched.pages {
            let target = page.target_id().as_ref();
            if let Ok(contexts) =
                renderer_memory::contexts(&client, target, PAGE_COMMAND_TIMEOUT).await
            {
                terminated +=
                    renderer_memory::terminate(&client, &contexts, PAGE_COMMAND_TIMEOUT).await;
            }
        }
        tokio::time::sleep(THREAD_START_GRACE).await;
        for (id, page) in &watched.pages {
            let target = page.target_id().as_ref();
            let Ok(contexts) =
                renderer_memory::contexts(&client, target, PAGE_COMMAND_TIMEOUT).await
            else {
                continue;
            };
            let started = contexts
                .iter()
                .filter(|context| context.is_thread())
                .filter(|context| context.attached.is_some_and(|at| at >= since))
                .count();
            if started > 0 {
                let reason = format!(
                    "the call stopped by its budget started {started} worker{} in it, which stopping its script does not stop",
                    if started == 1 { "" } else { "s" }
                );
                self.close(*id, page, &reason).await;
            }
        }
        terminated
    }

    /// Closes, with a note, every page over `cap` bytes and every page that cannot be
    /// measured; ends every renderer process over `ceiling`; until the task is aborted.
    pub async fn guard_memory(
        self: Arc<Self>,
        cap: u64,
        ceiling: Arc<RendererCeiling>,
        call_in_flight: CallInFlight,
    ) {
        loop {
            tokio::time::sleep(MEMORY_POLL_INTERVAL).await;
            let Some((watched, client)) = self.reach().await else {
                continue;
            };
            if watched.local_renderers {
                ceiling.enforce(&client, PAGE_COMMAND_TIMEOUT).await;
            }
            for (id, page) in &watched.pages {
                let verdict = over_cap(&client, page, cap, &ceiling, &call_in_flight).await;
                if let Some(reason) = verdict {
                    self.close(*id, page, &reason).await;
                }
            }
        }
    }

    /// Closes a page, its scripts stopped first (a page spinning in a loop would not get to
    /// unload), from the browser's side.
    async fn close(&self, id: u32, page: &chromiumoxide::Page, reason: &str) {
        let target = page.target_id().as_ref();
        let mut closed = false;
        if let Some((_, client)) = self.reach().await {
            if let Ok(contexts) =
                renderer_memory::contexts(&client, target, PAGE_COMMAND_TIMEOUT).await
            {
                renderer_memory::terminate(&client, &contexts, PAGE_COMMAND_TIMEOUT).await;
            }
            let params = serde_json::json!({ "targetId": target });
            closed = client
                .call(None, "Target.closeTarget", params, PAGE_COMMAND_TIMEOUT)
                .await
                .and_then(|reply| reply.result())
                .is_ok();
        }
        if !closed {
            let answer = tokio::time::timeout(PAGE_COMMAND_TIMEOUT, page.clone().close()).await;
            closed = matches!(answer, Ok(Ok(())));
        }
        let closing = if closed { "" } else { " (or is closing)" };
        self.note(format!("Page {id} was closed{closing}: {reason}."));
    }
}

/// Why a page must be closed, if it must.
async fn over_cap(
    client: &RawClient,
    page: &chromiumoxide::Page,
    cap: u64,
    ceiling: &RendererCeiling,
    call_in_flight: &CallInFlight,
) -> Option<String> {
    let quota = format!("this tenant's renderer_memory_mib of {} MiB", cap >> 20);
    let target = page.target_id().as_ref();
    let contexts = renderer_memory::contexts(client, target, PAGE_COMMAND_TIMEOUT)
        .await
        .ok()?;
    if contexts.len() > MAX_CONTEXTS {
        return Some(format!(
            "it started more than {MAX_CONTEXTS} workers and frames, more than can be measured under {quota}"
        ));
    }
    let holding = renderer_memory::measure(client, &contexts, PAGE_COMMAND_TIMEOUT).await;
    // A renderer ended under a call shows as crashed, or (once the call answered the crash and
    // the browser dropped the page's session) as a page that no longer answers.
    let ended_silent =
        ceiling.recently_ended().is_some() && holding.silent.iter().any(|kind| kind == "page");
    if holding.crashed || ended_silent {
        return Some(match (ceiling.recently_ended(), ceiling.bytes()) {
            (Some(held), Some(limit)) => format!(
                "its renderer process held {} MiB, over the {} MiB a renderer may hold under {quota}, and was ended",
                held >> 20,
                limit >> 20
            ),
            _ => "its renderer process crashed".to_string(),
        });
    }
    if holding.bytes > cap {
        return Some(format!(
            "its JavaScript heap and buffers reached {} MiB, over {quota}",
            holding.bytes >> 20
        ));
    }
    // A call may keep the page's own threads busy; a worker it does not run in.
    let excused = call_in_flight();
    let silent = holding
        .silent
        .iter()
        .find(|kind| !excused || !matches!(kind.as_str(), "page" | "iframe"))?;
    Some(format!(
        "its {silent} did not answer a memory measurement within {} s, and what cannot be measured counts as over {quota}",
        PAGE_COMMAND_TIMEOUT.as_secs()
    ))
}

/// Aborts a task when the last holder is gone.
pub struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
