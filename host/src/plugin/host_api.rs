//! The two interfaces a tool imports, implemented over the session. These impls hold no logic
//! of their own: they forward to the session and its pages, and record response intents.

use super::bindings::devtools::tool::{pages, response};
use crate::browser::Target;
use crate::response::{ResponseDraft, SnapshotRequest};
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
}

fn timeout(milliseconds: Option<u32>) -> Option<Duration> {
    milliseconds
        .filter(|ms| *ms > 0)
        .map(|ms| Duration::from_millis(u64::from(ms)))
}

impl pages::Host for CallState {
    async fn selected(&mut self) -> wasmtime::Result<Result<Resource<PageHandle>, String>> {
        let id = match self.session().and_then(|session| session.selected_id()) {
            Ok(id) => id,
            Err(error) => return Ok(Err(error)),
        };
        Ok(Ok(self.table.push(PageHandle { id })?))
    }

    async fn get(&mut self, id: u32) -> wasmtime::Result<Result<Resource<PageHandle>, String>> {
        if let Err(error) = self
            .session()
            .and_then(|session| session.page(id).map(|_| ()))
        {
            return Ok(Err(error));
        }
        Ok(Ok(self.table.push(PageHandle { id })?))
    }

    async fn select(
        &mut self,
        id: u32,
        bring_to_front: bool,
    ) -> wasmtime::Result<Result<(), String>> {
        let session = match self.session() {
            Ok(session) => session,
            Err(error) => return Ok(Err(error)),
        };
        Ok(session.select_page(id, bring_to_front).await)
    }

    async fn new_page(
        &mut self,
        url: String,
        background: bool,
        isolated_context: Option<String>,
        timeout_ms: Option<u32>,
    ) -> wasmtime::Result<Result<Resource<PageHandle>, String>> {
        let session = match self.session() {
            Ok(session) => session,
            Err(error) => return Ok(Err(error)),
        };
        let created = session
            .new_page(
                &url,
                background,
                isolated_context.as_deref(),
                timeout(timeout_ms),
            )
            .await;
        match created {
            Ok(id) => Ok(Ok(self.table.push(PageHandle { id })?)),
            Err(error) => Ok(Err(error)),
        }
    }

    async fn close(&mut self, id: u32) -> wasmtime::Result<Result<bool, String>> {
        let session = match self.session() {
            Ok(session) => session,
            Err(error) => return Ok(Err(error)),
        };
        Ok(session.close_page(id).await)
    }
}

impl pages::HostPage for CallState {
    async fn id(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<u32> {
        self.page_id(&handle)
    }

    async fn url(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<String> {
        let id = self.page_id(&handle)?;
        Ok(match self.session().and_then(|session| session.page(id)) {
            Ok(page) => page.url().await,
            Err(_) => String::new(),
        })
    }

    async fn navigate(
        &mut self,
        handle: Resource<PageHandle>,
        target: pages::Navigation,
        options: pages::NavigateOptions,
    ) -> wasmtime::Result<Result<pages::Navigated, String>> {
        let id = self.page_id(&handle)?;
        let page = match self.session().and_then(|session| session.page(id)) {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        };
        let target = match target {
            pages::Navigation::Url(url) => Target::Url(url),
            pages::Navigation::Back => Target::Back,
            pages::Navigation::Forward => Target::Forward,
            pages::Navigation::Reload(ignore_cache) => Target::Reload { ignore_cache },
        };
        let outcome = page
            .navigate(
                target,
                timeout(options.timeout_ms),
                options.accept_before_unload,
                options.init_script.as_deref(),
            )
            .await;
        Ok(outcome.map(|done| pages::Navigated {
            url: done.url,
            before_unload_handled: done.before_unload_handled,
        }))
    }

    async fn click(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
        count: u32,
    ) -> wasmtime::Result<Result<(), String>> {
        let id = self.page_id(&handle)?;
        let page = match self.session().and_then(|session| session.page(id)) {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        };
        match page.click(&uid, count).await {
            Ok(navigated) => {
                if navigated.is_some() {
                    self.response.navigated_to = navigated;
                }
                Ok(Ok(()))
            }
            Err(error) => Ok(Err(error)),
        }
    }

    async fn evaluate(
        &mut self,
        handle: Resource<PageHandle>,
        function: String,
        args: Vec<String>,
    ) -> wasmtime::Result<Result<String, String>> {
        let id = self.page_id(&handle)?;
        let page = match self.session().and_then(|session| session.page(id)) {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        };
        match page.evaluate(&function, &args).await {
            Ok((result, navigated)) => {
                if navigated.is_some() {
                    self.response.navigated_to = navigated;
                }
                Ok(Ok(result))
            }
            Err(error) => Ok(Err(error)),
        }
    }

    async fn dialog(
        &mut self,
        handle: Resource<PageHandle>,
    ) -> wasmtime::Result<Option<pages::Dialog>> {
        let id = self.page_id(&handle)?;
        let dialog = self
            .session()
            .and_then(|session| session.page(id))
            .ok()
            .and_then(|page| page.dialog());
        Ok(dialog.map(|dialog| pages::Dialog {
            kind: dialog.kind,
            message: dialog.message,
            default_value: dialog.default_value,
        }))
    }

    async fn handle_dialog(
        &mut self,
        handle: Resource<PageHandle>,
        accept: bool,
        prompt_text: Option<String>,
    ) -> wasmtime::Result<Result<(), String>> {
        let id = self.page_id(&handle)?;
        let page = match self.session().and_then(|session| session.page(id)) {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        };
        let handled = page.handle_dialog(accept, prompt_text.as_deref()).await;
        // The closed event clears the state; wait for it so the response shows no dialog.
        page.wait_dialog_closed(Duration::from_secs(1)).await;
        Ok(handled)
    }

    async fn drop(&mut self, handle: Resource<PageHandle>) -> wasmtime::Result<()> {
        self.table.delete(handle)?;
        Ok(())
    }
}

impl response::Host for CallState {
    async fn append_line(&mut self, text: String) -> wasmtime::Result<()> {
        self.response.lines.push(text);
        Ok(())
    }

    async fn include_pages(&mut self) -> wasmtime::Result<()> {
        self.response.include_pages = true;
        Ok(())
    }

    async fn include_snapshot(
        &mut self,
        options: response::SnapshotOptions,
    ) -> wasmtime::Result<()> {
        self.response.snapshot = Some(SnapshotRequest {
            verbose: options.verbose,
            file_path: options.file_path,
        });
        Ok(())
    }

    async fn attach_image(&mut self, data: Vec<u8>, mime_type: String) -> wasmtime::Result<()> {
        self.response.images.push((data, mime_type));
        Ok(())
    }
}
