//! `devtools:tool/vision`: clicks at coordinates. The same effect as a click on an element,
//! so the same capability (`input`).

use super::{CallState, PageHandle};
use crate::plugin::bindings::devtools::tool::vision;
use crate::plugin::capability::Capability;
use wasmtime::component::Resource;

impl vision::Host for CallState {
    async fn click_at(
        &mut self,
        handle: Resource<PageHandle>,
        x: f64,
        y: f64,
        count: u32,
    ) -> wasmtime::Result<Result<(), String>> {
        self.require(Capability::Input, "click-at")?;
        let page = match self.page(&handle)? {
            Ok(page) => page,
            Err(error) => return Ok(Err(error)),
        };
        let outcome = page.click_at(x, y, count).await;
        Ok(outcome.map(|navigated| self.navigated(navigated)))
    }
}
