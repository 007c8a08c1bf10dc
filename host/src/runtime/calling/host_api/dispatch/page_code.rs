//! Page code a call started does not outlive it (a plugin without `long-lived`): where the
//! timers of each page stood before the call first ran page code on it, and at the call's end
//! the timers set since cleared (`call_timers`, cross-process iframes included) and the
//! dedicated workers started since stopped (`call_workers`). A page the call opened (one
//! handed to the guest, or a popup of one of the call's pages) is the call's whole: all of
//! its timers are cleared and all of its workers stopped.

use super::super::CLEANUP_TIMEOUT;
use super::{Call, CallState};
use crate::browser::features::call_timers::{self, TimerMark};
use crate::browser::features::call_workers;
use crate::policy::capability::Capability;
use crate::runtime::calling::host_api::function::Marks;
use crate::session::SessionState;

impl Call<'_> {
    /// Before a function that runs page code first acts on page `id` in a call whose policy
    /// does not grant `long-lived`: where the page's timers stand, so that the ones its code
    /// sets from now on are cleared when the call ends ([`CallState::clean_up`]).
    pub(super) async fn mark_timers(&mut self, id: u32) {
        let state = &mut *self.state;
        if !self.function.marks.has(Marks::NAVIGATES)
            || state.grants.grants(Capability::LongLived)
            || state.timer_marks.iter().any(|(known, _)| *known == id)
        {
            return;
        }
        let Some(page) = state
            .session
            .as_deref()
            .and_then(|session| session.page(id).ok())
        else {
            return;
        };
        let mark = call_timers::mark(page).await;
        state.timer_marks.push((id, mark));
    }
}

impl CallState {
    /// Ends the page code the call started: on each page it ran page code on, the timers
    /// set and the workers started since its mark; on each page it opened, all of them. A
    /// page whose worker did not stop when asked is sent to about:blank (its workers end with
    /// its document), and the answer says so.
    pub(super) async fn end_page_code(&mut self) {
        let mut marks = std::mem::take(&mut self.timer_marks);
        let before = self.pages_before_page_code.take();
        let handed = std::mem::take(&mut self.handed_in_call);
        let Some(session) = self.session.as_deref_mut() else {
            return;
        };
        if let Some(before) = before {
            for id in opened_by_call(session, &before, &marks, &handed).await {
                marks.retain(|(known, _)| *known != id);
                marks.push((id, TimerMark::everything()));
            }
        }
        for (page_id, mark) in &marks {
            let Ok(page) = session.page(*page_id) else {
                continue;
            };
            let cleared = call_timers::clear_since(page, mark).await;
            let workers = call_workers::stop_started_since(page, mark.since()).await;
            tracing::debug!(page_id, cleared, ?workers, "the call's page code ended");
            if workers.refused > 0 {
                let blank = crate::browser::cdp(
                    "Page.navigate",
                    serde_json::json!({ "url": "about:blank" }),
                );
                let _left = tokio::time::timeout(CLEANUP_TIMEOUT, page.cdp().execute(blank)).await;
                self.response.lines.push(format!(
                    "Page {page_id} was sent to about:blank: {} worker{} its page code started during this tool's call did not stop when asked (its policy does not grant `long-lived`).",
                    workers.refused,
                    if workers.refused == 1 { "" } else { "s" }
                ));
            }
        }
    }
}

/// The pages that appeared since `before` and are the call's: handed to its guest (a new
/// page), or opened by one of its pages (a popup), or by one of those in turn. A page another
/// call opened meanwhile is not this call's.
async fn opened_by_call(
    session: &mut SessionState,
    before: &[u32],
    marked: &[(u32, TimerMark)],
    handed: &[u32],
) -> Vec<u32> {
    session.sync_pages().await;
    let mut ours: Vec<_> = marked
        .iter()
        .map(|(id, _)| id)
        .chain(handed)
        .filter_map(|id| session.page(*id).ok())
        .map(|page| page.cdp().target_id().clone())
        .collect();
    let new: Vec<u32> = session
        .page_ids()
        .into_iter()
        .filter(|id| !before.contains(id))
        .collect();
    let mut opened = Vec::new();
    loop {
        let found: Vec<u32> = new
            .iter()
            .copied()
            .filter(|id| !opened.contains(id))
            .filter(|id| {
                handed.contains(id)
                    || session.page(*id).is_ok_and(|page| {
                        page.cdp()
                            .opener_id()
                            .as_ref()
                            .is_some_and(|opener| ours.contains(opener))
                    })
            })
            .collect();
        if found.is_empty() {
            return opened;
        }
        for id in found {
            if let Ok(page) = session.page(id) {
                ours.push(page.cdp().target_id().clone());
            }
            opened.push(id);
        }
    }
}
