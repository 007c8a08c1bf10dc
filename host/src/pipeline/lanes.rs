//! `--experimentalParallelPages`: a lane per page. A page-scoped call takes its page's lane
//! before the session (always in that order, so two calls never wait on each other); calls on
//! the same page queue on the lane, calls on other pages share only the session, which every
//! wait on Chromium gives back meanwhile: a host function's wait (`Call::unlocked`), and the
//! tree an answer's snapshot shows, fetched here before assembly.

use super::routing;
use super::tools::ToolEntry;
use crate::browser::page::snapshot::CapturedTree;
use crate::response::ResponseDraft;
use crate::session::{Session, SessionState};
use serde_json::{Map, Value};
use tokio::sync::OwnedMutexGuard;

/// The lane of the page `tool` will act on (as routing picks it now), taken, with the page's id.
pub(super) async fn page_lane(
    session: &Session,
    tool: &ToolEntry,
    arguments: &Map<String, Value>,
) -> Option<(u32, OwnedMutexGuard<()>)> {
    let page = {
        let state = session.lock().await;
        routing::target_page(tool, &mut arguments.clone(), &state).ok()??
    };
    Some((page, session.page_lane(page).lock_owned().await))
}

/// The tree the answer's snapshot (or `find_in_page`) shows of `page`, whose lane the call
/// holds, fetched with the session given back: on a big or busy page it is the longest wait of
/// the answer. The session is taken again, in turn, before this returns. `None` when the answer
/// shows no tree, or both.
pub(super) async fn prefetch_tree(
    session: &Session,
    state: OwnedMutexGuard<SessionState>,
    draft: &ResponseDraft,
    page: u32,
) -> (
    OwnedMutexGuard<SessionState>,
    Option<Result<CapturedTree, String>>,
) {
    let verbose = match (&draft.snapshot, &draft.find) {
        (Some(request), None) => request.verbose,
        (None, Some(_)) => false,
        _ => return (state, None),
    };
    let Ok(link) = state.page(page).map(|page| page.link()) else {
        return (state, None);
    };
    drop(state);
    let tree = link.capture_tree(verbose).await;
    (session.lock().await, Some(tree))
}
