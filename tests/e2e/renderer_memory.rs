//! A tenant's renderer memory cap holds whatever a page allocates with (ArrayBuffers, Wasm
//! memories, workers, cross-site iframes, a thread too busy to be measured), and a call
//! stopped by its budget leaves no worker of its own running.

use crate::support::{FixtureServer, HttpClient, HttpServer, Route, TenantSpec};
use serde_json::json;
use std::time::{Duration, Instant};

const CAP: &str = "renderer_memory_mib = 64\ncall_timeout_secs = 40";
const BOTH_LOOPBACKS: &str = "egress_allow = [\"127.0.0.1/32\", \"127.0.0.2/32\"]";

/// A page at `/page`, and at `/framed` a page whose iframe is `frame_url`.
fn fixtures(frame_url: &str) -> FixtureServer {
    FixtureServer::start(vec![
        Route::html(
            "/page",
            "<!doctype html><title>Fixture</title><p>fixture page body</p>",
        ),
        Route::html(
            "/framed",
            format!(
                "<!doctype html><title>Framed</title><p>fixture page body</p><iframe src=\"{frame_url}\"></iframe>"
            ),
        ),
    ])
}

/// A tenant capped at 64 MiB with a page at `/page` (or `path`) open.
async fn capped_tenant(pages: &FixtureServer, path: &str) -> (HttpServer, HttpClient) {
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice")
            .with(BOTH_LOOPBACKS)
            .with(CAP)],
        &[],
    )
    .await;
    let alice = server.connect("token-alice").await;
    let opened = alice
        .call("new_page", json!({ "url": pages.url(path) }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    (server, alice)
}

/// Where one answer starts in what [`answers_until_closed`] collects.
const ANSWER: &str = "\n--- next answer ---\n";

/// What the tenant's answers said until a page was noted closed (or `within` passed), and
/// the listing after that.
async fn answers_until_closed(alice: &HttpClient, within: Duration) -> String {
    let deadline = Instant::now() + within;
    let mut answers = String::new();
    let mut noted = false;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let listed = alice.call("list_pages", json!({})).await;
        answers.push_str(ANSWER);
        answers.push_str(&listed.text);
        if noted {
            break;
        }
        noted = listed.text.contains("was closed");
    }
    answers
}

/// The note says the page was closed over the cap, and the last listing has no `url`.
fn assert_closed_over_cap(answers: &str, url: &str) {
    assert!(
        answers.contains("was closed") && answers.contains("renderer_memory_mib of 64 MiB"),
        "no note of a page closed over the cap: {answers}"
    );
    assert_gone(answers, url);
}

fn assert_gone(answers: &str, url: &str) {
    let last = answers.rsplit(ANSWER).next().unwrap_or_default();
    assert!(!last.contains(url), "{url} is still open: {answers}");
}

