//! `devtools:tool/input` (`input`): acting on a page as a user would, each action reporting a
//! navigation it caused and landing-checked (file inputs are `files.rs`).

use super::function::{HostFunction as F, Marks as M};
use super::{Call, CallState, Outcome, PageHandle, or_return};
use crate::browser::page::Action;
use crate::runtime::calling::bindings::v0_3::devtools::tool::input;
use std::time::Duration;
use wasmtime::component::Resource;

const CLICK: F = F::new("input", "click", M::NAVIGATES.and(M::ON_PAGE));
const CLICK_AT: F = F::new("input", "click-at", M::NAVIGATES.and(M::ON_PAGE));
const HOVER: F = F::new("input", "hover", M::NAVIGATES.and(M::ON_PAGE));
const FILL: F = F::new("input", "fill", M::NAVIGATES.and(M::ON_PAGE));
const TYPE_TEXT: F = F::new("input", "type-text", M::NAVIGATES.and(M::ON_PAGE));
const PRESS_KEY: F = F::new("input", "press-key", M::NAVIGATES.and(M::ON_PAGE));
const DRAG: F = F::new("input", "drag", M::NAVIGATES.and(M::ON_PAGE));
/// Accepting a `beforeunload` dialog lets the page leave.
const HANDLE_DIALOG: F = F::new("input", "handle-dialog", M::NAVIGATES.and(M::ON_PAGE));
pub(super) const FUNCTIONS: &[&F] = &[
    &CLICK,
    &CLICK_AT,
    &HOVER,
    &FILL,
    &TYPE_TEXT,
    &PRESS_KEY,
    &DRAG,
    &HANDLE_DIALOG,
];

/// An input action, prepared on the page (its elements resolved while the session is held),
/// then performed on the page's link, with the session given back meanwhile (parallel pages);
/// it reports a navigation it caused.
pub(super) async fn act(
    call: &mut Call<'_>,
    handle: &Resource<PageHandle>,
    prepare: impl AsyncFnOnce(&mut crate::browser::McpPage) -> Result<Action, String>,
) -> Outcome<()> {
    let page = or_return!(call.page(handle).await?);
    let action = or_return!(prepare(page).await);
    let link = page.link();
    let performed = async move { link.perform(action).await };
    let navigated = or_return!(call.unlocked(performed).await);
    call.navigated(navigated);
    Ok(Ok(()))
}

impl input::Host for CallState {
    async fn click(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
        count: u32,
    ) -> Outcome<()> {
        self.dispatch(&CLICK, async |call| {
            act(call, &handle, async |page| page.click(&uid, count).await).await
        })
        .await
    }

    async fn click_at(
        &mut self,
        handle: Resource<PageHandle>,
        x: f64,
        y: f64,
        count: u32,
    ) -> Outcome<()> {
        self.dispatch(&CLICK_AT, async |call| {
            act(call, &handle, async |page| page.click_at(x, y, count)).await
        })
        .await
    }

    async fn hover(&mut self, handle: Resource<PageHandle>, uid: String) -> Outcome<()> {
        self.dispatch(&HOVER, async |call| {
            act(call, &handle, async |page| page.hover(&uid).await).await
        })
        .await
    }

    async fn fill(
        &mut self,
        handle: Resource<PageHandle>,
        uid: String,
        value: String,
    ) -> Outcome<()> {
        self.dispatch(&FILL, async |call| {
            act(call, &handle, async |page| page.fill(&uid, &value).await).await
        })
        .await
    }

    async fn type_text(
        &mut self,
        handle: Resource<PageHandle>,
        text: String,
        submit_key: Option<String>,
    ) -> Outcome<()> {
        self.dispatch(&TYPE_TEXT, async |call| {
            act(call, &handle, async |page| {
                Ok(page.type_text(&text, submit_key.as_deref()))
            })
            .await
        })
        .await
    }

    async fn press_key(&mut self, handle: Resource<PageHandle>, key: String) -> Outcome<()> {
        self.dispatch(&PRESS_KEY, async |call| {
            act(call, &handle, async |page| Ok(page.press_key(&key))).await
        })
        .await
    }

    async fn drag(
        &mut self,
        handle: Resource<PageHandle>,
        from_uid: String,
        to_uid: String,
    ) -> Outcome<()> {
        self.dispatch(&DRAG, async |call| {
            act(call, &handle, async |page| {
                page.drag(&from_uid, &to_uid).await
            })
            .await
        })
        .await
    }

    async fn handle_dialog(
        &mut self,
        handle: Resource<PageHandle>,
        accept: bool,
        prompt_text: Option<String>,
    ) -> Outcome<()> {
        self.dispatch(&HANDLE_DIALOG, async |call| {
            let page = or_return!(call.page(&handle).await?);
            let handled = page.handle_dialog(accept, prompt_text.as_deref()).await;
            // The closed event clears the state; wait for it so the response shows no dialog.
            page.wait_dialog_closed(Duration::from_secs(1)).await;
            Ok(handled)
        })
        .await
    }
}
