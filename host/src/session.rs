//! One session's browser state: the browser connection, its pages, the selected page, named
//! isolated contexts and the file sandbox. The pipeline is handed this value (behind its
//! FIFO lock), never globals, so serving several tenants is having several sessions.
//!
//! A tenant's session of the HTTP server shares one Chromium with the others: it works in a
//! browser context of its own, creates its pages there, and adopts no target of any other
//! context, so it can neither list nor reach another tenant's pages.

pub mod cut_answers;
mod devtools;
mod downloads;
mod footprint_cap;
mod named;
mod pages;
mod recovery;
pub mod saved;
mod scope;
mod tab_order;
mod unready;
mod watch;
mod workers;

use crate::browser::{BrowserConn, BrowserError, BrowserOptions, McpPage, SharedBrowser, cdp};
use crate::net::TenantNetwork;
use crate::policy::limits::Limits;
use crate::sandbox::Sandbox;
use scope::{BrowserHandle, ContextScope, create_browser_context};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::Duration;
use tokio::sync::{Mutex, OwnedMutexGuard};
use watch::{AbortOnDrop, SessionWatch};
pub use workers::Worker;

/// Page ids come from one process-wide counter, so a stale id fails instead of aliasing a page
/// opened later (or a page of another session).
static NEXT_PAGE_ID: AtomicU32 = AtomicU32::new(1);

/// How [`SessionState::sync_pages_in`] adopts the pages it has not seen.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Adoption {
    /// Each page that can be tracked now gets the next id (popups, tabs opened later).
    AsTheyCome,
    /// A running browser's tabs at attach time: numbered oldest first, so adoption stops at
    /// the first page that cannot be tracked yet and the next round goes on from it.
    InOrder,
}

const CLOSED_SELECTED_PAGE: &str =
    "The selected page has been closed. Call list_pages to see open pages.";

/// How long an attach waits for the CDP client to attach to the running browser's tabs.
const ATTACH_WAIT: Duration = Duration::from_secs(10);
/// How long shutdown waits for a call still holding the session.
const SHUTDOWN_LOCK_WAIT: Duration = Duration::from_secs(5);

/// A session: its state behind one FIFO lock (tokio's mutex queues waiters in order).
#[derive(Clone)]
pub struct Session {
    state: Arc<Mutex<SessionState>>,
    /// A cap on every plugin call of this session (a tenant's quota), over each plugin's own.
    limits: Option<Limits>,
    /// Gating flags over the server's (a tenant's); `None`: the server's flags alone.
    flag_overrides: Option<Arc<serde_json::Map<String, serde_json::Value>>>,
    /// The pages and notes of the session, readable while a call holds the lock.
    watch: Arc<SessionWatch>,
    /// The renderer-memory guard of a tenant's session.
    _memory_guard: Option<Arc<AbortOnDrop>>,
    /// `--experimentalParallelPages`: one lock per page id, taken before the session's.
    lanes: Arc<std::sync::Mutex<HashMap<u32, Arc<Mutex<()>>>>>,
    /// `--maxOutputTokens` for this session (a tenant's `max_output_tokens`), over the server's.
    output_tokens: Option<u32>,
    /// The answers the budget cut, for cursors and `resources/read`; apart from the state's
    /// lock, so reading one never waits for a call.
    cut_answers: Arc<std::sync::Mutex<cut_answers::CutAnswers>>,
}

impl Session {
    /// A session with a browser of its own (stdio, one-shot calls, dedicated tenants).
    pub fn new(options: BrowserOptions, sandbox: Sandbox) -> Session {
        Session::with_state(SessionState::new(options, sandbox, None, None, None))
    }

    /// A tenant's session in one browser context of `shared`, with at most `max_pages` pages.
    pub fn in_shared_browser(
        shared: Arc<SharedBrowser>,
        sandbox: Sandbox,
        max_pages: usize,
        network: Option<TenantNetwork>,
    ) -> Session {
        let options = shared.options().clone();
        let scope = ContextScope {
            shared,
            context: None,
        };
        Session::with_state(SessionState::new(
            options,
            sandbox,
            Some(scope),
            Some(max_pages),
            network,
        ))
    }