/// Runs `function` in the selected page; an allocation the cap stops fails the call or not,
/// but never returns what it would have said had it run to the end.
async fn allocate(alice: &HttpClient, function: &str) -> String {
    let answer = alice
        .call("evaluate_script", json!({ "function": function }))
        .await;
    assert!(!answer.text.contains("survived"), "{}", answer.text);
    answer.text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn array_buffers_count_against_the_cap() {
    let pages = fixtures("about:blank");
    let (_server, alice) = capped_tenant(&pages, "/page").await;
    let said = allocate(
        &alice,
        "async () => { window.hog = []; for (let i = 0; i < 60; i++) { const b = new ArrayBuffer(8 << 20); new Uint8Array(b).fill(1); window.hog.push(b); await new Promise(r => setTimeout(r, 100)); } return 'survived'; }",
    )
    .await;
    let answers = answers_until_closed(&alice, Duration::from_secs(10)).await;
    assert_closed_over_cap(&format!("{said}\n{answers}"), &pages.url("/page"));
    alice.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grown_wasm_memory_ends_its_renderer() {
    let pages = fixtures("about:blank");
    let (_server, alice) = capped_tenant(&pages, "/page").await;
    let said = allocate(
        &alice,
        "async () => { const m = new WebAssembly.Memory({ initial: 1, maximum: 16384 }); window.m = m; for (let i = 0; i < 60; i++) { m.grow(128); new Uint8Array(m.buffer).fill(1); await new Promise(r => setTimeout(r, 100)); } return 'survived'; }",
    )
    .await;
    let answers = format!(
        "{said}\n{}",
        answers_until_closed(&alice, Duration::from_secs(10)).await
    );
    assert_closed_over_cap(&answers, &pages.url("/page"));
    assert!(
        answers.contains("its renderer process held"),
        "not ended by what its process held: {answers}"
    );
    alice.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_worker_holds_counts_against_its_page() {
    let pages = fixtures("about:blank");
    let (_server, alice) = capped_tenant(&pages, "/page").await;
    // Small steps: the page is measured before its process reaches the renderer ceiling.
    let started = allocate(
        &alice,
        "() => { const src = 'const hog = []; setInterval(() => { if (hog.length < 40) { const b = new ArrayBuffer(2 << 20); new Uint8Array(b).fill(1); hog.push(b); } }, 50);'; window.w = new Worker(URL.createObjectURL(new Blob([src]))); return 'started'; }",
    )
    .await;
    assert!(started.contains("started"), "{started}");
    let answers = answers_until_closed(&alice, Duration::from_secs(15)).await;
    assert_closed_over_cap(&answers, &pages.url("/page"));
    assert!(answers.contains("heap and buffers reached"), "{answers}");
    alice.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_site_iframe_counts_against_its_page() {
    let other_site = FixtureServer::start_at(
        [127, 0, 0, 2],
        vec![Route::html(
            "/hog",
            "<!doctype html><script>window.hog = []; const grow = setInterval(() => { if (window.hog.length < 40) window.hog.push(new Array(1 << 20).fill(window.hog.length)); }, 50);</script>",
        )],
    );
    let pages = fixtures(&other_site.url("/hog"));
    let (_server, alice) = capped_tenant(&pages, "/framed").await;
    let answers = answers_until_closed(&alice, Duration::from_secs(15)).await;
    assert_closed_over_cap(&answers, &pages.url("/framed"));
    assert!(answers.contains("heap and buffers reached"), "{answers}");
    alice.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_too_busy_to_be_measured_outside_a_call_is_closed() {
    let pages = fixtures("about:blank");
    let (_server, alice) = capped_tenant(&pages, "/page").await;
    let scheduled = allocate(
        &alice,
        "() => { setTimeout(() => { window.kept = new Array(1 << 20).fill(1); while (true) {} }, 300); return 'scheduled'; }",
    )
    .await;
    assert!(scheduled.contains("scheduled"), "{scheduled}");
    let answers = answers_until_closed(&alice, Duration::from_secs(15)).await;
    assert_closed_over_cap(&answers, &pages.url("/page"));
    assert!(answers.contains("did not answer"), "{answers}");
    alice.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_a_call_started_do_not_outlive_its_budget() {
    let pages = fixtures("about:blank");
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice")
            .on_loopback()
            .with("call_timeout_secs = 8")],
        &[],
    )
    .await;
    let alice = server.connect("token-alice").await;
    let warm = alice.call("list_pages", json!({})).await;
    assert!(!warm.is_error, "{}", warm.text);
    let opened = alice
        .call("navigate_page", json!({ "url": pages.url("/page") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    // Each worker spins in a timer, which stopping its current script does not stop.
    let spin = alice
        .call(
            "evaluate_script",
            json!({ "function": "() => { for (let i = 0; i < 2; i++) new Worker(URL.createObjectURL(new Blob(['setInterval(() => { const t = Date.now(); while (Date.now() - t < 90); }, 0)']))); while (true) {} }" }),
        )
        .await;
    assert!(spin.is_error, "{}", spin.text);
    let answers = answers_until_closed(&alice, Duration::from_secs(10)).await;
    assert!(
        answers.contains("started 2 workers in it"),
        "the workers were not stopped: {answers}"
    );
    assert_gone(&answers, &pages.url("/page"));
    alice.close().await;
}
