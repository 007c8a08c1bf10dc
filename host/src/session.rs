//! One session's browser state: the browser connection, its pages, the selected page, named
//! isolated contexts and the file sandbox. The pipeline is handed this value (behind its
//! FIFO lock), never globals, so serving several tenants is having several sessions.
//!
//! A tenant's session of the HTTP server shares one Chromium with the others: it works in a
//! browser context of its own, creates its pages there, and adopts no target of any other
//! context, so it can neither list nor reach another tenant's pages.

mod scope;
mod tab_order;
mod watch;
mod workers;

use crate::browser::{BrowserConn, BrowserError, BrowserOptions, McpPage, SharedBrowser, cdp};
use crate::net::TenantNetwork;
use crate::policy::limits::Limits;
use crate::sandbox::Sandbox;
use scope::{BrowserHandle, ContextScope, TargetInfo, adoptable, create_browser_context};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio::sync::{Mutex, OwnedMutexGuard};
use watch::{AbortOnDrop, SessionWatch, Watched};
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
        }
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
        let task = tokio::spawn(
            self.watch
                .clone()
                .guard_memory(bytes, ceiling, call_in_flight),
        );
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
        {
            return;
        }
        if let Err(error) = state.ensure_browser().await {
            tracing::info!(%error, "background browser start failed");
        }
    }

    /// Closes a browser we launched (used on shutdown); in a shared browser, disposes of the
    /// session's browser contexts (its pages, cookies, storage and cache) instead.
    pub async fn shutdown(&self, budget: Duration) {
        let mut state = self.state.lock().await;
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
    pub heap: crate::heap_analysis::HeapSnapshots,
    had_browser: bool,
    reconnected: bool,
    /// A tenant's egress proxy and URL policy; `None` for the single user of stdio.
    network: Option<TenantNetwork>,
    watch: Arc<SessionWatch>,
    /// Extension service workers seen so far, with their ids.
    workers: workers::Workers,
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
        }
    }

    /// Launches or connects on first use, and again after the browser died.
    pub async fn ensure_browser(&mut self) -> Result<(), BrowserError> {
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
        self.pages.clear();
        self.selected = None;
        self.contexts.clear();
        let proxy_server = self.proxy_server().map(String::from);
        let browser = match &mut self.scope {
            Some(scope) => {
                let connection = scope.shared.get().await?;
                let context = create_browser_context(&connection.browser, proxy_server.as_deref())
                    .await
                    .map_err(BrowserError::Context)?;
                scope.context = Some(context);
                BrowserHandle::Shared(connection)
            }
            None => BrowserHandle::Owned(Box::new(BrowserConn::open(&self.options).await?)),
        };
        self.browser = Some(browser);
        if self.had_browser {
            self.reconnected = true;
        }
        self.had_browser = true;
        self.discover_initial_pages().await;
        Ok(())
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

    /// Adopts the pages the browser already has, oldest first (the first is selected, as
    /// 1.11.0 selects the first of the browser's pages); opens one only if it has none. A
    /// running browser's tabs are attached by the CDP client one by one, so this waits (up to
    /// a bound) until every page target the browser lists is adopted rather than opening a tab
    /// of its own meanwhile: a user's tabs must not pile up process after process. A fresh
    /// context of a shared browser, and a browser we launched (`--no-startup-window`), have no
    /// pages to wait for.
    async fn discover_initial_pages(&mut self) {
        let launched = self
            .browser
            .as_ref()
            .is_some_and(|browser| browser.connection().launched);
        let deadline = tokio::time::Instant::now()
            + if launched || self.scope.is_some() {
                Duration::ZERO
            } else {
                ATTACH_WAIT
            };
        // No `fetch_targets` here: `Target.setDiscoverTargets` at connect already reports
        // every tab, and chromiumoxide's fetch attaches each a second time, unflattened, which
        // can leave a page holding a session the browser does not know (every command to it
        // then fails). Adopted all at once when every listed page is attached, so that they
        // are numbered by when they were opened, not by when the client attached them.
        loop {
            let own_contexts = self.own_contexts();
            let targets = self.targets().await;
            let listed = targets
                .values()
                .filter(|info| adoptable(Some(info), own_contexts.as_deref()))
                .count();
            let attached = match self.browser() {
                Ok(browser) => browser.pages().await.map_or(0, |pages| {
                    adoptable_pages(pages, &targets, own_contexts.as_deref()).len()
                }),
                Err(_) => 0,
            };
            // Nothing listed means the listing failed (a busy browser): the pages attached
            // cannot be all there is, so keep waiting, up to the bound.
            let all_attached = listed > 0 && attached >= listed;
            let out_of_time = tokio::time::Instant::now() >= deadline;
            if all_attached || out_of_time {
                let _targets = self.sync_pages_in(Adoption::InOrder).await;
                // A page that could not be tracked yet is tried again.
                if self.pages.len() >= listed || out_of_time {
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if self.pages.is_empty()
            && let Err(error) = self.new_page("about:blank", false, None, None).await
        {
            tracing::warn!(%error, "could not open a first page");
        }
    }

    /// Brings the page table in line with the browser: pages opened by the page itself
    /// (popups) get ids, pages closed elsewhere disappear. Browser-internal pages (`chrome://`
    /// and the like) are left out, as the reference's target filter does.
    pub async fn sync_pages(&mut self) {
        let _targets = self.sync_pages_with_targets().await;
    }

    /// [`Session::sync_pages`], returning the browser's target list it worked from (`None`
    /// when the browser could not be asked).
    async fn sync_pages_with_targets(&mut self) -> Option<Targets> {
        self.sync_pages_in(Adoption::AsTheyCome).await
    }

    /// [`Session::sync_pages_with_targets`], adopting new pages as `adoption` says.
    async fn sync_pages_in(&mut self, adoption: Adoption) -> Option<Targets> {
        let Ok(browser) = self.browser() else {
            return None;
        };
        let Ok(live) = browser.pages().await else {
            return None;
        };
        let targets = self.targets().await;
        let own_contexts = self.own_contexts();
        let live = adoptable_pages(live, &targets, own_contexts.as_deref());
        let live_ids: Vec<String> = live.iter().map(target_key).collect();
        self.pages
            .retain(|_, page| live_ids.contains(&target_key(&page.page)));
        let known: Vec<String> = self
            .pages
            .values()
            .map(|page| target_key(&page.page))
            .collect();
        let new = live
            .into_iter()
            .filter(|page| !known.contains(&target_key(page)))
            .collect();
        // `Target.getTargets` tends to list the newest target first: its reversed rank breaks
        // ties among tabs whose history cannot be read.
        let listed_rank = |page: &chromiumoxide::Page| {
            targets
                .keys_in_order
                .iter()
                .position(|id| *id == target_key(page))
                .map_or(i64::MAX, |position| -(position as i64))
        };
        let new = tab_order::oldest_first(new, listed_rank).await;
        let mut adopted = Vec::new();
        for page in new {
            let Some(raw) = self.raw_link() else { break };
            match McpPage::attach(page, None, self.options.redact_network_headers, raw).await {
                // The id is taken only once the page is tracked: a page tried again later
                // must not leave a hole in the numbering (1.11.0's ids have none).
                Ok(mut page) => {
                    let id = NEXT_PAGE_ID.fetch_add(1, Ordering::Relaxed);
                    page.id = id;
                    page.url_policy = self.url_policy();
                    self.pages.insert(id, page);
                    adopted.push(id);
                }
                Err(error) => {
                    tracing::debug!(%error, "could not track a page");
                    if adoption == Adoption::InOrder {
                        break;
                    }
                }
            }
        }
        self.close_pages_over_quota(adopted).await;
        if self.selected.is_none() {
            self.selected = self.pages.keys().next().copied();
        }
        self.publish_pages();
        Some(targets)
    }

    /// Pages the session's pages opened themselves count against `max_pages` too: the newest
    /// of those just adopted are closed until the session is within it.
    async fn close_pages_over_quota(&mut self, mut adopted: Vec<u32>) {
        let Some(limit) = self.max_pages else { return };
        while self.pages.len() > limit {
            let Some(id) = adopted.pop() else { break };
            if let Some(page) = self.pages.remove(&id) {
                let url = page.url().await;
                let _closed = page.page.clone().close().await;
                self.watch.note(format!(
                    "A page opened by a page ({url}) was closed: this tenant may have at most {limit} open pages."
                ));
            }
            if self.selected == Some(id) {
                self.selected = None;
            }
        }
    }

    /// Tells the watch which pages the session has now.
    fn publish_pages(&self) {
        let connection = self.browser.as_ref().map(|handle| handle.connection());
        self.watch.publish(Watched {
            pages: self
                .pages
                .iter()
                .map(|(id, page)| (*id, page.page.clone()))
                .collect(),
            raw: connection.map(|connection| connection.raw.clone()),
            local_renderers: connection.is_some_and(|connection| connection.launched),
        });
    }

    /// The browser's targets: id -> what `Target.getTargets` says of it.
    async fn targets(&self) -> Targets {
        let mut targets = Targets::default();
        let Ok(browser) = self.browser() else {
            return targets;
        };
        let Ok(answer) = browser
            .execute(cdp("Target.getTargets", serde_json::json!({})))
            .await
        else {
            return targets;
        };
        for info in answer.result["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let text = |key: &str| info[key].as_str().unwrap_or_default().to_string();
            targets.keys_in_order.push(text("targetId"));
            targets.by_id.insert(
                text("targetId"),
                TargetInfo {
                    kind: text("type"),
                    title: text("title"),
                    url: text("url"),
                    context: text("browserContextId"),
                },
            );
        }
        targets
    }

    /// The page page-scoped tools act on.
    pub fn selected_page(&self) -> Result<&McpPage, String> {
        let id = self.selected.ok_or("No page selected")?;
        self.pages
            .get(&id)
            .ok_or_else(|| CLOSED_SELECTED_PAGE.to_string())
    }

    /// The extension service workers of the browser (`## Extension Service Workers`), with
    /// the ids tools name them by. Only a session with a browser of its own sees them: an
    /// extension belongs to the whole browser.
    pub async fn extension_service_workers(&mut self) -> Vec<Worker> {
        if self.scope.is_some() {
            return Vec::new();
        }
        let targets = self.targets().await;
        // Oldest first, as the reference meets them (`Target.getTargets` lists newest first).
        self.workers
            .refresh(targets.keys_in_order.iter().rev().filter_map(|id| {
                targets
                    .get(id)
                    .map(|info| (id.as_str(), info.kind.as_str(), info.url.as_str()))
            }));
        self.workers.list().to_vec()
    }

    /// A worker listed by [`SessionState::extension_service_workers`], by its id.
    pub async fn extension_service_worker(&mut self, id: &str) -> Option<Worker> {
        self.extension_service_workers().await;
        self.workers.by_id(id).cloned()
    }

    /// The ids of the pages the session knows, in id order.
    pub fn page_ids(&self) -> Vec<u32> {
        self.pages.keys().copied().collect()
    }

    pub fn selected_id(&self) -> Result<u32, String> {
        self.selected_page().map(|page| page.id)
    }

    pub fn page(&self, id: u32) -> Result<&McpPage, String> {
        self.pages
            .get(&id)
            .ok_or_else(|| "No page found".to_string())
    }

    /// Refuses an effect on the whole browser (`what` does it: a trace records every tab, an
    /// extension sees every tab) when this session is one browser context of a browser other
    /// tenants use too.
    pub fn require_own_browser(&self, what: &str) -> Result<(), String> {
        match self.scope {
            Some(_) => Err(format!(
                "{what}, and this session shares its browser with other tenants; the tenants file must give it browser = \"dedicated\"."
            )),
            None => Ok(()),
        }
    }

    pub fn page_mut(&mut self, id: u32) -> Result<&mut McpPage, String> {
        self.pages
            .get_mut(&id)
            .ok_or_else(|| "No page found".to_string())
    }

    /// A page and the sandbox together, for actions that write files.
    pub fn page_and_sandbox(&mut self, id: u32) -> Result<(&mut McpPage, &Sandbox), String> {
        let page = self
            .pages
            .get_mut(&id)
            .ok_or_else(|| "No page found".to_string())?;
        Ok((page, &self.sandbox))
    }

    pub async fn select_page(&mut self, id: u32, bring_to_front: bool) -> Result<(), String> {
        let page = self.page(id)?;
        if bring_to_front {
            page.page
                .bring_to_front()
                .await
                .map_err(|error| error.to_string())?;
        }
        self.selected = Some(id);
        Ok(())
    }

    /// Opens a page (in a named isolated context if asked), loads `url`, selects it unless
    /// `background`.
    pub async fn new_page(
        &mut self,
        url: &str,
        background: bool,
        isolated_context: Option<&str>,
        timeout: Option<Duration>,
    ) -> Result<u32, String> {
        let url = match self.url_policy() {
            Some(policy) => policy
                .check(url)
                .map_err(|refusal| refusal.to_string())?
                .to_string(),
            None => url.to_string(),
        };
        let url = url.as_str();
        if let Some(limit) = self.max_pages {
            self.sync_pages().await;
            if self.pages.len() >= limit {
                return Err(format!(
                    "This tenant may have at most {limit} open pages. Close one with close_page first."
                ));
            }
        }
        let context_id = match isolated_context {
            Some(name) => Some(self.browser_context(name).await?),
            None => self.scope.as_ref().and_then(|scope| scope.context.clone()),
        };
        let mut params =
            chromiumoxide::cdp::browser_protocol::target::CreateTargetParams::new("about:blank");
        params.background = Some(background);
        params.browser_context_id = context_id.map(Into::into);
        let page = self
            .browser()?
            .new_page(params)
            .await
            .map_err(|error| error.to_string())?;
        let mut page = McpPage::attach(
            page,
            isolated_context.map(String::from),
            self.options.redact_network_headers,
            self.raw_link().ok_or("The browser is not running.")?,
        )
        .await?;
        let id = NEXT_PAGE_ID.fetch_add(1, Ordering::Relaxed);
        page.id = id;
        page.url_policy = self.url_policy();
        self.pages.insert(id, page);
        self.publish_pages();
        if !background {
            self.selected = Some(id);
            let _front = self.page(id)?.page.bring_to_front().await;
        }
        if url != "about:blank" {
            let page = self.page(id)?;
            page.navigate(
                crate::browser::Target::Url(url.to_string()),
                timeout,
                true,
                None,
            )
            .await?;
        }
        Ok(id)
    }

    async fn browser_context(&mut self, name: &str) -> Result<String, String> {
        if let Some(id) = self.contexts.get(name) {
            return Ok(id.clone());
        }
        let id = create_browser_context(self.browser()?, self.proxy_server()).await?;
        self.contexts.insert(name.to_string(), id.clone());
        Ok(id)
    }

    /// Closes a page; `false` when it is the last one (which stays open).
    pub async fn close_page(&mut self, id: u32) -> Result<bool, String> {
        self.sync_pages().await;
        self.page(id)?;
        if self.pages.len() <= 1 {
            return Ok(false);
        }
        if let Some(page) = self.pages.remove(&id) {
            page.page
                .clone()
                .close()
                .await
                .map_err(|error| error.to_string())?;
        }
        if self.selected == Some(id) {
            self.selected = self.pages.keys().next().copied();
        }
        self.publish_pages();
        Ok(true)
    }

    /// The rows of `## Pages`. Titles are the browser's own (`Target.getTargets`, fresh for
    /// each listing), without the placeholder it shows for untitled pages, as 1.11.0 prints
    /// them; only a page missing from the listing has its document asked (at most 1 s).
    pub async fn page_list(&mut self) -> Vec<PageEntry> {
        let targets = match self.sync_pages_with_targets().await {
            Some(targets) => targets,
            None => self.targets().await,
        };
        let selected = self.selected;
        let rows = self.pages.iter().map(|(id, page)| {
            let known = targets.get(&target_key(&page.page));
            async move {
                let url = match known {
                    Some(info) => info.url.clone(),
                    None => page.url().await,
                };
                let title = match known {
                    Some(info) => shown_title(&info.title, &info.url),
                    None if page.dialog().is_some() => String::new(),
                    None => page.title(Duration::from_secs(1)).await,
                };
                PageEntry {
                    id: *id,
                    title,
                    url,
                    selected: selected == Some(*id),
                    isolated_context: page.isolated_context.clone(),
                }
            }
        });
        futures::future::join_all(rows).await
    }
}

/// A target's title as 1.11.0 shows it: empty when it is the placeholder Chromium gives an
/// untitled page (its URL, or the URL without `http(s)://`, with or without the last `/`).
fn shown_title(title: &str, url: &str) -> String {
    let without_scheme = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .unwrap_or(url);
    let placeholder =
        title == url || title == without_scheme || without_scheme.strip_suffix('/') == Some(title);
    if placeholder {
        String::new()
    } else {
        title.to_owned()
    }
}

/// What `Target.getTargets` said, by target id, and the ids in the order it listed them (no
/// stable order: `tab_order` numbers tabs by when they were opened).
#[derive(Default)]
struct Targets {
    by_id: HashMap<String, TargetInfo>,
    keys_in_order: Vec<String>,
}

impl Targets {
    fn get(&self, id: &str) -> Option<&TargetInfo> {
        self.by_id.get(id)
    }

    fn values(&self) -> impl Iterator<Item = &TargetInfo> {
        self.by_id.values()
    }
}

/// The attached pages this session may adopt (see `adoptable`).
fn adoptable_pages(
    pages: Vec<chromiumoxide::Page>,
    targets: &Targets,
    own_contexts: Option<&[String]>,
) -> Vec<chromiumoxide::Page> {
    pages
        .into_iter()
        .filter(|page| adoptable(targets.get(&target_key(page)), own_contexts))
        .collect()
}

fn target_key(page: &chromiumoxide::Page) -> String {
    page.target_id().as_ref().to_string()
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

    #[test]
    fn untitled_pages_show_no_title_as_in_1_11() {
        assert_eq!(shown_title("about:blank", "about:blank"), "");
        let url = "http://127.0.0.1:8080/start.html";
        assert_eq!(shown_title("127.0.0.1:8080/start.html", url), "");
        assert_eq!(shown_title("example.com", "https://example.com/"), "");
        assert_eq!(shown_title("example.com/", "https://example.com/"), "");
        assert_eq!(shown_title("Start", url), "Start");
        // Only http(s) loses its scheme.
        assert_eq!(shown_title("x.test/a", "ftp://x.test/a"), "x.test/a");
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