    /// A session with its own browser and at most `max_pages` pages (a dedicated tenant).
    pub fn dedicated(
        options: BrowserOptions,
        sandbox: Sandbox,
        max_pages: usize,
        network: Option<TenantNetwork>,
    ) -> Session {
        Session::with_state(SessionState::new(
            options,
            sandbox,
            None,
            Some(max_pages),
            network,
        ))
    }

    fn with_state(state: SessionState) -> Session {
        Session {
            watch: state.watch.clone(),
            state: Arc::new(Mutex::new(state)),
            limits: None,
            flag_overrides: None,
            _memory_guard: None,
            lanes: Arc::default(),
            output_tokens: None,
            cut_answers: Arc::default(),
        }
    }

    /// Holds this session's answers to `tokens` (a tenant's `max_output_tokens`).
    pub fn with_output_tokens(mut self, tokens: Option<u32>) -> Session {
        self.output_tokens = tokens;
        self
    }

    pub fn output_tokens(&self) -> Option<u32> {
        self.output_tokens
    }

    /// The answers the output budget cut in this session.
    pub fn cut_answers(&self) -> std::sync::MutexGuard<'_, cut_answers::CutAnswers> {
        self.cut_answers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The lock of page `id`'s calls (`--experimentalParallelPages`). Lanes nobody holds are
    /// forgotten as new ones are made, so closed pages leave none behind.
    pub fn page_lane(&self, id: u32) -> Arc<Mutex<()>> {
        let mut lanes = self
            .lanes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !lanes.contains_key(&id) {
            lanes.retain(|_, lane| Arc::strong_count(lane) > 1);
        }
        lanes.entry(id).or_default().clone()
    }

    /// Closes any page of this session that holds more than `bytes` (a tenant's
    /// `renderer_memory_mib`) in its contexts, or that cannot be measured, with a note; ends
    /// any renderer of the browser past the ceiling that cap sets. Needs a tokio runtime.
    pub fn with_memory_cap(mut self, bytes: u64) -> Session {
        let shared_ceiling = self.state.try_lock().ok().and_then(|state| {
            state
                .scope
                .as_ref()
                .map(|scope| scope.shared.renderer_ceiling())
        });
        let ceiling = shared_ceiling.unwrap_or_default();
        ceiling.raise(bytes);
        let state = Arc::downgrade(&self.state);
        let call_in_flight: watch::CallInFlight = Arc::new(move || {
            state
                .upgrade()
                .is_some_and(|state| state.try_lock().is_err())
        });
        let state = Arc::downgrade(&self.state);
        let reattach: watch::Reattach = Arc::new(move || {
            let state = state.clone();
            Box::pin(async move {
                let Some(state) = state.upgrade() else {
                    return;
                };
                // A call holding the session reconnects it itself.
                let Ok(mut state) = state.try_lock() else {
                    return;
                };
                state.reattach_if_reconnected().await;
            })
        });
        let task = tokio::spawn(self.watch.clone().guard_memory(
            bytes,
            ceiling,
            call_in_flight,
            reattach,
        ));
        self._memory_guard = Some(Arc::new(AbortOnDrop(task)));
        self
    }

    /// Caps what this session's loaded heap snapshots may hold (a tenant's share of the
    /// server's heap snapshot budget).
    pub fn with_heap_budget(self, bytes: usize) -> Session {
        if let Ok(mut state) = self.state.try_lock() {
            state.heap.set_budget(bytes);
        }
        self
    }

    /// Tells the session's next answer something that happened outside its calls.
    pub fn note(&self, note: String) {
        self.watch.note(note);
    }

    /// What happened to the session outside its calls (pages closed by quotas), once.
    pub fn take_notes(&self) -> Vec<String> {
        self.watch.take_notes()
    }

