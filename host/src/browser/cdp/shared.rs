//! One Chromium shared by several sessions (the HTTP server's tenants): launched or connected
//! on first use, relaunched when it died. Each session works in a browser context of its own
//! and only ever sees that context's targets (see `session.rs`).
//!
//! Every (re)connect runs one reconciliation before any session uses the connection: the
//! browser contexts the browser holds are enumerated; those of live sessions are kept (each
//! session adopts its pages again, under its quota, listing and footprint watch), every other
//! one is disposed with its pages. A cut DevTools connection the browser did not notice leaves
//! its contexts alive: without this step their pages would run on outside every tenant.

use super::cdp;
use super::connection::BrowserConn;
use super::renderer_processes::RendererCeiling;
use crate::browser::{BrowserError, BrowserOptions};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// How long the reconciliation waits for each command.
const RECONCILE_COMMAND_TIMEOUT: Duration = Duration::from_secs(5);

pub struct SharedBrowser {
    options: BrowserOptions,
    connection: Mutex<Option<Arc<BrowserConn>>>,
    /// What each renderer of this browser may hold: the largest cap of its tenants.
    renderer_ceiling: Arc<RendererCeiling>,
    /// The browser contexts of live sessions: kept by the reconciliation.
    owned: std::sync::Mutex<HashSet<String>>,
    /// The owned contexts the browser still held at the last (re)connect: their sessions
    /// take them back instead of starting afresh.
    survived: std::sync::Mutex<HashSet<String>>,
}

impl SharedBrowser {
    pub fn new(options: BrowserOptions) -> SharedBrowser {
        SharedBrowser {
            options,
            connection: Mutex::new(None),
            renderer_ceiling: Arc::default(),
            owned: std::sync::Mutex::default(),
            survived: std::sync::Mutex::default(),
        }
    }

    pub fn renderer_ceiling(&self) -> Arc<RendererCeiling> {
        self.renderer_ceiling.clone()
    }

    pub fn options(&self) -> &BrowserOptions {
        &self.options
    }

    /// The live browser, launching or reconnecting when there is none; a new connection is
    /// reconciled first (see the module's documentation).
    pub async fn get(&self) -> Result<Arc<BrowserConn>, BrowserError> {
        let mut connection = self.connection.lock().await;
        if let Some(live) = connection.as_ref().filter(|live| live.is_alive()) {
            return Ok(live.clone());
        }
        // No `fetch_targets`: `Target.setDiscoverTargets` at connect reports every target, and
        // a second, unflattened attach could leave a tab on a session the browser does not know.
        let opened = Arc::new(BrowserConn::open(&self.options).await?);
        let owned = lock(&self.owned).clone();
        let survived = reconcile(&opened, &owned).await;
        *lock(&self.survived) = survived;
        *connection = Some(opened.clone());
        Ok(opened)
    }

    /// Whether a live connection is there now, without waiting for one being made.
    pub fn is_connected(&self) -> bool {
        self.connection
            .try_lock()
            .is_ok_and(|connection| connection.as_ref().is_some_and(|live| live.is_alive()))
    }

    /// Records a context a session works in: kept across reconnections while it is owned.
    pub fn own_context(&self, context: &str) {
        lock(&self.owned).insert(context.to_owned());
    }

    /// A session gave its context up (disposed of, or about to be).
    pub fn disown_context(&self, context: &str) {
        lock(&self.owned).remove(context);
        lock(&self.survived).remove(context);
    }

    /// Whether `context`, owned before the last reconnection, is still in the browser.
    pub fn survived(&self, context: &str) -> bool {
        lock(&self.survived).contains(context)
    }

