//! Quotas a tenant's own pages and requests cannot walk around: popups count against
//! `max_pages`, a call stopped by its budget stops its script, a page past the renderer memory
//! cap is closed, requests without a session count like session requests, rate and
//! concurrency limits, and abandoned sessions give their places back.

use crate::support::{FixtureServer, HttpServer, Route, TenantSpec};
use serde_json::json;
use std::time::{Duration, Instant};

fn fixtures() -> FixtureServer {
    FixtureServer::start(vec![
        Route::html(
            "/page",
            "<!doctype html><title>Fixture</title><p>fixture page body</p>",
        ),
        Route::html(
            "/popups",
            "<!doctype html><title>Popups</title><script>for (let i = 0; i < 20; i++) window.open('about:blank#' + i);</script><button onclick=\"window.open('about:blank#clicked')\">open one</button>",
        ),
    ])
}

fn page_count(listing: &str) -> usize {
    listing
        .lines()
        .filter(|line| {
            line.split_once(": ")
                .is_some_and(|(id, _)| id.trim().parse::<u64>().is_ok())
        })
        .count()
}

/// The uid of the first `button` line of a snapshot.
fn button_uid(snapshot: &str) -> String {
    snapshot
        .lines()
        .find(|line| line.contains("button"))
        .and_then(|line| line.trim().strip_prefix("uid="))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no button in {snapshot}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn popups_and_window_open_count_against_max_pages() {
    let pages = fixtures();
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice")
            .on_loopback()
            .with("max_pages = 2")],
        &[],
    )
    .await;
    let alice = server.connect("token-alice").await;
    // Without a user gesture the popup blocker stops them all.
    let opened = alice
        .call("navigate_page", json!({ "url": pages.url("/popups") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let spawned = alice
        .call(
            "evaluate_script",
            json!({ "function": "() => { let opened = 0; for (let i = 0; i < 10; i++) { if (window.open('about:blank#g' + i)) opened++; } return 'opened ' + opened; }" }),
        )
        .await;
    assert!(spawned.text.contains("opened 0"), "{}", spawned.text);
    let listed = alice.call("list_pages", json!({})).await;
    assert_eq!(page_count(&listed.text), 1, "{}", listed.text);
    // Each click (a user gesture) opens one; past the quota they are closed, with a note.
    let snapshot = alice.call("take_snapshot", json!({})).await;
    let uid = button_uid(&snapshot.text);
    let mut answers = String::new();
    for _ in 0..3 {
        let clicked = alice.call("click", json!({ "uid": uid })).await;
        answers.push_str(&clicked.text);
        answers.push('\n');
        let listed = alice.call("list_pages", json!({})).await;
        answers.push_str(&listed.text);
        assert!(page_count(&listed.text) <= 2, "{}", listed.text);
        let _selected = alice
            .call(
                "select_page",
                json!({ "pageId": page_ids(&listed.text)[0] }),
            )
            .await;
    }
    assert!(
        answers.contains("may have at most 2 open pages"),
        "no note of the closed popups: {answers}"
    );
    alice.close().await;
}

fn page_ids(listing: &str) -> Vec<u64> {
    listing
        .lines()
        .filter_map(|line| line.split_once(": ")?.0.trim().parse().ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_stopped_by_its_budget_stops_the_script_it_started() {
    let pages = fixtures();
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice")
            .on_loopback()
            .with("call_timeout_secs = 8")],
        &[],
    )
    .await;
    let alice = server.connect("token-alice").await;
    // The browser starts within the first call's budget: start it first.
    let warm = alice.call("list_pages", json!({})).await;
    assert!(!warm.is_error, "{}", warm.text);
    let opened = alice
        .call("navigate_page", json!({ "url": pages.url("/page") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let spin = alice
        .call(
            "evaluate_script",
            json!({ "function": "() => { while (true) {} }" }),
        )
        .await;
    assert!(spin.is_error, "{}", spin.text);
    assert!(spin.text.contains("budget"), "{}", spin.text);
    // The page answers again: its renderer is no longer spinning.
    let started = Instant::now();
    let next = alice
        .call("evaluate_script", json!({ "function": "() => 6 * 7" }))
        .await;
    assert!(!next.is_error, "the page still spins: {}", next.text);
    assert!(next.text.contains("42"), "{}", next.text);
    assert!(started.elapsed() < Duration::from_secs(3));
    alice.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_past_the_renderer_memory_cap_is_closed_with_a_note() {
    let pages = fixtures();
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice")
            .on_loopback()
            .with("renderer_memory_mib = 64\ncall_timeout_secs = 40")],
        &[],
    )
    .await;
    let alice = server.connect("token-alice").await;
    let opened = alice
        .call("new_page", json!({ "url": pages.url("/page") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let hog = alice
        .call(
            "evaluate_script",
            json!({ "function": "async () => { window.hog = []; for (let i = 0; i < 60; i++) { window.hog.push(new Array(1 << 20).fill(i)); await new Promise(r => setTimeout(r, 100)); } return 'survived ' + window.hog.length; }" }),
        )
        .await;
    let listed = alice.call("list_pages", json!({})).await;
    let text = format!("{}\n{}", hog.text, listed.text);
    assert!(!hog.text.contains("survived"), "{text}");
    assert!(
        text.contains("renderer_memory_mib of 64 MiB"),
        "no note of the closed page: {text}"
    );
    assert!(
        !listed.text.contains("fixture page body"),
        "{}",
        listed.text
    );
    alice.close().await;
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// A `tools/call` without a session: the 2026-07-28 protocol, its metadata in the request.
pub(crate) fn stateless_call(id: u32, tool: &str) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    })
    .to_string()
}

pub(crate) async fn post(
    server: &HttpServer,
    token: &str,
    version: &str,
    body: String,
) -> (u16, Option<String>, String) {
    let mut request = reqwest::Client::new().post(server.mcp_url());
    if version == "2026-07-28" {
        // The 2026-07-28 transport names the method in a header too.
        request = request
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "list_pages");
    }
    let response = request
        .bearer_auth(token)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", version)
        .timeout(Duration::from_secs(30))
        .body(body)
        .send()
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .map(String::from);
    let text = tokio::time::timeout(Duration::from_secs(20), response.text())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    (status, session, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_a_session_count_against_the_tenants_quotas() {
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice").with("max_sessions = 1")],
        &[],
    )
    .await;
    let (status, _, text) = post(
        &server,
        "token-alice",
        "2026-07-28",
        stateless_call(1, "list_pages"),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("Pages"), "a stateless call is served: {text}");
    let (status, session, text) =
        post(&server, "token-alice", "2025-06-18", INITIALIZE.into()).await;
    assert_eq!(status, 200, "{text}");
    assert!(session.is_some());
    // The tenant's one session place is taken: a stateless call is refused like a session.
    let (_, _, text) = post(
        &server,
        "token-alice",
        "2026-07-28",
        stateless_call(2, "list_pages"),
    )
    .await;
    assert!(text.contains("max_sessions"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_past_its_request_rate_gets_429_and_others_do_not() {
    let server = HttpServer::start(
        &[
            TenantSpec::new("noisy", "token-noisy").with("requests_per_minute = 5"),
            TenantSpec::new("quiet", "token-quiet"),
        ],
        &[],
    )
    .await;
    let mut statuses = Vec::new();
    for index in 0..8 {
        let (status, _, _) = post(
            &server,
            "token-noisy",
            "2026-07-28",
            stateless_call(index, "list_pages"),
        )
        .await;
        statuses.push(status);
    }
    assert!(
        statuses[..5].iter().all(|status| *status == 200),
        "{statuses:?}"
    );
    assert!(
        statuses[5..].iter().all(|status| *status == 429),
        "{statuses:?}"
    );
    let (status, _, _) = post(
        &server,
        "token-quiet",
        "2026-07-28",
        stateless_call(1, "list_pages"),
    )
    .await;
    assert_eq!(status, 200, "another tenant is not limited");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_past_its_concurrent_calls_is_refused_at_once() {
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice").with("max_concurrent_calls = 1")],
        &[],
    )
    .await;
    let alice = server.connect("token-alice").await;
    let warm = alice.call("list_pages", json!({})).await;
    assert!(!warm.is_error, "{}", warm.text);
    let slow = alice.call_raw(
        "evaluate_script",
        json!({ "function": "() => new Promise(resolve => setTimeout(() => resolve('slow done'), 3000))" }),
    );
    let second = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        alice.call_raw("list_pages", json!({})).await
    };
    let (slow, second) = tokio::join!(slow, second);
    let slow = slow.expect("the slow call");
    assert!(slow.text.contains("slow done"), "{}", slow.text);
    let second = second.expect("an answer");
    assert!(second.is_error, "{}", second.text);
    assert!(
        second.text.contains("max_concurrent_calls"),
        "{}",
        second.text
    );
    alice.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_session_frees_its_place_after_the_idle_time() {
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice").with("max_sessions = 1\nsession_idle_secs = 2")],
        &[],
    )
    .await;
    let (status, session, text) =
        post(&server, "token-alice", "2025-06-18", INITIALIZE.into()).await;
    assert_eq!(status, 200, "{text}");
    assert!(session.is_some());
    // Abandoned without DELETE: the place is taken until it expires.
    let (_, _, text) = post(&server, "token-alice", "2025-06-18", INITIALIZE.into()).await;
    assert!(text.contains("max_sessions"), "{text}");
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (status, session, text) =
            post(&server, "token-alice", "2025-06-18", INITIALIZE.into()).await;
        if status == 200 && session.is_some() && !text.contains("max_sessions") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the abandoned session kept its place: {text}"
        );
    }
}