    /// Stops the scripts running in the session's pages (in all their frames and workers),
    /// without waiting for its lock: a call stopped by its budget leaves its script spinning
    /// otherwise. A page where a worker was started since `since` (the call's start) is
    /// closed, with a note.
    pub async fn terminate_scripts(&self, since: std::time::Instant) -> usize {
        self.watch.terminate_scripts(since).await
    }

    /// Adopts the pages the session's pages opened themselves (popups) and closes those past
    /// `max_pages`, with a note. Skipped when a call holds the lock.
    pub async fn settle_pages(&self) {
        if let Ok(mut state) = self.state.try_lock()
            && state.browser.is_some()
        {
            state.sync_pages().await;
        }
    }

    /// The number of open pages, when no call holds the lock right now.
    pub fn try_page_count(&self) -> Option<usize> {
        self.state.try_lock().ok().map(|state| state.pages.len())
    }

    /// Flags of this session that override the server's when deciding which tools are enabled
    /// (a tenant's `flags`): `categoryX`, `experimentalX`, `memoryDebugging`.
    pub fn with_flag_overrides(
        mut self,
        flags: serde_json::Map<String, serde_json::Value>,
    ) -> Session {
        self.flag_overrides = (!flags.is_empty()).then(|| Arc::new(flags));
        self
    }

    pub fn flag_overrides(&self) -> Option<&serde_json::Map<String, serde_json::Value>> {
        self.flag_overrides.as_deref()
    }

    /// Caps every plugin call of this session at `limits` (limit by limit, the tighter wins):
    /// a tenant's quota.
    pub fn with_limits(mut self, limits: Limits) -> Session {
        self.limits = Some(limits);
        self
    }

    pub fn limits(&self) -> Option<Limits> {
        self.limits
    }

    /// The session's state if no call holds it now.
    pub fn try_lock(&self) -> Option<OwnedMutexGuard<SessionState>> {
        self.state.clone().try_lock_owned().ok()
    }

    /// Waits for this session's turn. The guard is owned so it can travel with the call (into
    /// the wasm store) and is released on every path when dropped.
    pub async fn lock(&self) -> OwnedMutexGuard<SessionState> {
        self.state.clone().lock_owned().await
    }

    /// Launches this session's own browser and opens its first page now, holding the session
    /// meanwhile, so the first call that needs them waits for this start instead of making
    /// its own. Nothing happens when the session attaches to a running browser, shares one,
    /// or already has one. A failed start is forgotten: the first call then launches again
    /// and reports its own error. Cancelling this (dropping the future) kills the browser it
    /// was starting.
    pub async fn launch_in_background(&self) {
        let mut state = self.state.lock().await;
        let options = &state.options;
        if state.scope.is_some()
            || state.browser.is_some()
            || options.browser_url.is_some()
            || options.ws_endpoint.is_some()
            || options.auto_connect
        {
            return;
        }
        if let Err(error) = state.ensure_browser().await {
            tracing::info!(%error, "background browser start failed");
        }
    }

    /// Closes a browser we launched (used on shutdown); in a shared browser, disposes of the
    /// session's browser contexts (its pages, cookies, storage and cache) instead.
    /// A call still under way gets [`SHUTDOWN_LOCK_WAIT`] to finish; past that the server
    /// exits without it, and a browser it launched closes with its pipe.
    pub async fn shutdown(&self, budget: Duration) {
        let Ok(mut state) = tokio::time::timeout(SHUTDOWN_LOCK_WAIT, self.state.lock()).await
        else {
            tracing::warn!(
                "a call still held the session {} s after shutdown began; exiting without it",
                SHUTDOWN_LOCK_WAIT.as_secs()
            );
            return;
        };
        state.close_browser(budget).await;
    }
}

/// One row of `## Pages`.
pub struct PageEntry {
    pub id: u32,
    pub title: String,
    pub url: String,
    pub selected: bool,
    pub isolated_context: Option<String>,
}

