use super::*;
use crate::policy::capability::Grants;

const SAYS_PAGE: HostFunction = HostFunction::new("pages", "test-page-words", Marks::PAGE_CONTENT);
const PLAIN: HostFunction = HostFunction::new("pages", "test-plain", Marks::NONE);

/// A call under `--experimentalFencePageContent`.
fn call_state() -> CallState {
    let mut state = CallState::new(None, Arc::new(Grants::all("test")), Limits::default());
    state.fence_page_content();
    state
}

/// Everything a function marked as carrying page content answers is recorded as
/// page-written, whatever its body does (its error too); unmarked functions record only
/// their errors.
#[tokio::test]
async fn the_answers_of_page_content_functions_are_recorded_whatever_the_body_does() {
    let mut state = call_state();
    let lines = vec!["## WebMCP tools".to_string(), "a title\nsecond".to_string()];
    let answered = state
        .dispatch(&SAYS_PAGE, async |_call| Ok(Ok::<_, String>(lines)))
        .await
        .expect("answered");
    assert_eq!(answered.expect("lines").len(), 2);
    let failed = state
        .dispatch(&SAYS_PAGE, async |_call| {
            Ok(Err::<(), _>("thrown by the page".to_string()))
        })
        .await;
    assert!(failed.expect("answered").is_err());
    let written = &state.response.page_written;
    for line in ["title: a title", "second", "error: thrown by the page"] {
        assert!(written.carried_by(line), "{line}");
    }
    assert!(!written.carried_by("## WebMCP tools"));
    let mut plain = call_state();
    let answer = plain
        .dispatch(&PLAIN, async |_call| Ok("host words".to_string()))
        .await;
    assert_eq!(answer.expect("answered"), "host words");
    assert!(plain.response.page_written.is_empty());
    // Any function's error may quote the page: recorded all the same.
    let failed = plain
        .dispatch(&PLAIN, async |_call| {
            Ok(Err::<u32, _>("the page threw this".to_string()))
        })
        .await;
    assert!(failed.expect("answered").is_err());
    assert!(
        plain
            .response
            .page_written
            .carried_by("Error: the page threw this")
    );
    // Without the flag nothing is fenced, so nothing is recorded (no work per call).
    let mut unfenced = CallState::new(None, Arc::new(Grants::all("test")), Limits::default());
    let _ = unfenced
        .dispatch(&SAYS_PAGE, async |_call| Ok(vec!["a title".to_string()]))
        .await;
    assert!(unfenced.response.page_written.is_empty());
}

/// A body reaches a page only as a function marked `ON_PAGE`: an unmarked one that tries
/// is stopped (so the page-scope check cannot be skipped by a mislabelled function), a
/// marked one gets the id.
#[tokio::test]
async fn only_functions_marked_on_a_page_reach_one() {
    const ON: HostFunction = HostFunction::new("pages", "test-on-page", Marks::ON_PAGE);
    let mut state = call_state();
    let handle = state.table.push(PageHandle { id: 7 }).expect("a handle");
    let unmarked = state
        .dispatch(&PLAIN, async |call| call.page_id(&handle).await)
        .await;
    assert!(
        unmarked
            .expect_err("stopped")
            .to_string()
            .contains("reached a page without being marked as acting on one")
    );
    let marked = state
        .dispatch(&ON, async |call| call.page_id(&handle).await)
        .await;
    assert_eq!(marked.expect("reached"), 7);
}

/// Whether the session is free while a call with these grants waits in `unlocked`.
async fn free_while_waiting(grants: Grants, parallel: bool) -> bool {
    let sandbox = crate::sandbox::Sandbox::new(Vec::new()).expect("a sandbox");
    let session = crate::session::Session::new(Default::default(), sandbox);
    let mut state = CallState::new(
        Some(session.lock().await),
        Arc::new(grants),
        Limits::default(),
    );
    if parallel {
        state.allow_parallel_pages();
    }
    let free = state
        .dispatch(&PLAIN, async |call| {
            Ok(call.unlocked(async { session.try_lock().is_some() }).await)
        })
        .await
        .expect("answered");
    assert!(state.take_session().is_some(), "the session is taken back");
    free
}

/// A call stopped in the middle of a wait (its wall clock) takes the released session back
/// when it is cleaned up, so its init scripts and effects are still undone.
#[tokio::test]
async fn a_call_stopped_during_a_wait_takes_the_session_back_to_clean_up() {
    let sandbox = crate::sandbox::Sandbox::new(Vec::new()).expect("a sandbox");
    let session = crate::session::Session::new(Default::default(), sandbox);
    let mut state = CallState::new(
        Some(session.lock().await),
        Arc::new(Grants::all("built-in")),
        Limits::default(),
    );
    state.allow_parallel_pages();
    let waiting = state.dispatch(&PLAIN, async |call| {
        call.unlocked(std::future::pending::<()>()).await;
        Ok(())
    });
    let stopped = tokio::time::timeout(std::time::Duration::from_millis(50), waiting).await;
    assert!(stopped.is_err(), "the wait never ends");
    assert!(session.try_lock().is_some(), "released while waiting");
    state.clean_up().await.expect("cleaned up");
    assert!(state.take_session().is_some(), "taken back");
}

/// Parallel pages release the session during a wait, except for a plugin held to URL
/// patterns (its sweep would take other calls' page moves for its own).
#[tokio::test]
async fn waits_release_the_session_only_for_calls_free_of_url_patterns() {
    assert!(free_while_waiting(Grants::all("built-in"), true).await);
    assert!(!free_while_waiting(Grants::all("built-in"), false).await);
    let patterns = ["http://127.0.0.1/*".to_string()];
    let pages = [crate::policy::capability::Capability::PagesRead]
        .into_iter()
        .collect();
    let restricted = Grants::new("plugin", pages, Some(&patterns)).expect("grants");
    assert!(!free_while_waiting(restricted, true).await);
}
