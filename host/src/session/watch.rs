//! What a tenant's session is watched for outside its lock (a call may hold the lock for its
//! whole budget): its pages, so a call stopped by its budget has every script it started
//! stopped (through every execution context a page has, see `browser::renderer_memory`),
//! and its footprint, everything its browser contexts hold (`browser::footprint`), so what
//! takes it past the tenant's cap is closed and workers busy outside its calls are stopped
//! (`footprint_cap`); every renderer process of the browser is also held to a ceiling the
//! OS measures (`browser::renderer_processes`). What happened is kept as notes for the
//! tenant's next answer.

use super::footprint_cap::{self, Limits, Quiet, Verdict};
use crate::browser::cdp::renderer_processes::{self, RendererCeiling};
use crate::browser::features::footprint;
use crate::browser::features::renderer_memory;
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

/// Takes the session's browser contexts back when another session reconnected the shared
/// browser, so their pages are watched again before the tenant's next call.
pub type Reattach =
    Arc<dyn Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> + Send + Sync>;

/// The session's pages as of their last change, and how to reach them.
#[derive(Default, Clone)]
pub struct Watched {
    /// (page id, page).
    pub pages: Vec<(u32, chromiumoxide::Page)>,
    /// Our own connection to the browser.
    pub raw: Option<Arc<RawLink>>,
    /// Whether the browser's renderers are processes of this machine (a browser we launched).
    pub local_renderers: bool,
    /// The session's browser contexts in a shared browser; `None`: the browser is its own.
    pub contexts: Option<Vec<String>>,
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

    /// Whether one of the session's pages is the target `id` (a page's main frame has the
    /// target's id).
    pub fn has_page_target(&self, id: &str) -> bool {
        self.watched.lock().is_ok_and(|watched| {
            watched
                .pages
                .iter()
                .any(|(_, page)| page.target_id().as_ref() == id)
        })
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

    /// Holds the session's footprint (every target of its browser contexts and the renderer
    /// processes serving them) to `cap` bytes, and stops its workers that keep a core busy
    /// outside its calls (`footprint_cap`), with a note each; ends every renderer process of
    /// the browser over `ceiling`; until the task is aborted.
    pub async fn guard_memory(
        self: Arc<Self>,
        cap: u64,
        ceiling: Arc<RendererCeiling>,
        call_in_flight: CallInFlight,
        reattach: Reattach,
    ) {
        let mut quiet = Quiet::default();
        let mut known = footprint::Known::default();
        loop {
            tokio::time::sleep(MEMORY_POLL_INTERVAL).await;
            reattach().await;
            let Some((watched, client)) = self.reach().await else {
                continue;
            };
            if watched.local_renderers {
                ceiling.enforce(&client, PAGE_COMMAND_TIMEOUT).await;
            }
            let pages: Vec<(u32, String)> = watched
                .pages
                .iter()
                .map(|(id, page)| (*id, page.target_id().as_ref().to_string()))
                .collect();
            let scope = footprint::Scope {
                pages: &pages,
                contexts: watched.contexts.as_deref(),
                local_renderers: watched.local_renderers,
            };
            let in_call_before = call_in_flight();
            let measured =
                footprint::measure(&client, &scope, &mut known, PAGE_COMMAND_TIMEOUT).await;
            let limits = Limits {
                cap,
                ended: ceiling.recently_ended().map(|held| (held, ceiling.bytes())),
                in_call: in_call_before || call_in_flight(),
            };
            let mut verdicts = footprint_cap::verdicts(&measured, &limits);
            verdicts.extend(quiet.observe(&measured, limits.in_call, Instant::now()));
            for verdict in verdicts {
                self.carry_out(verdict, &watched, &client).await;
            }
        }
    }

    /// Closes what a verdict names, or ends its process, with a note.
    async fn carry_out(&self, verdict: Verdict, watched: &Watched, client: &RawClient) {
        let page = |id: u32| watched.pages.iter().find(|(known, _)| *known == id);
        match verdict {
            Verdict::ClosePage { id, reason } => {
                if let Some((id, page)) = page(id) {
                    self.close(*id, page, &reason).await;
                }
            }
            Verdict::CloseWorker {
                target_id,
                what,
                reason,
            } => {
                let params = serde_json::json!({ "targetId": target_id });
                let closed = client
                    .call(None, "Target.closeTarget", params, PAGE_COMMAND_TIMEOUT)
                    .await
                    .and_then(|reply| reply.result())
                    .is_ok();
                let closing = if closed { "" } else { " (or is closing)" };
                self.note(format!("{what} was closed{closing}: {reason}."));
            }
            Verdict::EndProcess { pid, pages, reason } => {
                let ended = renderer_processes::end(pid);
                tracing::warn!(pid, ended, %reason, "ended a renderer over its tenant's footprint");
                for id in &pages {
                    if let Some((id, page)) = page(*id) {
                        self.close(*id, page, &reason).await;
                    }
                }
                if pages.is_empty() {
                    self.note(format!(
                        "A renderer process of this session's workers was ended: {reason}."
                    ));
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

/// Aborts a task when the last holder is gone.
pub struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
