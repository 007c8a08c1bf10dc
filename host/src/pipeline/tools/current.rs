//! The current tool set, swappable while calls run: a call takes a snapshot (an `Arc`) and
//! keeps it to the end, so a reload never changes a tool under a running call.

use super::ToolSet;
use std::sync::{Arc, RwLock};
use tokio::sync::broadcast;

pub struct CurrentToolSet {
    current: RwLock<Arc<ToolSet>>,
    /// One message per change, for `notifications/tools/list_changed`.
    changes: broadcast::Sender<()>,
}

impl CurrentToolSet {
    pub fn new(tools: ToolSet) -> CurrentToolSet {
        CurrentToolSet {
            current: RwLock::new(Arc::new(tools)),
            changes: broadcast::channel(16).0,
        }
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
