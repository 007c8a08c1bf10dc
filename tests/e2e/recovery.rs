//! Recovery (`--experimentalRecovery`, beyond 1.11.0): after Chromium is killed, the next call
//! relaunches it, reopens the pages that were open at their URLs under the same ids, selects
//! the page that was selected, and says once what came back; ids are never given to another
//! page. Without the flag the relaunch is 1.11.0's (one blank page, new ids).

use crate::support::{FixtureServer, McpServer, Route, descendants, kill_all, wait_until_gone};
use serde_json::json;
use std::time::Duration;

const RECONNECTED: &str = "Note: the browser was restarted or reconnected since the last call.";

fn pages() -> FixtureServer {
    FixtureServer::start(vec![
        Route::html(
            "/first",
            "<!doctype html><title>First</title><p>the first page</p>",
        ),
        Route::html(
            "/second",
            "<!doctype html><title>Second</title><p>the second page</p>",
        ),
    ])
}

/// `1: First (url) [selected]`-style rows of `## Pages`.
fn page_rows(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|line| *line != "## Pages")
        .skip(1)
        .take_while(|line| !line.starts_with('#') && !line.is_empty())
        .map(String::from)
        .collect()
}

async fn kill_the_browser(server: &McpServer) {
    let browser = descendants(server.pid());
    assert!(!browser.is_empty(), "no browser process");
    kill_all(&browser);
    assert!(
        wait_until_gone(&browser, Duration::from_secs(10))
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn a_killed_browser_comes_back_with_its_pages_under_the_same_ids() {
    let pages = pages();
    let server = McpServer::start(&["--experimentalRecovery"]).await;
    let first = server
        .call("navigate_page", json!({ "url": pages.url("/first") }))
        .await;
    assert!(!first.is_error, "{}", first.text);
    let second = server
        .call("new_page", json!({ "url": pages.url("/second") }))
        .await;
    assert!(!second.is_error, "{}", second.text);
    let before = page_rows(&second.text);
    assert_eq!(before.len(), 2, "{}", second.text);
    // The first page selected again: the selection comes back too.
    let first_id: u32 = before[0]
        .split(':')
        .next()
        .expect("id")
        .parse()
        .expect("id");
    let selected = server
        .call("select_page", json!({ "pageId": first_id }))
        .await;
    assert!(!selected.is_error, "{}", selected.text);

    kill_the_browser(&server).await;
    let listed = server.call("list_pages", json!({})).await;
    assert!(!listed.is_error, "{}", listed.text);
    assert!(listed.text.starts_with(RECONNECTED), "{}", listed.text);
    assert!(
        listed.text.contains(
            "was started again; these pages were reopened at their last URLs, with the same ids: "
        ),
        "{}",
        listed.text
    );
    assert!(
        listed.text.contains(&pages.url("/second")),
        "{}",
        listed.text
    );
    let after = page_rows(&listed.text);
    assert_eq!(
        after,
        {
            let mut rows = before.clone();
            rows[0] = format!("{} [selected]", rows[0].trim_end_matches(" [selected]"));
            rows[1] = rows[1].trim_end_matches(" [selected]").to_string();
            rows
        },
        "{}",
        listed.text
    );

    // The reopened pages answer under their ids, and the note is said once.
    let snapshot = server.call("take_snapshot", json!({})).await;
    assert!(
        snapshot.text.contains("the first page"),
        "{}",
        snapshot.text
    );
    assert!(
        !snapshot.text.contains("started again"),
        "{}",
        snapshot.text
    );
    // A new page gets an id no page had.
    let third = server
        .call("new_page", json!({ "url": pages.url("/first") }))
        .await;
    let ids: Vec<u32> = page_rows(&third.text)
        .iter()
        .filter_map(|row| row.split(':').next()?.parse().ok())
        .collect();
    assert_eq!(ids.len(), 3, "{}", third.text);
    assert!(ids[2] > ids[1] && ids[1] > ids[0], "{ids:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn without_the_flag_a_relaunch_is_1_11_0s() {
    let pages = pages();
    let server = McpServer::start(&[]).await;
    let first = server
        .call("navigate_page", json!({ "url": pages.url("/first") }))
        .await;
    assert!(!first.is_error, "{}", first.text);
    kill_the_browser(&server).await;
    let listed = server.call("list_pages", json!({})).await;
    assert!(listed.text.starts_with(RECONNECTED), "{}", listed.text);
    assert!(!listed.text.contains("started again"), "{}", listed.text);
    assert!(!listed.text.contains("/first"), "{}", listed.text);
    server.shutdown().await;
}
