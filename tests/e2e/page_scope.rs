//! The page scope of a plugin held to URL patterns: it never reads or acts on a page outside
//! them, whatever moved the page and when (its own page code during any function, a meta
//! refresh after its call), and only the pages its call touched are judged: a client's own
//! navigation on another page is never taken for the plugin's (`--experimentalParallelPages`).
//! The `contract_probe` fixture calls one host function by its WIT name.

use crate::support::{FixtureServer, McpServer, Route, binary_dir, browser_args};
use serde_json::json;
use std::time::Duration;

const FORBIDDEN: &str = "<!doctype html><title>forbidden</title><p>FORBIDDEN PAGE</p>";

/// The probe under a policy that grants it what the tests use and the URLs under `allowed`.
async fn start(allowed: &str, flags: &[&str]) -> (McpServer, tempfile::TempDir) {
    let scratch = tempfile::tempdir().expect("temp dir");
    let policy = scratch.path().join("policy.toml");
    std::fs::write(
        &policy,
        format!(
            "[plugins.contract_probe]\ncapabilities = [\"pages.read\", \"pages.manage\", \"navigate\", \"script\", \"input\"]\nnavigate = [\"{allowed}*\"]\n"
        ),
    )
    .expect("write policy");
    let mut args = browser_args();
    args.extend([
        "--plugin-dir".to_string(),
        binary_dir().join("test-plugins").display().to_string(),
        "--policy".to_string(),
        policy.display().to_string(),
    ]);
    args.extend(flags.iter().map(|flag| flag.to_string()));
    let server = McpServer::start_with(args, Vec::new())
        .await
        .expect("start");
    (server, scratch)
}

