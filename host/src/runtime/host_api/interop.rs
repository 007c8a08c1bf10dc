//! `devtools:tool/interop`: the ids other clients know a page by. Reading them is reading the
//! page (`pages.read`).

use super::function::{HostFunction as F, Marks as M};
use super::{CallState, PageHandle, or_return};
use crate::policy::capability::Capability::PagesRead;
use crate::runtime::bindings::devtools::tool::interop;
use wasmtime::component::Resource;

const TAB_ID: F = F::new("interop", "tab-id", &[PagesRead], M::NONE);

pub(super) const FUNCTIONS: &[&F] = &[&TAB_ID];

impl interop::Host for CallState {
    async fn tab_id(
        &mut self,
        handle: Resource<PageHandle>,
    ) -> wasmtime::Result<Result<String, String>> {
        self.dispatch(&TAB_ID, async |call| {
            let id = call.page_id(&handle)?;
            let session = or_return!(call.session());
            let Some(endpoint) = session.browser_ws_endpoint() else {
                return Ok(Err("The browser is not connected.".into()));
            };
            let target = or_return!(session.page(id))
                .cdp()
                .target_id()
                .inner()
                .clone();
            let tab = crate::browser::page::tab::tab_id(&endpoint, &target).await;
            if let Ok(tab) = &tab {
                call.response().tab_id = Some(tab.clone());
            }
            Ok(tab)
        })
        .await
    }
}
