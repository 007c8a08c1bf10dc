//! Clients that do not keep sessions: a client that opens a new MCP session for every call, or
//! sends stateless (2026-07-28) requests, keeps its tenant's pages between calls until the
//! tenant's idle timeout.

use crate::support::{FixtureServer, HttpServer, Route, TenantSpec};
use crate::tenant_quotas::{post, stateless_call};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_per_call_keeps_the_tenants_pages() {
    let pages = FixtureServer::start(vec![Route::html(
        "/kept",
        "<!doctype html><title>Kept page</title><p>kept</p>",
    )]);
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice").on_loopback()],
        &[],
    )
    .await;
    let first = server.connect("token-alice").await;
    let opened = first
        .call("new_page", json!({ "url": pages.url("/kept") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    first.close().await;

    // A new session, as a client that connects for each call does.
    let second = server.connect("token-alice").await;
    let listed = second.call("list_pages", json!({})).await;
    assert!(
        listed
            .text
            .contains(&format!("Kept page ({}) [selected]", pages.url("/kept"))),
        "{}",
        listed.text
    );
    let read = second
        .call(
            "evaluate_script",
            json!({ "function": "() => document.title" }),
        )
        .await;
    assert!(read.text.contains("Kept page"), "{}", read.text);
    second.close().await;

    // No session at all: a stateless request sees them too.
    let (status, _, text) = post(
        &server,
        "token-alice",
        "2026-07-28",
        stateless_call(7, "list_pages"),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("Kept page"), "{text}");
}
