//! A person in the loop under `serve` (issue 48 item 4): tenant A's `request_human` opens a
//! live view on the server's own HTTP listener, bound to A and, once opened, to the person's
//! browser by a cookie. A real Chromium (another server, driven through its own tools) opens
//! the URL the client got by URL-mode elicitation, signs in through the screencast and presses
//! Done; A's next snapshot shows the login. Tenant B's bearer token, the URL opened again in a
//! fresh browser context, and the ended view are all refused; B, which did not opt in, has no
//! `request_human`.

use crate::live_view::{How, LOGIN, Person, WELCOME, call_full, signs_in_through};
use crate::support::{FixtureServer, HttpServer, McpServer, Route, TenantSpec, timeout};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;
use tokio::sync::mpsc;

/// `GET url` from a client that is no browser, with `token` as its bearer if given.
async fn status_of(url: &str, token: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

#[tokio::test]
async fn a_tenants_person_signs_in_on_its_endpoint_and_no_one_else_opens_the_view() {
    let pages = FixtureServer::start(vec![
        Route::html("/", LOGIN),
        Route::html("/welcome", WELCOME),
    ]);
    let server = HttpServer::start(
        &[
            TenantSpec::new("alice", "token-alice")
                .on_loopback()
                .with("flags = { experimentalHumanInTheLoop = true }"),
            TenantSpec::new("bob", "token-bob").on_loopback(),
        ],
        &["--experimentalHumanInTheLoop"],
    )
    .await;

    // Bob did not opt in: no request_human, and a call says how to get it.
    let bob = server.connect("token-bob").await;
    assert!(
        !bob.tool_names()
            .await
            .contains(&"request_human".to_string())
    );
    let refused = bob
        .call("request_human", json!({ "reason": "Sign in" }))
        .await;
    assert!(refused.is_error, "{}", refused.text);
    assert!(
        refused.text.contains("experimentalHumanInTheLoop = true"),
        "{}",
        refused.text
    );

    // Alice's client takes URL-mode elicitations.
    let (urls, mut received) = mpsc::unbounded_channel();
    let config = StreamableHttpClientTransportConfig::with_uri(server.mcp_url())
        .auth_header("token-alice")
        .max_concurrent_requests(8);
    let alice = tokio::time::timeout(
        timeout(),
        Person {
            urls,
            how: How::Elicitation,
        }
        .serve(StreamableHttpClientTransport::from_config(config)),
    )
    .await
    .expect("initialize in time")
    .expect("initialize");
    let navigated = call_full(
        alice.peer().clone(),
        "navigate_page",
        json!({ "url": pages.url("/") }),
        false,
    )
    .await;
    assert!(!navigated.0, "{}", navigated.1);
    let arguments = json!({ "reason": "Sign in as alice", "timeoutSeconds": 100 });
    let asked = tokio::spawn(call_full(
        alice.peer().clone(),
        "request_human",
        arguments,
        false,
    ));
    let (url, message) = tokio::time::timeout(timeout(), received.recv())
        .await
        .expect("the URL in time")
        .expect("the URL");
    assert!(message.contains("Sign in as alice"), "{message}");
    // On the server's own listener, never a port of its own.
    assert!(url.starts_with(&format!("{}/live/", server.base)), "{url}");

    // Bob's token does not open Alice's view, even before anyone has.
    let (status, body) = status_of(&url, Some("token-bob")).await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("No live view here"), "{body}");

    // The person's browser opens it first, and gets the view.
    let person = McpServer::start(&["--experimentalVision"]).await;
    let opened = person.call("navigate_page", json!({ "url": url })).await;
    assert!(!opened.is_error, "{}", opened.text);
    let live = person.call("wait_for", json!({ "text": ["Live."] })).await;
    assert!(!live.is_error, "{}", live.text);

    // The same URL from a fresh browser context (no cookie) is refused, and so is the
    // frame stream without the cookie.
    let again = person
        .call(
            "new_page",
            json!({ "url": url, "isolatedContext": "another-person" }),
        )
        .await;
    assert!(!again.is_error, "{}", again.text);
    let seen = person.call("take_snapshot", json!({})).await;
    assert!(seen.text.contains("No live view here"), "{}", seen.text);
    // The refusal itself, not a viewer that failed afterwards.
    assert!(!seen.text.contains("The agent asks"), "{}", seen.text);
    assert_eq!(status_of(&url, None).await.0, 404);
    assert_eq!(status_of(&format!("{url}frame"), None).await.0, 404);
    let back = person.call("select_page", json!({ "pageId": 1 })).await;
    assert!(!back.is_error, "{}", back.text);
    assert!(!asked.is_finished(), "request_human returned before Done");

    signs_in_through(&person).await;
    let (error, answer, _task) = tokio::time::timeout(timeout(), asked)
        .await
        .expect("request_human returned after Done")
        .expect("the call's task");
    assert!(!error, "{answer}");
    assert!(answer.contains("The person pressed Done after"), "{answer}");
    let (error, snapshot, _) =
        call_full(alice.peer().clone(), "take_snapshot", json!({}), false).await;
    assert!(!error, "{snapshot}");
    assert!(snapshot.contains("Signed in as alice"), "{snapshot}");

    // The ended view is refused even to the browser holding its cookie.
    let reopened = person.call("navigate_page", json!({ "url": url })).await;
    assert!(!reopened.is_error, "{}", reopened.text);
    let seen = person.call("take_snapshot", json!({})).await;
    assert!(seen.text.contains("No live view here"), "{}", seen.text);

    let _closed = alice.cancel().await;
    bob.close().await;
    person.shutdown().await;
}
