//! `devtools:tool/vision`: clicks at coordinates. The same effect as a click on an element,
//! so the same capability (`input`) and the same landing check.

use super::function::{HostFunction as F, Marks as M};
use super::{CallState, PageHandle, or_return};
use crate::policy::capability::Capability::Input;
use crate::runtime::bindings::devtools::tool::vision;
use wasmtime::component::Resource;

const CLICK_AT: F = F::new("vision", "click-at", &[Input], M::NAVIGATES);

pub(super) const FUNCTIONS: &[&F] = &[&CLICK_AT];

impl vision::Host for CallState {
    async fn click_at(
        &mut self,
        handle: Resource<PageHandle>,
        x: f64,
        y: f64,
        count: u32,
    ) -> wasmtime::Result<Result<(), String>> {
        self.dispatch(&CLICK_AT, async |call| {
            let page = or_return!(call.page(&handle)?);
            let navigated = or_return!(page.click_at(x, y, count).await);
            call.navigated(navigated);
            Ok(Ok(()))
        })
        .await
    }
}