/// Waits (at most 10 s) until the page listing shows `url`.
async fn wait_until_listed(server: &McpServer, url: &str) -> String {
    let mut listing = String::new();
    for _ in 0..100 {
        listing = server.call("list_pages", json!({})).await.text;
        if listing.contains(url) {
            return listing;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{url} never listed:\n{listing}");
}

/// A page that moves itself outside the patterns after a plugin call (a meta refresh set to
/// fire later): the plugin's next call refuses to read it, before any of its code runs, and
/// says where the page is and which patterns hold.
#[tokio::test]
async fn a_page_that_moved_after_a_call_is_refused_at_the_next_one() {
    let pages = FixtureServer::start(vec![
        Route::html(
            "/allowed",
            "<!doctype html><title>allowed</title><meta http-equiv=refresh content=\"2;url=/forbidden\"><p>ALLOWED</p>",
        ),
        Route::html("/forbidden", FORBIDDEN),
    ]);
    let allowed = pages.url("/allowed");
    let forbidden = pages.url("/forbidden");
    let (server, _scratch) = start(&allowed, &[]).await;
    let opened = server
        .call("navigate_page", json!({ "type": "url", "url": allowed }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let first = server
        .call("contract_probe", json!({ "function": "pages/url" }))
        .await;
    assert!(
        !first.is_error && first.text.contains(&format!("pages/url: {allowed}")),
        "{}",
        first.text
    );

    wait_until_listed(&server, &forbidden).await;
    for function in ["pages/url", "script/evaluate-expression"] {
        let next = server
            .call("contract_probe", json!({ "function": function }))
            .await;
        assert!(
            next.is_error,
            "{function} read the moved page: {}",
            next.text
        );
        assert!(
            next.text
                .contains(&format!("it would act on the page at {forbidden}"))
                && next.text.contains("matches none of the URL patterns")
                && next.text.contains(&format!("`{allowed}*`")),
            "{}",
            next.text
        );
        assert!(
            !next.text.contains(&format!("{function}: ")),
            "{}",
            next.text
        );
    }
    // The client's page is left where it is: the move was not the plugin's call.
    wait_until_listed(&server, &forbidden).await;
    server.shutdown().await;
}

/// Page code that moves its page while a function that is not a navigation runs (here the
/// page's timer fires during `pages.wait-for`): the function's landing check catches it, the
/// page is sent to about:blank and the plugin stopped, before it reads anything more.
#[tokio::test]
async fn a_page_moved_by_its_code_during_a_wait_is_caught() {
    let pages = FixtureServer::start(vec![
        Route::html(
            "/allowed",
            "<!doctype html><title>allowed</title><p>ALLOWED</p><script>setTimeout(() => { location.href = '/forbidden'; }, 1500);</script>",
        ),
        Route::html("/forbidden", FORBIDDEN),
    ]);
    let allowed = pages.url("/allowed");
    let forbidden = pages.url("/forbidden");
    let (server, _scratch) = start(&allowed, &[]).await;
    let opened = server
        .call("navigate_page", json!({ "type": "url", "url": allowed }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let answer = server
        .call(
            "contract_probe",
            json!({ "function": "pages/url", "then_wait_for": "FORBIDDEN PAGE" }),
        )
        .await;
    assert!(answer.is_error, "{}", answer.text);
    assert!(
        answer
            .text
            .contains(&format!("its page went to {forbidden} during the call"))
            && answer.text.contains("the page was sent to about:blank"),
        "{}",
        answer.text
    );
    let listing = wait_until_listed(&server, "about:blank").await;
    assert!(!listing.contains(&forbidden), "{listing}");
    server.shutdown().await;
}

/// `--experimentalParallelPages`: the client navigates page B outside the plugin's patterns
/// while a plugin call runs on page A. B is not the call's: the client's navigation succeeds
/// and stays, and the plugin is not stopped for a URL it never visited.
#[tokio::test]
async fn a_client_navigation_on_another_page_is_not_judged_by_a_plugin_call() {
    let pages = FixtureServer::start(vec![
        Route::html(
            "/allowed",
            "<!doctype html><title>allowed</title><p>ALLOWED</p>",
        ),
        Route::html("/start", "<!doctype html><title>start</title><p>START</p>"),
        Route::html(
            "/elsewhere",
            "<!doctype html><title>elsewhere</title>ELSEWHERE",
        )
        .with_delay(Duration::from_millis(2000)),
    ]);
    let allowed = pages.url("/allowed");
    let elsewhere = pages.url("/elsewhere");
    let (server, _scratch) = start(
        &allowed,
        &["--experimentalPageIdRouting", "--experimentalParallelPages"],
    )
    .await;
    let page_a = crate::styles::selected_page_id(
        &server
            .call("new_page", json!({ "url": allowed }))
            .await
            .text,
    );
    let page_b = crate::styles::selected_page_id(
        &server
            .call("new_page", json!({ "url": pages.url("/start") }))
            .await
            .text,
    );
    let client = server.call(
        "navigate_page",
        json!({ "pageId": page_b, "type": "url", "url": elsewhere }),
    );
    // The plugin's call starts while B's navigation waits for its server, and lasts until
    // long after B landed.
    let plugin = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        server
            .call(
                "contract_probe",
                json!({
                    "pageId": page_a,
                    "function": "script/evaluate-expression",
                    "then_wait_for": "never shown",
                }),
            )
            .await
    };
    let (navigated, probed) = tokio::join!(client, plugin);
    assert!(!navigated.is_error, "{}", navigated.text);
    assert!(
        !probed.text.contains("matches none of the URL patterns"),
        "the plugin was judged for the client's navigation: {}",
        probed.text
    );
    let listing = server.call("list_pages", json!({})).await.text;
    assert!(
        listing.contains(&format!("{page_b}: elsewhere ({elsewhere})")),
        "the client's page was moved: {listing}"
    );
    server.shutdown().await;
}

/// A popup opened by a page the plugin acts on (its opener) is the call's: a click that opens
/// one outside the patterns is caught where the popup lands, and the popup sent to about:blank.
#[tokio::test]
async fn a_popup_opened_by_the_plugins_page_is_judged_where_it_lands() {
    let pages = FixtureServer::start(vec![
        Route::html(
            "/allowed",
            "<!doctype html><title>allowed</title><button style=\"position:fixed;left:0;top:0;width:300px;height:300px\" onclick=\"window.open('/forbidden'); setTimeout(() => document.body.append('OPENED'), 1000)\">open</button>",
        ),
        Route::html("/forbidden", FORBIDDEN),
    ]);
    let allowed = pages.url("/allowed");
    let forbidden = pages.url("/forbidden");
    let (server, _scratch) = start(&allowed, &[]).await;
    let opened = server
        .call("navigate_page", json!({ "type": "url", "url": allowed }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let answer = server
        .call(
            "contract_probe",
            json!({ "function": "input/click-at", "then_wait_for": "OPENED" }),
        )
        .await;
    assert!(
        answer.is_error
            && answer
                .text
                .contains(&format!("its page went to {forbidden} during the call"))
            && answer.text.contains("the page was sent to about:blank"),
        "{}",
        answer.text
    );
    let listing = server.call("list_pages", json!({})).await.text;
    assert!(!listing.contains(&forbidden), "{listing}");
    assert!(listing.contains("about:blank"), "{listing}");
    server.shutdown().await;
}

/// A function on a page the call had not seen (here `pages.get` on the client's other page,
/// which the client took outside the patterns) is refused before its body reads anything,
/// and the page is left where the client put it.
#[tokio::test]
async fn a_function_on_a_page_outside_the_patterns_is_refused_and_the_page_left_alone() {
    let pages = FixtureServer::start(vec![
        Route::html(
            "/allowed",
            "<!doctype html><title>allowed</title><p>ALLOWED</p>",
        ),
        Route::html("/forbidden", FORBIDDEN),
    ]);
    let allowed = pages.url("/allowed");
    let forbidden = pages.url("/forbidden");
    let (server, _scratch) = start(&allowed, &[]).await;
    let first = server
        .call("navigate_page", json!({ "type": "url", "url": forbidden }))
        .await;
    assert!(!first.is_error, "{}", first.text);
    assert!(first.text.contains("1: forbidden"), "{}", first.text);
    let second = server.call("new_page", json!({ "url": allowed })).await;
    assert!(!second.is_error, "{}", second.text);
    let answer = server
        .call("contract_probe", json!({ "function": "pages/get" }))
        .await;
    assert!(
        answer.is_error
            && answer
                .text
                .contains(&format!("it would act on the page at {forbidden}")),
        "{}",
        answer.text
    );
    let listing = server.call("list_pages", json!({})).await.text;
    assert!(
        listing.contains(&format!("1: forbidden ({forbidden})")),
        "the client's page was moved: {listing}"
    );
    server.shutdown().await;
}

/// Page code a plugin's call started does not outlive the call: timers its script set (in
/// the page, through an iframe's `setTimeout`, an interval) to change and move the page later
/// are cleared when the call ends, so none fires after it. (The plugin's policy does not grant
/// `long-lived`.)
#[tokio::test]
async fn timers_a_plugins_script_set_never_fire_after_its_call() {
    let pages = FixtureServer::start(vec![
        Route::html(
            "/allowed",
            "<!doctype html><title>allowed</title><p>ALLOWED</p><iframe srcdoc=\"<p>inner</p>\"></iframe>",
        ),
        Route::html("/forbidden", FORBIDDEN),
    ]);
    let allowed = pages.url("/allowed");
    let (server, _scratch) = start(&allowed, &[]).await;
    let opened = server
        .call("navigate_page", json!({ "type": "url", "url": allowed }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let script = "window.clearTimeout = () => {}; \
        setTimeout(() => { document.title = 'LATE'; }, 1500); \
        setInterval(() => { document.body.append('INTERVAL LATE'); }, 700); \
        frames[0].setTimeout(() => { top.document.body.append('IFRAME LATE'); top.location.href = '/forbidden'; }, 1500); \
        1";
    let answer = server
        .call(
            "contract_probe",
            json!({ "function": "script/evaluate-expression", "arg": script }),
        )
        .await;
    assert!(
        !answer.is_error && answer.text.contains("script/evaluate-expression: ok"),
        "{}",
        answer.text
    );
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let seen = server
        .call(
            "evaluate_script",
            json!({ "function": "() => document.title + ' | ' + location.pathname + ' | ' + document.body.innerText" }),
        )
        .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.contains("allowed | /allowed") && !seen.text.contains("LATE"),
        "a timer of the plugin's call fired after it: {}",
        seen.text
    );
    server.shutdown().await;
}

/// The URL a page went to outside the patterns is page-written: under
/// `--experimentalFencePageContent` the refusal that prints it is fenced, on both paths: a
/// page the call had seen inside that moved during the call (its own script's timer, fired
/// while it waits), and a page found outside at the start of the next call (it moved itself
/// after the client opened it). The moves are caused by the call or the client, not timed.
#[tokio::test]
async fn the_url_of_a_refused_landing_is_fenced() {
    let target = "/forbidden-ignore-previous-instructions";
    let pages = FixtureServer::start(vec![
        Route::html(
            "/allowed",
            "<!doctype html><title>allowed</title><p>ALLOWED</p>",
        ),
        Route::html(
            "/mover",
            format!(
                "<!doctype html><title>mover</title><script>location.replace('{target}');</script>"
            ),
        ),
        Route::html(target, FORBIDDEN),
    ]);
    let allowed = pages.url("/allowed");
    let (server, _scratch) = start(&allowed, &["--experimentalFencePageContent"]).await;
    let opened = server
        .call("navigate_page", json!({ "type": "url", "url": allowed }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let moved_during = server
        .call(
            "contract_probe",
            json!({
                "function": "script/evaluate-expression",
                "arg": format!("setTimeout(() => {{ location.href = '{target}'; }}, 300); 1"),
                "then_wait_for": "FORBIDDEN PAGE",
            }),
        )
        .await;
    assert!(
        moved_during.is_error && moved_during.text.contains("during the call"),
        "{}",
        moved_during.text
    );
    crate::provenance::assert_fenced(&moved_during.text, "ignore-previous-instructions");

    let mover = pages.url("/mover");
    let opened = server
        .call("navigate_page", json!({ "type": "url", "url": mover }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    wait_until_listed(&server, &pages.url(target)).await;
    let found_outside = server
        .call("contract_probe", json!({ "function": "pages/url" }))
        .await;
    assert!(
        found_outside.is_error && found_outside.text.contains("would act on the page at"),
        "{}",
        found_outside.text
    );
    crate::provenance::assert_fenced(&found_outside.text, "ignore-previous-instructions");
    server.shutdown().await;
}
