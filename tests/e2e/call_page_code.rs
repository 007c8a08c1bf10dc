//! Page code a plugin's call started does not outlive the call (its policy does not grant
//! `long-lived`), wherever it runs: a dedicated worker the page started during the call, a
//! timer in a cross-site iframe (another renderer process), a timer in a page the call opened.
//! Each fixture arms its late effect during the call and lets it land 1.5 s later; the client
//! then looks, 3 s after the call. The `contract_probe` fixture calls one host function by its
//! WIT name; `then_wait_for` keeps the call open until the page says it is armed.

use crate::support::{FixtureServer, McpServer, Route, binary_dir, browser_args};
use serde_json::json;
use std::time::Duration;

/// The probe, granted page code (script, input) but not `long-lived`, and no URL patterns.
async fn start() -> (McpServer, tempfile::TempDir) {
    start_granted("\"pages.read\", \"script\", \"input\"").await
}

/// The probe with `capabilities` (not `long-lived`), and no URL patterns.
async fn start_granted(capabilities: &str) -> (McpServer, tempfile::TempDir) {
    let scratch = tempfile::tempdir().expect("temp dir");
    let policy = scratch.path().join("policy.toml");
    std::fs::write(
        &policy,
        format!("[plugins.contract_probe]\ncapabilities = [{capabilities}]\n"),
    )
    .expect("write policy");
    let mut args = browser_args();
    args.extend([
        "--plugin-dir".to_string(),
        binary_dir().join("test-plugins").display().to_string(),
        "--policy".to_string(),
        policy.display().to_string(),
    ]);
    let server = McpServer::start_with(args, Vec::new())
        .await
        .expect("start");
    (server, scratch)
}