    /// Closes the browser once no session holds it any more; a session still holding it (a
    /// call that did not finish in time) lets the last reference's drop kill it.
    pub async fn shutdown(&self, budget: Duration) {
        let taken = self.connection.lock().await.take();
        if let Some(connection) = taken.and_then(|shared| Arc::try_unwrap(shared).ok()) {
            connection.shutdown(budget).await;
        }
    }
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Enumerates the browser's contexts (all but the default one, where no tenant works) and
/// their page targets: those of `owned` contexts are kept and returned, every other context is
/// disposed of with its pages.
async fn reconcile(connection: &BrowserConn, owned: &HashSet<String>) -> HashSet<String> {
    let browser = &connection.browser;
    let listed = tokio::time::timeout(
        RECONCILE_COMMAND_TIMEOUT,
        browser.execute(cdp("Target.getBrowserContexts", serde_json::json!({}))),
    )
    .await;
    let contexts: Vec<String> = match listed {
        Ok(Ok(answer)) => answer.result["browserContextIds"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|id| id.as_str().map(String::from))
            .collect(),
        Ok(Err(error)) => {
            tracing::warn!(%error, "cannot list the browser's contexts to reconcile them");
            return HashSet::new();
        }
        Err(_) => {
            tracing::warn!("listing the browser's contexts timed out; not reconciled");
            return HashSet::new();
        }
    };
    let pages = pages_by_context(connection).await;
    let (kept, orphans) = split_contexts(contexts, owned);
    for context in &orphans {
        let count = pages.iter().filter(|page| *page == context).count();
        let dispose = browser.execute(cdp(
            "Target.disposeBrowserContext",
            serde_json::json!({ "browserContextId": context }),
        ));
        match tokio::time::timeout(RECONCILE_COMMAND_TIMEOUT, dispose).await {
            Ok(Ok(_)) => {
                tracing::warn!(%context, pages = count, "disposed of a browser context no session owns");
            }
            Ok(Err(error)) => {
                tracing::warn!(%error, %context, "cannot dispose of a browser context no session owns");
            }
            Err(_) => tracing::warn!(%context, "disposing of an orphan browser context timed out"),
        }
    }
    if !kept.is_empty() {
        tracing::info!(
            contexts = kept.len(),
            "browser contexts of live sessions survived the reconnection; their sessions adopt them"
        );
    }
    kept
}

/// The browser context of each page target (one entry per page).
async fn pages_by_context(connection: &BrowserConn) -> Vec<String> {
    let listed = tokio::time::timeout(
        RECONCILE_COMMAND_TIMEOUT,
        connection
            .browser
            .execute(cdp("Target.getTargets", serde_json::json!({}))),
    )
    .await;
    let Ok(Ok(answer)) = listed else {
        return Vec::new();
    };
    answer.result["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|info| info["type"] == "page")
        .filter_map(|info| info["browserContextId"].as_str().map(String::from))
        .collect()
}

/// The listed contexts a live session owns (kept) and the others (orphans).
fn split_contexts(listed: Vec<String>, owned: &HashSet<String>) -> (HashSet<String>, Vec<String>) {
    let (kept, orphans): (Vec<String>, Vec<String>) = listed
        .into_iter()
        .partition(|context| owned.contains(context));
    (kept.into_iter().collect(), orphans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_contexts_are_kept_and_every_other_one_is_an_orphan() {
        let owned: HashSet<String> = ["alice".to_string(), "bob".to_string()].into();
        let listed = vec!["alice".into(), "gone".into(), "bob".into(), "other".into()];
        let (kept, orphans) = split_contexts(listed, &owned);
        assert_eq!(kept, owned);
        assert_eq!(orphans, vec!["gone".to_string(), "other".to_string()]);
    }

    #[test]
    fn a_disowned_context_does_not_survive() {
        let shared = SharedBrowser::new(BrowserOptions::default());
        shared.own_context("alice");
        lock(&shared.survived).insert("alice".into());
        assert!(shared.survived("alice"));
        shared.disown_context("alice");
        assert!(!shared.survived("alice"));
        assert!(lock(&shared.owned).is_empty());
    }
}
