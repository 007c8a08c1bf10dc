//! One session's browser state: the browser connection, its pages, the selected page, named
//! isolated contexts and the file sandbox. The pipeline is handed this value (behind its
//! FIFO lock), never globals, so serving several tenants is having several sessions.
//!
//! A tenant's session of the HTTP server shares one Chromium with the others: it works in a
//! browser context of its own, creates its pages there, and adopts no target of any other
//! context, so it can neither list nor reach another tenant's pages.

mod scope;

use crate::browser::{BrowserConn, BrowserError, BrowserOptions, McpPage, SharedBrowser, cdp};
use crate::plugin::limits::Limits;
use crate::sandbox::Sandbox;
use scope::{BrowserHandle, ContextScope, TargetInfo, adoptable, create_browser_context};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// Page ids come from one process-wide counter, so a stale id fails instead of aliasing a page
/// opened later (or a page of another session).
static NEXT_PAGE_ID: AtomicU32 = AtomicU32::new(1);

const CLOSED_SELECTED_PAGE: &str =
    "The selected page has been closed. Call list_pages to see open pages.";

/// A session: its state behind one FIFO lock (tokio's mutex queues waiters in order).
#[derive(Clone)]
pub struct Session {
    state: Arc<Mutex<SessionState>>,
    /// A cap on every plugin call of this session (a tenant's quota), over each plugin's own.
    limits: Option<Limits>,
    /// Gating flags over the server's (a tenant's); `None`: the server's flags alone.
    flag_overrides: Option<Arc<serde_json::Map<String, serde_json::Value>>>,
}

impl Session {
    /// A session with a browser of its own (stdio, one-shot calls, dedicated tenants).
    pub fn new(options: BrowserOptions, sandbox: Sandbox) -> Session {
        Session::with_state(SessionState::new(options, sandbox, None, None))
    }

    /// A tenant's session in one browser context of `shared`, with at most `max_pages` pages.
    pub fn in_shared_browser(
        shared: Arc<SharedBrowser>,
        sandbox: Sandbox,
        max_pages: usize,
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
        ))
    }

    /// A session with its own browser and at most `max_pages` pages (a dedicated tenant).
    pub fn dedicated(options: BrowserOptions, sandbox: Sandbox, max_pages: usize) -> Session {
        Session::with_state(SessionState::new(options, sandbox, None, Some(max_pages)))
    }

    fn with_state(state: SessionState) -> Session {
        Session {
            state: Arc::new(Mutex::new(state)),
            limits: None,
            flag_overrides: None,
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
    had_browser: bool,
    reconnected: bool,
}

impl SessionState {
    fn new(
        options: BrowserOptions,
        sandbox: Sandbox,
        scope: Option<ContextScope>,
        max_pages: Option<usize>,
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
            had_browser: false,
            reconnected: false,
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
        let browser = match &mut self.scope {
            Some(scope) => {
                let connection = scope.shared.get().await?;
                let context = create_browser_context(&connection.browser)
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

    /// Drops the browser: closes one we own, disposes of our contexts in a shared one.
    async fn close_browser(&mut self, budget: Duration) {
        self.pages.clear();
        self.selected = None;
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

    /// Adopts the pages the browser already has; opens one if it has none. A fresh context of a
    /// shared browser has no pages to wait for, and a browser we launched starts without a
    /// window (`--no-startup-window`), so either gets its first page at once instead of after
    /// polling for tabs that will never come.
    async fn discover_initial_pages(&mut self) {
        let launched = self
            .browser
            .as_ref()
            .is_some_and(|browser| browser.connection().launched);
        let attempts = if launched || self.scope.is_some() {
            1
        } else {
            20
        };
        for attempt in 0..attempts {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if let Some(BrowserHandle::Owned(connection)) = self.browser.as_mut() {
                let _fetched = connection.browser.fetch_targets().await;
            }
            self.sync_pages().await;
            if !self.pages.is_empty() {
                break;
            }
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
        let Ok(browser) = self.browser() else { return };
        let Ok(live) = browser.pages().await else {
            return;
        };
        let targets = self.targets().await;
        let own_contexts = self.own_contexts();
        let live: Vec<chromiumoxide::Page> = live
            .into_iter()
            .filter(|page| adoptable(targets.get(&target_key(page)), own_contexts.as_deref()))
            .collect();
        let live_ids: Vec<String> = live.iter().map(target_key).collect();
        self.pages
            .retain(|_, page| live_ids.contains(&target_key(&page.page)));
        for page in live {
            let key = target_key(&page);
            if self
                .pages
                .values()
                .any(|known| target_key(&known.page) == key)
            {
                continue;
            }
            let id = NEXT_PAGE_ID.fetch_add(1, Ordering::Relaxed);
            match McpPage::attach(id, page, None, self.options.redact_network_headers).await {
                Ok(page) => {
                    self.pages.insert(id, page);
                }
                Err(error) => tracing::debug!(%error, "could not track a page"),
            }
        }
        if self.selected.is_none() {
            self.selected = self.pages.keys().next().copied();
        }
    }

    /// The browser's targets: id -> what `Target.getTargets` says of it.
    async fn targets(&self) -> HashMap<String, TargetInfo> {
        let mut targets = HashMap::new();
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
            targets.insert(
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

    pub fn selected_id(&self) -> Result<u32, String> {
        self.selected_page().map(|page| page.id)
    }

    pub fn page(&self, id: u32) -> Result<&McpPage, String> {
        self.pages
            .get(&id)
            .ok_or_else(|| "No page found".to_string())
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
        let id = NEXT_PAGE_ID.fetch_add(1, Ordering::Relaxed);
        let page = McpPage::attach(
            id,
            page,
            isolated_context.map(String::from),
            self.options.redact_network_headers,
        )
        .await?;
        self.pages.insert(id, page);
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
        let id = create_browser_context(self.browser()?).await?;
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
        Ok(true)
    }

    /// The rows of `## Pages`. Titles are read from the document (at most 1 s each, as the
    /// reference does); a page stalled by a dialog gets the browser's last known title.
    pub async fn page_list(&mut self) -> Vec<PageEntry> {
        self.sync_pages().await;
        let targets = self.targets().await;
        let mut entries = Vec::with_capacity(self.pages.len());
        for (id, page) in &self.pages {
            let known = targets.get(&target_key(&page.page));
            let url = match known {
                Some(info) => info.url.clone(),
                None => page.url().await,
            };
            let title = match page.dialog() {
                Some(_) => known
                    .map(|info| info.title.clone())
                    .filter(|title| *title != url)
                    .unwrap_or_default(),
                None => page.title(Duration::from_secs(1)).await,
            };
            entries.push(PageEntry {
                id: *id,
                title,
                url,
                selected: self.selected == Some(*id),
                isolated_context: page.isolated_context.clone(),
            });
        }
        entries
    }
}

fn target_key(page: &chromiumoxide::Page) -> String {
    page.target_id().as_ref().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex as StdMutex;

    fn session() -> Session {
        let sandbox = match Sandbox::new([std::env::temp_dir()]) {
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