pub struct SessionState {
    options: BrowserOptions,
    browser: Option<BrowserHandle>,
    scope: Option<ContextScope>,
    max_pages: Option<usize>,
    pages: BTreeMap<u32, McpPage>,
    selected: Option<u32>,
    /// Named isolated browser contexts: name -> browserContextId.
    contexts: HashMap<String, String>,
    pub sandbox: Sandbox,
    /// Heap snapshots loaded by the heap analysis tools, until closed.
    pub heap: crate::memory_analysis::HeapSnapshots,
    had_browser: bool,
    reconnected: bool,
    /// A tenant's egress proxy and URL policy; `None` for the single user of stdio.
    network: Option<TenantNetwork>,
    watch: Arc<SessionWatch>,
    /// Extension service workers seen so far, with their ids.
    workers: workers::Workers,
    /// Targets this session closed that the browser may still list for a moment: never
    /// adopted again (adopting a tab in its teardown waits out a command it never answers).
    closing: HashSet<String>,
    /// Pages the browser lists that could not be tracked, not tried again for a while.
    unready: unready::Unready,
    /// `--experimentalDownloads`: the session's folder and its downloads.
    downloads: Option<Arc<crate::browser::features::downloads::Downloads>>,
    /// Follows the download events of the current connection.
    downloads_followed: Option<AbortOnDrop>,
    /// `--experimentalRecovery`: where each page was after the last call.
    remembered: BTreeMap<u32, recovery::Remembered>,
    /// What the last relaunch reopened, for the next answer.
    recovery_note: Option<String>,
    /// `serve --discard-idle-secs`: the pages closed while the tenant was idle, and after how
    /// long, reopened by its next call.
    discarded: Option<(recovery::Lost, Duration)>,
    /// `--sessionStore`: the session's named sessions.
    named: Option<named::NamedSessions>,
}

impl SessionState {
    fn new(
        options: BrowserOptions,
        sandbox: Sandbox,
        scope: Option<ContextScope>,
        max_pages: Option<usize>,
        network: Option<TenantNetwork>,
    ) -> SessionState {
        SessionState {
            options,
            browser: None,
            scope,
            max_pages,
            pages: BTreeMap::new(),
            selected: None,
            contexts: HashMap::new(),
            sandbox,
            heap: Default::default(),
            had_browser: false,
            reconnected: false,
            network,
            watch: Arc::new(SessionWatch::default()),
            workers: Default::default(),
            closing: HashSet::new(),
            unready: Default::default(),
            downloads: None,
            downloads_followed: None,
            remembered: BTreeMap::new(),
            recovery_note: None,
            discarded: None,
            named: None,
        }
    }

    /// Launches or connects on first use, and again after the browser died; then reopens the
    /// pages an idle tenant's were closed for (`discard_pages`).
    pub async fn ensure_browser(&mut self) -> Result<(), BrowserError> {
        // Boxed: both are large futures, and a debug build's worker stack holds every caller's.
        Box::pin(self.ensure_browser_running()).await?;
        if let Some((discarded, idle)) = self.discarded.take() {
            let why = format!(
                "This tenant's pages were closed after {} s without a call, to give their memory back (its cookies and storage were kept)",
                idle.as_secs()
            );
            Box::pin(self.reopen(discarded, &why)).await;
        }
        Ok(())
    }

