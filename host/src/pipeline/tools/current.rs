//! The current tool set, swappable while calls run: a call takes a snapshot (an `Arc`) and
//! keeps it to the end, so a reload never changes a tool under a running call.

use super::ToolSet;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{broadcast, watch};

pub struct CurrentToolSet {
    current: RwLock<Arc<ToolSet>>,
    /// One message per change, for `notifications/tools/list_changed`.
    changes: broadcast::Sender<()>,
    /// Whether plugins are still compiling in the background (start-up does not wait for
    /// them): a call to a tool not in the set waits for them, bounded.
    loading: watch::Sender<bool>,
}

impl CurrentToolSet {
    pub fn new(tools: ToolSet) -> CurrentToolSet {
        CurrentToolSet {
            current: RwLock::new(Arc::new(tools)),
            changes: broadcast::channel(16).0,
            loading: watch::channel(false).0,
        }
    }

    /// Plugins are compiling in the background until [`CurrentToolSet::loaded`].
    pub fn loading(&self) {
        self.loading.send_replace(true);
    }

    /// The background load ended (its tools, if any, were installed with `replace` first).
    pub fn loaded(&self) {
        self.loading.send_replace(false);
    }

    /// Waits, at most `limit`, for a background load to end; at once when none runs.
    pub async fn settled(&self, limit: Duration) {
        let mut loading = self.loading.subscribe();
        let _waited = tokio::time::timeout(limit, loading.wait_for(|loading| !loading)).await;
    }

    pub fn current(&self) -> Arc<ToolSet> {
        match self.current.read() {
            Ok(current) => current.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Installs a new set and tells every listener.
    pub fn replace(&self, tools: ToolSet) {
        let tools = Arc::new(tools);
        match self.current.write() {
            Ok(mut current) => *current = tools,
            Err(poisoned) => *poisoned.into_inner() = tools,
        }
        let _no_listeners = self.changes.send(());
    }

    pub fn subscribe(&self) -> broadcast::Receiver<()> {
        self.changes.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> CurrentToolSet {
        CurrentToolSet::new(ToolSet::new(Vec::new(), &serde_json::Map::new(), false).expect("set"))
    }

    /// A call to an unknown tool answers at once when nothing compiles, and waits for a
    /// background load (bounded) when one runs.
    #[tokio::test]
    async fn settled_waits_only_while_plugins_load() {
        let tools = Arc::new(empty());
        let started = std::time::Instant::now();
        tools.settled(Duration::from_secs(60)).await;
        assert!(started.elapsed() < Duration::from_millis(100));

        tools.loading();
        let loader = tools.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            loader.loaded();
        });
        let started = std::time::Instant::now();
        tools.settled(Duration::from_secs(60)).await;
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(300), "{waited:?}");
        assert!(waited < Duration::from_secs(30), "{waited:?}");

        tools.loading();
        let started = std::time::Instant::now();
        tools.settled(Duration::from_millis(200)).await;
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(200), "bounded: {waited:?}");
        assert!(waited < Duration::from_secs(30), "bounded: {waited:?}");
    }
}
