//! `--experimentalParallelPages`: a lock per page. A call that waits on its page (a text, a
//! load, a script, a capture) lets calls on the client's other pages run; calls on the same
//! page take turns; a page that stops answering is reported by its call, not left holding
//! every other.

use crate::support::{FixtureServer, McpServer, Route, ToolOutput};
use serde_json::{Value, json};
use std::time::Duration;

/// `--experimentalParallelPages`: a call waiting on a slow page does not hold up a call on
/// another page of the same client, while a call on the slow page itself still waits its turn;
/// without the flag every call waits (1.11.0's one lock per client).
#[tokio::test]
async fn a_slow_page_does_not_stall_calls_on_other_pages() {
    let pages = FixtureServer::start(vec![
        Route::html(
            "/slow",
            "<!doctype html><title>Slow</title><body><script>setTimeout(() => document.body.append('Ready now'), 3000)</script></body>",
        ),
        Route::html("/fast", "<!doctype html><title>Fast</title><p>Quick</p>"),
    ]);
    for parallel in [true, false] {
        let mut flags = vec!["--experimentalPageIdRouting"];
        if parallel {
            flags.push("--experimentalParallelPages");
        }
        let server = McpServer::start(&flags).await;
        let slow = crate::styles::selected_page_id(
            &server
                .call("new_page", json!({ "url": pages.url("/slow") }))
                .await
                .text,
        );
        let fast = crate::styles::selected_page_id(
            &server
                .call("new_page", json!({ "url": pages.url("/fast") }))
                .await
                .text,
        );
        let finished = std::sync::Mutex::new(Vec::new());
        let done = |name: &'static str| finished.lock().expect("order").push(name);
        let wait = async {
            let answer = server
                .call("wait_for", json!({ "pageId": slow, "text": ["Ready now"] }))
                .await;
            done("wait on the slow page");
            answer
        };
        // Both start once the wait holds its page.
        let other_page = async {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            let answer = server
                .call("take_snapshot", json!({ "pageId": fast }))
                .await;
            done("snapshot of the other page");
            answer
        };
        let same_page = async {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            let answer = server
                .call("take_snapshot", json!({ "pageId": slow }))
                .await;
            done("snapshot of the slow page");
            answer
        };
        let (waited, other, same) = tokio::join!(wait, other_page, same_page);
        assert!(waited.text.contains("Ready now"), "{}", waited.text);
        assert!(other.text.contains("Quick"), "{}", other.text);
        assert!(same.text.contains("Ready now"), "{}", same.text);
        let order = finished.into_inner().expect("order");
        let wait_at = order.iter().position(|name| name.starts_with("wait"));
        let other_at = order.iter().position(|name| name.contains("other"));
        let same_at = order.iter().position(|name| name.contains("of the slow"));
        assert!(same_at > wait_at, "parallel={parallel}: {order:?}");
        if parallel {
            assert!(other_at < wait_at, "parallel pages: {order:?}");
        } else {
            assert!(other_at > wait_at, "one lock: {order:?}");
        }
        server.shutdown().await;
    }
}

/// Runs `slow` on one page and, half a second later, a snapshot of `other_page`: the snapshot
/// must answer first. Returns the slow call's answer.
async fn other_page_answers_first(
    server: &McpServer,
    slow: (&str, Value),
    other_page: u64,
) -> ToolOutput {
    let finished = std::sync::Mutex::new(Vec::new());
    let slow_call = async {
        let answer = server.call(slow.0, slow.1.clone()).await;
        finished.lock().expect("order").push("slow");
        answer
    };
    let other_call = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let answer = server
            .call("take_snapshot", json!({ "pageId": other_page }))
            .await;
        finished.lock().expect("order").push("other");
        answer
    };
    let (slow_answer, other_answer) = tokio::join!(slow_call, other_call);
    assert!(other_answer.text.contains("Quick"), "{}", other_answer.text);
    assert_eq!(
        finished.into_inner().expect("order"),
        ["other", "slow"],
        "{}: {}",
        slow.0,
        slow_answer.text
    );
    slow_answer
}

