//! `--blockedUrlPattern` and `--allowedUrlPattern` (1.11.0's flags that restrict the browser's
//! network): enforced by the browser on navigations, redirects, subresources, frames, popups
//! and workers, with the reference's texts; a pattern it would not enforce, or both flags,
//! refuse to start. The fixture servers count what reached them: a request the browser let
//! through shows there whatever the page or the tool reported.

use crate::support::reference::{reference_ready, reference_script};
use crate::support::{FixtureServer, McpServer, Route, command, devtools_mcp};
use serde_json::json;
use std::time::Duration;

/// What a page asks of `server` besides its own document: an image, a script's fetch.
fn page_with_subresources(secret: &str) -> String {
    format!(
        r#"<!doctype html><title>Open</title><img src="{secret}.png">
<script>window.fetched = fetch("{secret}-fetch").then(() => "loaded", (e) => "refused: " + e.message);</script>"#
    )
}

fn fetched(requests: &[String], path: &str) -> bool {
    requests.iter().any(|line| line.contains(path))
}

#[tokio::test]
async fn a_blocked_pattern_refuses_navigations_redirects_subresources_and_popups() {
    let pages = FixtureServer::start(vec![
        Route::html("/open", page_with_subresources("/secret")),
        Route::html("/secret", "<title>Secret</title>secret"),
        Route::new("/secret.png", "image/png", vec![0_u8; 8]),
        Route::new("/secret-fetch", "text/plain", "secret"),
        Route::html("/hop", "")
            .with_status(302)
            .with_header("Location", "/secret"),
    ]);
    let pattern = format!("http://127.0.0.1:{}/secret*", pages.port());
    let server = McpServer::start(&["--blockedUrlPattern", &pattern]).await;

    let secret = pages.url("/secret");
    let refused = server.call("navigate_page", json!({ "url": secret })).await;
    assert!(
        refused.text.contains(&format!(
            "Unable to navigate in the selected page: Navigation to {secret} is blocked by blocklist/allowlist rules."
        )),
        "{}",
        refused.text
    );
    let new_page = server.call("new_page", json!({ "url": secret })).await;
    assert!(new_page.is_error, "{}", new_page.text);
    assert!(
        new_page.text.contains(&format!(
            "Navigation to {secret} is blocked by blocklist/allowlist rules"
        )),
        "{}",
        new_page.text
    );

    // The browser's own rule: a redirect hop to a blocked URL fails as offline.
    let hop = pages.url("/hop");
    let redirected = server.call("navigate_page", json!({ "url": hop })).await;
    assert!(
        redirected.text.contains(&format!(
            "Unable to navigate in the selected page: net::ERR_INTERNET_DISCONNECTED at {hop}."
        )),
        "{}",
        redirected.text
    );

    let open = server
        .call("navigate_page", json!({ "url": pages.url("/open") }))
        .await;
    assert!(!open.is_error, "{}", open.text);
    let script = server
        .call(
            "evaluate_script",
            json!({ "function": format!(
                "async () => {{ const fetched = await window.fetched; window.open({secret:?}); await new Promise(r => setTimeout(r, 1000)); return fetched; }}"
            ) }),
        )
        .await;
    assert!(
        script.text.contains("refused: Failed to fetch"),
        "{}",
        script.text
    );
    let throttled = server
        .call("emulate", json!({ "networkConditions": "Slow 3G" }))
        .await;
    assert!(
        throttled.text.contains(
            "Network throttling is not supported when network blocking (allowlist/blocklist) is configured."
        ),
        "{}",
        throttled.text
    );

    let requests = pages.requests();
    assert!(fetched(&requests, "/open"), "{requests:?}");
    assert!(fetched(&requests, "/hop"), "{requests:?}");
    assert!(
        !fetched(&requests, "/secret"),
        "a blocked URL reached the server: {requests:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn an_allowed_pattern_lets_only_matching_urls_load_in_frames_and_workers_too() {
    // 127.0.0.2 is another site: its frame runs in a process (and a target) of its own.
    let outside = FixtureServer::start_at(
        [127, 0, 0, 2],
        vec![
            Route::html("/frame", "outside frame"),
            Route::new("/image.png", "image/png", vec![0_u8; 8]),
            Route::new("/from-worker", "text/plain", "outside"),
            Route::html("/landing", "outside"),
        ],
    );
    let elsewhere = |path: &str| outside.url(path);
    let page = format!(
        r#"<!doctype html><title>Inside</title><iframe src="{frame}"></iframe><img src="{image}">
<script>new Worker("/worker.js");</script>"#,
        frame = elsewhere("/frame"),
        image = elsewhere("/image.png"),
    );
    let worker = format!("fetch({:?}).catch(() => {{}});", elsewhere("/from-worker"));
    let inside = FixtureServer::start(vec![
        Route::html("/", page),
        Route::new("/worker.js", "text/javascript", worker),
        Route::html("/away", "")
            .with_status(302)
            .with_header("Location", &elsewhere("/landing")),
    ]);
    let pattern = format!("http://127.0.0.1:{}/*", inside.port());
    let server = McpServer::start(&["--allowedUrlPattern", &pattern]).await;

    let opened = server
        .call("navigate_page", json!({ "url": inside.url("/") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let landing = elsewhere("/landing");
    let direct = server
        .call("navigate_page", json!({ "url": landing }))
        .await;
    assert!(
        direct.text.contains(&format!(
            "Navigation to {landing} is blocked by blocklist/allowlist rules"
        )),
        "{}",
        direct.text
    );
    let away = inside.url("/away");
    let redirected = server.call("navigate_page", json!({ "url": away })).await;
    assert!(
        redirected.text.contains("net::ERR_INTERNET_DISCONNECTED"),
        "{}",
        redirected.text
    );
    tokio::time::sleep(Duration::from_millis(1000)).await;

    let inside_requests = inside.requests();
    assert!(
        fetched(&inside_requests, "/worker.js"),
        "{inside_requests:?}"
    );
    assert!(fetched(&inside_requests, "/away"), "{inside_requests:?}");
    assert_eq!(
        outside.requests(),
        Vec::<String>::new(),
        "only the allowed pattern may load"
    );
    server.shutdown().await;
}

/// Our refusal at start, and (when Node is here) 1.11.0's own, for the same arguments.
fn refusals(args: &[&str]) -> (String, Option<String>) {
    let (started, ours) = devtools_mcp(args);
    assert!(!started, "{args:?} must refuse to start: {ours}");
    let theirs = reference_ready("the reference's URL-pattern refusals").then(|| {
        let output = command("node")
            .arg(reference_script())
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("node runs");
        assert!(!output.status.success(), "1.11.0 refuses {args:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    });
    (ours, theirs)
}

#[test]
fn patterns_the_browser_would_not_enforce_and_both_flags_refuse_to_start() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["--blockedUrlPattern", "http://127.0.0.*/"],
            "Invalid --blockedUrlPattern \"http://127.0.0.*/\": a partial IPv4 wildcard is not enforced on redirects or subresources. Use an exact IPv4 address or a \"*\" wildcard instead.",
        ),
        (
            &["--blockedUrlPattern", "http://a/(x|y)"],
            "Invalid --blockedUrlPattern \"http://a/(x|y)\": a regexp group is not enforced on redirects or subresources. Use an exact value or a \"*\" wildcard instead.",
        ),
        (
            &["--allowedUrlPattern", "*://127.0.0.1::port/*"],
            "Invalid --allowedUrlPattern \"*://127.0.0.1::port/*\": a \":name\" named group is not enforced on redirects or subresources. Use an exact value or a \"*\" wildcard instead.",
        ),
        (
            &["--blockedUrlPattern", "*/secret"],
            "Invalid --blockedUrlPattern \"*/secret\": Failed to construct 'URLPattern': A base URL must be provided for a relative constructor string.",
        ),
        (
            &["--allowedUrlPattern="],
            "Invalid --allowedUrlPattern: at least one pattern is required.",
        ),
        (
            &[
                "--blockedUrlPattern",
                "http://a/*",
                "--allowedUrlPattern",
                "http://b/*",
            ],
            "Arguments blockedUrlPattern and allowedUrlPattern are mutually exclusive",
        ),
    ];
    for (args, message) in cases {
        let (ours, theirs) = refusals(args);
        assert!(ours.contains(message), "ours for {args:?}: {ours}");
        if let Some(theirs) = theirs {
            assert!(theirs.contains(message), "1.11.0's for {args:?}: {theirs}");
        }
    }
}
