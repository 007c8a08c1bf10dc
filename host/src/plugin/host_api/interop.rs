//! `devtools:tool/interop`: the ids other clients know a page by. Reading them is reading the
//! page (`pages.read`).

use super::{CallState, PageHandle};
use crate::plugin::bindings::devtools::tool::interop;
use crate::plugin::capability::Capability;
use wasmtime::component::Resource;

impl interop::Host for CallState {
    async fn tab_id(
        &mut self,
        handle: Resource<PageHandle>,
    ) -> wasmtime::Result<Result<String, String>> {
        self.require(Capability::PagesRead, "tab-id")?;
        let id = self.page_id(&handle)?;
        let session = match self.session() {
            Ok(session) => session,
            Err(error) => return Ok(Err(error)),
        };
        let Some(endpoint) = session.browser_ws_endpoint() else {
            return Ok(Err("The browser is not connected.".into()));
        };
        let target = match session.page(id) {
            Ok(page) => page.page.target_id().inner().clone(),
            Err(error) => return Ok(Err(error)),
        };
        let tab = crate::browser::tab::tab_id(&endpoint, &target).await;
        if let Ok(tab) = &tab {
            self.response.tab_id = Some(tab.clone());
        }
        Ok(tab)
    }
}