    async fn ensure_browser_running(&mut self) -> Result<(), BrowserError> {
        if self
            .browser
            .as_ref()
            .is_some_and(|browser| browser.connection().is_alive())
        {
            return Ok(());
        }
        if let Some(BrowserHandle::Owned(dead)) = self.browser.take() {
            dead.shutdown(Duration::from_millis(200)).await;
        }
        let relaunch = self.had_browser;
        let lost = self.lost_pages();
        self.pages.clear();
        self.selected = None;
        let proxy_server = self.proxy_server().map(String::from);
        let mut kept_contexts = false;
        let browser = match &mut self.scope {
            Some(scope) => {
                let connection = scope.shared.get().await?;
                // Contexts that survived a reconnection are taken back, with their pages
                // (see `SharedBrowser`): none is left running outside this tenant.
                let shared = scope.shared.clone();
                self.contexts.retain(|_, id| {
                    let survived = shared.survived(id);
                    if !survived {
                        shared.disown_context(id);
                    }
                    survived
                });
                match scope.context.take() {
                    Some(context) if shared.survived(&context) => {
                        kept_contexts = true;
                        scope.context = Some(context);
                    }
                    gone => {
                        if let Some(gone) = gone {
                            shared.disown_context(&gone);
                        }
                        let context =
                            create_browser_context(&connection.browser, proxy_server.as_deref())
                                .await
                                .map_err(BrowserError::Context)?;
                        shared.own_context(&context);
                        scope.context = Some(context);
                    }
                }
                BrowserHandle::Shared(connection)
            }
            None => {
                self.contexts.clear();
                BrowserHandle::Owned(Box::new(BrowserConn::open(&self.options).await?))
            }
        };
        self.browser = Some(browser);
        if self.had_browser {
            self.reconnected = true;
        }
        self.had_browser = true;
        self.follow_downloads()
            .await
            .map_err(BrowserError::Downloads)?;
        self.discover_initial_pages(kept_contexts).await;
        // A context a reconnection kept still holds its cookies. Restored before the lost
        // pages reopen, so they load signed in.
        let restored = match kept_contexts {
            true => None,
            false => self.restore_after_launch(relaunch).await,
        };
        // Pages a reconnection kept are back already: none is opened twice.
        if let Some(lost) = lost.filter(|_| !kept_contexts) {
            self.reopen(lost, recovery::RELAUNCHED).await;
        }
        if let Some(restored) = restored {
            self.add_to_recovery_note(&restored);
        }
        Ok(())
    }

    /// A tenant's session whose shared browser was reconnected by another session: takes its
    /// contexts back now, not at its next call, so their pages are under its footprint watch
    /// meanwhile. Nothing when the session has no browser yet or its own is alive.
    pub async fn reattach_if_reconnected(&mut self) {
        let Some(scope) = &self.scope else {
            return;
        };
        let stale = self
            .browser
            .as_ref()
            .is_some_and(|browser| !browser.connection().is_alive());
        if stale
            && scope.shared.is_connected()
            && let Err(error) = self.ensure_browser().await
        {
            tracing::warn!(%error, "could not take the session's contexts back after a reconnection");
        }
    }

    /// The browser and tool options this session was made with.
    pub fn browser_options(&self) -> &BrowserOptions {
        &self.options
    }

    /// The browser's DevTools WebSocket address, for tools that drive it from another
    /// process (Lighthouse).
    pub fn browser_ws_endpoint(&self) -> Option<String> {
        self.browser
            .as_ref()
            .map(|browser| browser.connection().browser.websocket_address().clone())
    }

    /// The DevTools pipe of a browser this server launched (`None` when attached).
    pub fn browser_pipe(&self) -> Option<std::sync::Arc<crate::browser::pipe::PipeLink>> {
        self.browser
            .as_ref()
            .and_then(|browser| browser.connection().pipe.clone())
    }

    /// Stops the scripts running in this session's pages; see [`Session::terminate_scripts`].
    pub async fn terminate_scripts(&self, since: std::time::Instant) -> usize {
        self.watch.terminate_scripts(since).await
    }

    fn proxy_server(&self) -> Option<&str> {
        self.network
            .as_ref()
            .map(|network| network.proxy_server.as_str())
    }

    /// The tenant's URL policy; `None` for the single user of stdio.
    pub fn url_policy(&self) -> Option<crate::policy::tenant_urls::UrlPolicy> {
        self.network.as_ref().map(|network| network.urls)
    }

    /// Where tools may navigate.
    pub fn navigation_policy(&self) -> crate::policy::navigation::NavigationPolicy {
        self.options.navigation
    }

