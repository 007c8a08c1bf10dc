//! `click_at` (`--experimentalVision`) and `get_tab_id` (hidden `--experimentalInteropTools`)
//! on fixture pages, with `pageId` passed explicitly so they pass with or without page-id
//! routing.

use crate::styles::selected_page_id;
use crate::support::{FixtureServer, McpServer, Route};
use serde_json::json;

/// A button filling the top-left 200x100 pixels that counts clicks and double clicks, and a
/// link below it.
const PAGE: &str = r#"<!doctype html>
<title>Vision</title>
<style>body { margin: 0 } button { position: absolute; left: 0; top: 0; width: 200px; height: 100px }
a { position: absolute; left: 0; top: 300px; width: 200px; height: 50px; display: block }</style>
<button onclick="window.clicks = (window.clicks || 0) + 1" ondblclick="window.doubles = (window.doubles || 0) + 1">Target</button>
<a href="/next.html">Next</a>
"#;

fn server() -> FixtureServer {
    FixtureServer::start(vec![
        Route::html("/vision.html", PAGE),
        Route::html("/next.html", "<title>Next</title><p>Arrived</p>"),
    ])
}

async fn counters(server: &McpServer, page: u64) -> String {
    let read = server
        .call(
            "evaluate_script",
            json!({ "pageId": page, "function": "() => [window.clicks || 0, window.doubles || 0]" }),
        )
        .await;
    assert!(!read.is_error, "{}", read.text);
    read.text
}

#[tokio::test]
async fn click_at_clicks_where_it_is_told() {
    let pages = server();
    let server = McpServer::start(&["--experimentalVision", "--experimentalPageIdRouting"]).await;
    let opened = server
        .call("new_page", json!({ "url": pages.url("/vision.html") }))
        .await;
    let page = selected_page_id(&opened.text);

    let click = server
        .call("click_at", json!({ "pageId": page, "x": 100, "y": 50 }))
        .await;
    assert!(!click.is_error, "{}", click.text);
    assert!(
        click
            .text
            .starts_with("# click_at response\nSuccessfully clicked at the coordinates")
            || click
                .text
                .starts_with("Successfully clicked at the coordinates"),
        "{}",
        click.text
    );
    assert!(counters(&server, page).await.contains("[1,0]"));

    let double = server
        .call(
            "click_at",
            json!({ "pageId": page, "x": 10.5, "y": 90, "dblClick": true, "includeSnapshot": true }),
        )
        .await;
    assert!(!double.is_error, "{}", double.text);
    assert!(
        double
            .text
            .contains("Successfully double clicked at the coordinates"),
        "{}",
        double.text
    );
    assert!(
        double.text.contains("## Latest page snapshot"),
        "{}",
        double.text
    );
    // A double click is two clicks and one dblclick, as in Puppeteer.
    assert!(counters(&server, page).await.contains("[3,1]"));

    // Outside the button: nothing counted.
    let miss = server
        .call("click_at", json!({ "pageId": page, "x": 500, "y": 200 }))
        .await;
    assert!(!miss.is_error, "{}", miss.text);
    assert!(counters(&server, page).await.contains("[3,1]"));

    let navigate = server
        .call("click_at", json!({ "pageId": page, "x": 50, "y": 320 }))
        .await;
    assert!(!navigate.is_error, "{}", navigate.text);
    assert!(
        navigate
            .text
            .contains(&format!("Page navigated to {}.", pages.url("/next.html"))),
        "{}",
        navigate.text
    );

    let bad = server
        .call("click_at", json!({ "pageId": page, "x": "left", "y": 1 }))
        .await;
    assert!(bad.is_error, "{}", bad.text);
    server.shutdown().await;
}

#[tokio::test]
async fn click_at_and_get_tab_id_are_gated_by_their_flags() {
    let server = McpServer::start(&[]).await;
    let names: Vec<String> = server
        .list_tools()
        .await
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert!(!names.iter().any(|name| name == "click_at"), "{names:?}");
    assert!(!names.iter().any(|name| name == "get_tab_id"), "{names:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn get_tab_id_names_the_tab_of_each_page() {
    let pages = server();
    let server = McpServer::start(&[
        "--experimentalInteropTools",
        "--experimentalPageIdRouting",
        "--experimentalStructuredContent",
    ])
    .await;
    let first = selected_page_id(
        &server
            .call("new_page", json!({ "url": pages.url("/vision.html") }))
            .await
            .text,
    );
    let second = selected_page_id(
        &server
            .call("new_page", json!({ "url": pages.url("/next.html") }))
            .await
            .text,
    );
    let tab_of = |page: u64| {
        let server = &server;
        async move {
            let output = server.call("get_tab_id", json!({ "pageId": page })).await;
            assert!(!output.is_error, "{}", output.text);
            let id = output
                .text
                .lines()
                .find_map(|line| line.strip_prefix("Tab ID: "))
                .unwrap_or_else(|| panic!("no tab id in {}", output.text))
                .to_string();
            let structured = output.structured.expect("structured content");
            assert_eq!(structured["tabId"], json!(id));
            id
        }
    };
    let first_tab = tab_of(first).await;
    let second_tab = tab_of(second).await;
    for id in [&first_tab, &second_tab] {
        assert_eq!(id.len(), 32, "{id}");
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
    }
    assert_ne!(first_tab, second_tab);
    assert_eq!(tab_of(first).await, first_tab, "the id is stable");
    server.shutdown().await;
}