/// A click and a script that run for seconds, a load that takes seconds, a snapshot of a busy
/// page and a renderer that spins forever: each holds only its own page, and each call on it
/// ends with its answer or a clear error within its timeout, after which the client's other
/// pages and the browser-wide tools are served as before. A script still unanswered after 30 s
/// stops the page's spinning script, so the page answers again.
#[tokio::test]
async fn busy_scripts_slow_loads_and_a_hung_renderer_hold_only_their_page() {
    let pages = FixtureServer::start(vec![
        Route::html(
            "/busy",
            "<!doctype html><title>Busy</title><p>Working</p><button onclick='const end = Date.now() + 3000; while (Date.now() < end) {}'>Spin</button>",
        ),
        // Busy for three seconds, a second after it loads.
        Route::html(
            "/busy-later",
            "<!doctype html><title>Later</title><p>Busy soon</p><script>onload = () => setTimeout(() => { const end = Date.now() + 3000; while (Date.now() < end) {} }, 1000)</script>",
        ),
        Route::html("/fast", "<!doctype html><title>Fast</title><p>Quick</p>"),
        Route::html(
            "/loaded",
            "<!doctype html><title>Loaded</title><p>Late page</p>",
        )
        .with_delay(Duration::from_secs(3)),
        // Spins forever once loaded: its renderer answers nothing again.
        Route::html(
            "/hung",
            "<!doctype html><title>Hung</title><script>setTimeout(() => { for (;;) {} }, 300)</script>",
        ),
    ]);
    let server =
        McpServer::start(&["--experimentalPageIdRouting", "--experimentalParallelPages"]).await;
    let open = async |path: &str| {
        crate::styles::selected_page_id(
            &server
                .call("new_page", json!({ "url": pages.url(path) }))
                .await
                .text,
        )
    };
    let busy = open("/busy").await;
    let fast = open("/fast").await;

    // A click whose handler keeps the page busy for three seconds.
    let snapshot = server
        .call("take_snapshot", json!({ "pageId": busy }))
        .await;
    let spin_button = crate::fixtures::uid_of(&snapshot.text, "button \"Spin\"");
    let clicked = other_page_answers_first(
        &server,
        ("click", json!({ "pageId": busy, "uid": spin_button })),
        fast,
    )
    .await;
    assert!(!clicked.is_error, "{}", clicked.text);

    // A script busy for three seconds.
    let spin =
        "() => { const end = Date.now() + 3000; while (Date.now() < end) {} return 'spun'; }";
    let evaluated = other_page_answers_first(
        &server,
        (
            "evaluate_script",
            json!({ "pageId": busy, "function": spin }),
        ),
        fast,
    )
    .await;
    assert!(evaluated.text.contains("spun"), "{}", evaluated.text);

    // A load that takes three seconds.
    let navigated = other_page_answers_first(
        &server,
        (
            "navigate_page",
            json!({ "pageId": busy, "type": "url", "url": pages.url("/loaded") }),
        ),
        fast,
    )
    .await;
    assert!(!navigated.is_error, "{}", navigated.text);
    let snapshot = server
        .call("take_snapshot", json!({ "pageId": busy }))
        .await;
    assert!(snapshot.text.contains("Late page"), "{}", snapshot.text);

    // A snapshot of a page whose script keeps its renderer busy: the tree is fetched with
    // the session given back.
    let moved = server
        .call(
            "navigate_page",
            json!({ "pageId": busy, "type": "url", "url": pages.url("/busy-later") }),
        )
        .await;
    assert!(!moved.is_error, "{}", moved.text);
    tokio::time::sleep(Duration::from_millis(1300)).await;
    let snapshot =
        other_page_answers_first(&server, ("take_snapshot", json!({ "pageId": busy })), fast).await;
    assert!(snapshot.text.contains("Busy soon"), "{}", snapshot.text);

    // A load past its timeout is reported, and the page answers the next call.
    let timed_out = server
        .call(
            "navigate_page",
            json!({ "pageId": busy, "type": "url", "url": pages.url("/loaded"), "timeout": 1000 }),
        )
        .await;
    assert!(
        timed_out
            .text
            .contains("Navigation timeout of 1000 ms exceeded"),
        "{}",
        timed_out.text
    );
    let evaluated = server
        .call(
            "evaluate_script",
            json!({ "pageId": busy, "function": "() => document.title" }),
        )
        .await;
    assert!(!evaluated.is_error, "{}", evaluated.text);

    // A renderer that spins forever: the wait on it ends at its timeout with an error, the other
    // page is served meanwhile, and so are the browser-wide tools afterwards.
    let hung = open("/hung").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let waited = other_page_answers_first(
        &server,
        (
            "wait_for",
            json!({ "pageId": hung, "text": ["never there"], "timeout": 1500 }),
        ),
        fast,
    )
    .await;
    assert!(waited.is_error, "{}", waited.text);
    assert!(waited.text.contains("Timed out"), "{}", waited.text);
    let listed = server.call("list_pages", json!({})).await;
    assert!(listed.text.contains("/hung"), "{}", listed.text);
    let fresh = open("/fast").await;
    let snapshot = server
        .call("take_snapshot", json!({ "pageId": fresh }))
        .await;
    assert!(snapshot.text.contains("Quick"), "{}", snapshot.text);

    // A script on the hung page gets no answer; after its 30 s the page's spinning script is
    // stopped, and the page answers again.
    let evaluated = other_page_answers_first(
        &server,
        (
            "evaluate_script",
            json!({ "pageId": hung, "function": "() => 1" }),
        ),
        fresh,
    )
    .await;
    assert!(
        evaluated.text.contains("The script was stopped"),
        "{}",
        evaluated.text
    );
    let revived = server
        .call(
            "evaluate_script",
            json!({ "pageId": hung, "function": "() => document.title" }),
        )
        .await;
    assert!(revived.text.contains("Hung"), "{}", revived.text);
    server.shutdown().await;
}