/// Opens `url` for the client.
async fn open(server: &McpServer, url: &str) {
    let opened = server
        .call("navigate_page", json!({ "type": "url", "url": url }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
}

/// Calls the probe's `function` with `arg`, waiting for `armed` on the page; its answer.
async fn probe(server: &McpServer, function: &str, arg: &str, armed: &str) -> String {
    let answer = server
        .call(
            "contract_probe",
            json!({ "function": function, "arg": arg, "then_wait_for": armed }),
        )
        .await;
    assert!(
        !answer.is_error && answer.text.contains(&format!("{function}: ok")),
        "{}",
        answer.text
    );
    answer.text
}

/// Waits past every late effect, then what the selected page says: `title | path | body`.
async fn after_the_late_effects(server: &McpServer) -> String {
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let seen = server
        .call(
            "evaluate_script",
            json!({ "function": "() => document.title + ' | ' + location.pathname + ' | ' + document.body.innerText" }),
        )
        .await;
    assert!(!seen.is_error, "{}", seen.text);
    seen.text
}

const WORKER_PAGE: &str = "<!doctype html><title>page</title><p>PAGE</p>";

/// The plugin's script starts a worker that posts to the page 1.5 s later: the worker is
/// stopped when the call ends, so the page never hears from it.
#[tokio::test]
async fn a_worker_a_plugins_script_started_is_stopped_when_its_call_ends() {
    let pages = FixtureServer::start(vec![Route::html("/page", WORKER_PAGE)]);
    let (server, _scratch) = start().await;
    open(&server, &pages.url("/page")).await;
    let script = "window.worker = new Worker(URL.createObjectURL(new Blob([\"postMessage('armed'); setTimeout(() => postMessage('late'), 1500);\"]))); \
        worker.onmessage = (event) => { if (event.data === 'armed') document.body.append('ARMED'); else document.title = 'WORKER LATE'; }; 1";
    let answer = probe(&server, "script/evaluate-expression", script, "ARMED").await;
    assert!(!answer.contains("about:blank"), "{answer}");
    let seen = after_the_late_effects(&server).await;
    assert!(
        seen.contains("page | /page") && !seen.contains("LATE"),
        "a worker of the plugin's call acted after it: {seen}"
    );
    server.shutdown().await;
}

/// A worker whose code replaced `close` does not stop when asked: its page is sent to
/// about:blank (its workers end with its document), and the answer says so.
#[tokio::test]
async fn a_worker_that_will_not_close_takes_its_page_to_about_blank() {
    let pages = FixtureServer::start(vec![Route::html("/page", WORKER_PAGE)]);
    let (server, _scratch) = start().await;
    open(&server, &pages.url("/page")).await;
    let script = "window.worker = new Worker(URL.createObjectURL(new Blob([\"self.close = () => {}; DedicatedWorkerGlobalScope.prototype.close = () => {}; postMessage('armed'); setTimeout(() => postMessage('late'), 1500);\"]))); \
        worker.onmessage = (event) => { if (event.data === 'armed') document.body.append('ARMED'); else document.title = 'WORKER LATE'; }; 1";
    let answer = probe(&server, "script/evaluate-expression", script, "ARMED").await;
    assert!(
        answer.contains("was sent to about:blank") && answer.contains("did not stop when asked"),
        "{answer}"
    );
    let seen = after_the_late_effects(&server).await;
    assert!(
        !seen.contains("LATE") && !seen.contains("/page"),
        "the page of a worker that would not close kept it: {seen}"
    );
    server.shutdown().await;
}

/// The plugin's script asks a cross-site iframe (another renderer process) to set a timer
/// that tells the page 1.5 s later: the timer is cleared in that iframe when the call ends.
#[tokio::test]
async fn timers_in_a_cross_site_iframe_never_fire_after_the_call() {
    let other_site = FixtureServer::start_at(
        [127, 0, 0, 2],
        vec![Route::html(
            "/inner",
            "<!doctype html><p>inner</p><script>onmessage = () => { setTimeout(() => parent.postMessage('late', '*'), 1500); parent.postMessage('armed', '*'); };</script>",
        )],
    );
    let pages = FixtureServer::start(vec![Route::html(
        "/framed",
        format!(
            "<!doctype html><title>framed</title><p>FRAMED</p><iframe src=\"{}\"></iframe><script>onmessage = (event) => {{ if (event.data === 'armed') document.body.append('ARMED'); else document.title = 'IFRAME LATE'; }};</script>",
            other_site.url("/inner")
        ),
    )]);
    let (server, _scratch) = start().await;
    open(&server, &pages.url("/framed")).await;
    probe(
        &server,
        "script/evaluate-expression",
        "frames[0].postMessage('arm', '*'); 1",
        "ARMED",
    )
    .await;
    let seen = after_the_late_effects(&server).await;
    assert!(
        seen.contains("framed | /framed") && !seen.contains("LATE"),
        "a timer in the cross-site iframe fired after the call: {seen}"
    );
    server.shutdown().await;
}

/// A click of the plugin's opens a popup and sets a timer in it that changes the opener
/// 1.5 s later: the popup is the call's, and its timers are cleared when the call ends.
#[tokio::test]
async fn timers_in_a_page_the_call_opened_never_fire_after_it() {
    let pages = FixtureServer::start(vec![Route::html(
        "/opener",
        "<!doctype html><title>opener</title><button style=\"position:fixed;left:0;top:0;width:300px;height:300px\" onclick=\"const popup = window.open(''); popup.setTimeout(() => { document.title = 'POPUP LATE'; }, 1500); document.body.append('ARMED')\">open</button>",
    )]);
    let (server, _scratch) = start().await;
    open(&server, &pages.url("/opener")).await;
    probe(&server, "input/click-at", "", "ARMED").await;
    let seen = after_the_late_effects(&server).await;
    assert!(
        seen.contains("opener | /opener") && !seen.contains("LATE"),
        "a timer in the popup the call opened fired after it: {seen}"
    );
    server.shutdown().await;
}

/// A page the plugin opened (handed to it) is the call's whole: a timer its own code set
/// while it loaded during the call is cleared when the call ends.
#[tokio::test]
async fn timers_of_a_page_the_plugin_opened_never_fire_after_its_call() {
    let pages = FixtureServer::start(vec![
        Route::html("/start", "<!doctype html><title>start</title><p>START</p>"),
        Route::html(
            "/fresh",
            "<!doctype html><title>fresh</title><p>FRESH</p><script>setTimeout(() => { document.title = 'OPENED LATE'; }, 1500);</script>",
        ),
    ]);
    let (server, _scratch) =
        start_granted("\"pages.read\", \"pages.manage\", \"navigate\", \"script\"").await;
    open(&server, &pages.url("/start")).await;
    probe(
        &server,
        "pages-manage/new-page",
        &pages.url("/fresh"),
        "START",
    )
    .await;
    let seen = after_the_late_effects(&server).await;
    assert!(
        seen.contains("fresh | /fresh") && !seen.contains("LATE"),
        "a timer of the page the plugin opened fired after its call: {seen}"
    );
    server.shutdown().await;
}
