//! `devtools:tool/styles`: an element's CSS cascade, read by the host.

use super::{CallState, PageHandle};
use crate::plugin::bindings::devtools::tool::styles;
use crate::plugin::capability::Capability;
use wasmtime::component::Resource;

impl styles::Host for CallState {
    async fn get_css_styles(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
        page_size: u32,
        page_idx: u32,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.require(Capability::Styles, "get-css-styles")?;
        let page = match self.page(&handle)? {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        };
        Ok(page.css_styles(&uid, page_size, page_idx).await)
    }
}
