//! Snapshots of pages with iframes: a cross-origin iframe runs in a renderer of its own
//! (site isolation, on by default), so its tree is reached through its own target, as the
//! reference's `includeIframes` does. Its uids must be unique within the snapshot and usable
//! like any other.

use crate::fixtures::uid_of;
use crate::support::{FixtureServer, McpServer, Route};
use serde_json::json;
use std::collections::HashSet;

const INNER: &str = r#"<!doctype html>
<html><head><title>Inner</title></head>
<body>
  <h2>Inside the frame</h2>
  <button onclick="document.getElementById('said').textContent = 'Inner button clicked'">Inner button</button>
  <p id="said">waiting</p>
</body></html>"#;

/// The outer page on 127.0.0.1 framing the inner one on `localhost`: another site, so
/// another process.
fn outer(port: u16) -> String {
    format!(
        r#"<!doctype html>
<html><head><title>Outer</title></head>
<body>
  <h1>Outer page</h1>
  <button>Outer button</button>
  <iframe src="http://localhost:{port}/inner" title="cross"></iframe>
</body></html>"#
    )
}

#[tokio::test]
async fn cross_origin_iframes_are_in_the_snapshot_with_unique_clickable_uids() {
    // The outer page needs the port before the server exists: serve it from a second
    // server that knows the first one's port.
    let inner = FixtureServer::start(vec![Route::html("/inner", INNER)]);
    let pages = FixtureServer::start(vec![Route::html("/outer", outer(inner.port()))]);
    let server = McpServer::start(&[]).await;
    let opened = server
        .call("navigate_page", json!({ "url": pages.url("/outer") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    // The frame loads after the outer page's load event at the latest; wait for its text.
    let waited = server
        .call("wait_for", json!({ "text": ["Inside the frame"] }))
        .await;
    let snapshot = server.call("take_snapshot", json!({})).await;
    assert!(!snapshot.is_error, "{}", snapshot.text);
    let text = snapshot.text;
    assert!(text.contains("button \"Outer button\""), "{text}");
    assert!(text.contains("Iframe"), "{text}");
    assert!(
        text.contains("button \"Inner button\""),
        "the cross-process frame is missing (wait_for said: {}):\n{text}",
        waited.text
    );
    let uids: Vec<&str> = text
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("uid="))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    let unique: HashSet<&&str> = uids.iter().collect();
    assert_eq!(unique.len(), uids.len(), "repeated uids:\n{text}");

    let inner_button = uid_of(&text, "button \"Inner button\"");
    let clicked = server
        .call(
            "click",
            json!({ "uid": inner_button, "includeSnapshot": true }),
        )
        .await;
    assert!(!clicked.is_error, "{}", clicked.text);
    assert!(
        clicked.text.contains("\"Inner button clicked\""),
        "{}",
        clicked.text
    );
    server.shutdown().await;
}
