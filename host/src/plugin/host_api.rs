//! The two interfaces a tool imports, implemented over the session. These impls hold no logic
//! of their own: they forward to the session and its pages, and record response intents.

mod pages;
mod response;

use crate::browser::McpPage;
use crate::response::ResponseDraft;
use crate::session::SessionState;
use std::time::Duration;
use tokio::sync::OwnedMutexGuard;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime::{StoreLimits, StoreLimitsBuilder};

/// A `page` handle held by the guest: just the page id; the host owns the page.
pub struct PageHandle {
    pub id: u32,
}

/// The store data of one call.
pub struct CallState {
    pub table: ResourceTable,
    pub limits: StoreLimits,
    /// The session, locked for this call. `None` while computing definitions.
    pub session: Option<OwnedMutexGuard<SessionState>>,
    pub response: ResponseDraft,
}

impl CallState {
    pub fn new(session: OwnedMutexGuard<SessionState>, memory_limit: usize) -> CallState {
        CallState {
            session: Some(session),
            ..CallState::without_session(memory_limit)
        }
    }

    pub fn without_session(memory_limit: usize) -> CallState {
        CallState {
            table: ResourceTable::new(),
            limits: StoreLimitsBuilder::new()
                .memory_size(memory_limit)
                .trap_on_grow_failure(true)
                .build(),
            session: None,
            response: ResponseDraft::default(),
        }
    }

    fn session(&mut self) -> Result<&mut SessionState, String> {
        self.session.as_deref_mut().ok_or_else(|| {
            "Pages are not available while a tool computes its definition.".to_string()
        })
    }

    fn page_id(&self, handle: &Resource<PageHandle>) -> wasmtime::Result<u32> {
        Ok(self.table.get(handle)?.id)
    }

    /// The page behind a guest handle; the inner error is the tool-level message.
    fn page(
        &mut self,
        handle: &Resource<PageHandle>,
    ) -> wasmtime::Result<Result<&mut McpPage, String>> {
        let id = self.page_id(handle)?;
        Ok(self.session().and_then(|session| session.page_mut(id)))
    }

    /// Records a navigation an action caused, for `Page navigated to <url>.`.
    fn navigated(&mut self, url: Option<String>) {
        if url.is_some() {
            self.response.navigated_to = url;
        }
    }
}

/// A tool's timeout parameter; none (or 0) means the default.
fn timeout(milliseconds: Option<u32>) -> Option<Duration> {
    milliseconds
        .filter(|ms| *ms > 0)
        .map(|ms| Duration::from_millis(u64::from(ms)))
}