    pub fn screenshot_flags(&self) -> crate::browser::ScreenshotFlags {
        self.options.screenshot.clone()
    }

    /// Whether the browser was restarted since the last call (shown once).
    pub fn take_reconnected(&mut self) -> bool {
        std::mem::take(&mut self.reconnected)
    }

    fn browser(&self) -> Result<&chromiumoxide::Browser, String> {
        self.browser
            .as_ref()
            .map(|handle| &handle.connection().browser)
            .ok_or_else(|| "The browser is not running.".to_string())
    }

    /// The browser's thin CDP connection (see `browser::cdp::raw`).
    fn raw_link(&self) -> Option<Arc<crate::browser::RawLink>> {
        self.browser
            .as_ref()
            .map(|handle| handle.connection().raw.clone())
    }

    /// Drops the browser: closes one we own, disposes of our contexts in a shared one.
    async fn close_browser(&mut self, budget: Duration) {
        self.pages.clear();
        self.selected = None;
        self.publish_pages();
        let contexts: Vec<String> = self
            .contexts
            .drain()
            .map(|(_, id)| id)
            .chain(self.scope.as_mut().and_then(|scope| scope.context.take()))
            .collect();
        if let Some(scope) = &self.scope {
            for context in &contexts {
                scope.shared.disown_context(context);
            }
        }
        match self.browser.take() {
            Some(BrowserHandle::Owned(connection)) => connection.shutdown(budget).await,
            Some(BrowserHandle::Shared(connection)) => {
                for context in contexts {
                    let dispose = connection.browser.execute(cdp(
                        "Target.disposeBrowserContext",
                        serde_json::json!({ "browserContextId": context }),
                    ));
                    if let Err(error) = tokio::time::timeout(budget, dispose)
                        .await
                        .map_err(|_| "timed out".to_string())
                        .and_then(|answer| answer.map_err(|error| error.to_string()))
                    {
                        tracing::warn!(%error, %context, "could not dispose of a browser context");
                    }
                }
            }
            None => {}
        }
    }

    /// The browser contexts whose targets this session may adopt; `None` when it may adopt
    /// every target (a browser of its own).
    fn own_contexts(&self) -> Option<Vec<String>> {
        let scope = self.scope.as_ref()?;
        Some(
            scope
                .context
                .iter()
                .chain(self.contexts.values())
                .cloned()
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex as StdMutex;

    fn session() -> Session {
        // A folder of its own, not the temp dir: other tests protect folders inside the temp
        // dir (process-wide), and a root may not hold a protected folder.
        let root = tempfile::tempdir().expect("temp dir").keep();
        let sandbox = match Sandbox::new([root]) {
            Ok(sandbox) => sandbox,
            Err(error) => panic!("sandbox: {error}"),
        };
        Session::new(BrowserOptions::default(), sandbox)
    }

    #[tokio::test]
    async fn calls_take_the_lock_in_arrival_order() {
        let session = session();
        let order = Arc::new(StdMutex::new(Vec::new()));
        let first = session.lock().await;
        let mut waiters = Vec::new();
        for index in 0..5 {
            let session = session.clone();
            let order = order.clone();
            waiters.push(tokio::spawn(async move {
                let _guard = session.lock().await;
                order.lock().map(|mut order| order.push(index)).ok();
            }));
            // Let each waiter queue before the next one arrives.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop(first);
        for waiter in waiters {
            waiter.await.ok();
        }
        let order = order.lock().map(|order| order.clone()).unwrap_or_default();
        assert_eq!(order, vec![0, 1, 2, 3, 4]);
    }

    #[tokio::test]
    async fn a_cancelled_call_releases_the_lock() {
        let session = session();
        let holder = session.clone();
        let call = tokio::spawn(async move {
            let _guard = holder.lock().await;
            std::future::pending::<()>().await;
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        call.abort();
        let next = tokio::time::timeout(Duration::from_secs(1), session.lock()).await;
        assert!(
            next.is_ok(),
            "the lock must be free once the call is dropped"
        );
    }
}
