//! `devtools:tool/styles`: an element's CSS cascade, read by the host.

use super::function::{HostFunction as F, Marks as M};
use super::{CallState, PageHandle, or_return};
use crate::browser::features;
use crate::runtime::calling::bindings::v0_3::devtools::tool::styles;
use wasmtime::component::Resource;

const GET_CSS_STYLES: F = F::new("styles", "get-css-styles", M::PAGE_CONTENT.and(M::ON_PAGE));

pub(super) const FUNCTIONS: &[&F] = &[&GET_CSS_STYLES];

impl styles::Host for CallState {
    async fn get_css_styles(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
        page_size: u32,
        page_idx: u32,
    ) -> wasmtime::Result<Result<Vec<String>, String>> {
        self.dispatch(&GET_CSS_STYLES, async |call| {
            let page = or_return!(call.page(&handle).await?);
            Ok(features::styles::Styles::of(page)
                .css_styles(&uid, page_size, page_idx)
                .await)
        })
        .await
    }
}
