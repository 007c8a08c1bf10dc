//! One Chromium shared by several sessions (the HTTP server's tenants): launched or connected
//! on first use, relaunched when it died. Each session works in a browser context of its own
//! and only ever sees that context's targets (see `session.rs`).

use super::connection::BrowserConn;
use super::renderer_processes::RendererCeiling;
use crate::browser::{BrowserError, BrowserOptions};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

pub struct SharedBrowser {
    options: BrowserOptions,
    connection: Mutex<Option<Arc<BrowserConn>>>,
    /// What each renderer of this browser may hold: the largest cap of its tenants.
    renderer_ceiling: Arc<RendererCeiling>,
}

impl SharedBrowser {
    pub fn new(options: BrowserOptions) -> SharedBrowser {
        SharedBrowser {
            options,
            connection: Mutex::new(None),
            renderer_ceiling: Arc::default(),
        }
    }

    pub fn renderer_ceiling(&self) -> Arc<RendererCeiling> {
        self.renderer_ceiling.clone()
    }

    pub fn options(&self) -> &BrowserOptions {
        &self.options
    }

    /// The live browser, launching or reconnecting when there is none.
    pub async fn get(&self) -> Result<Arc<BrowserConn>, BrowserError> {
        let mut connection = self.connection.lock().await;
        if let Some(live) = connection.as_ref().filter(|live| live.is_alive()) {
            return Ok(live.clone());
        }
        // No `fetch_targets`: `Target.setDiscoverTargets` at connect reports every target, and
        // a second, unflattened attach could leave a tab on a session the browser does not know.
        let opened = Arc::new(BrowserConn::open(&self.options).await?);
        *connection = Some(opened.clone());
        Ok(opened)
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
