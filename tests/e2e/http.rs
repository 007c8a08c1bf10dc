//! `serve --http`: tenants over real HTTP (rmcp's streamable HTTP client and plain reqwest),
//! sharing one real Chromium. Each tenant must see only its own pages, cookies, console,
//! network and files; tokens are checked on every request; calls of different tenants run at
//! once; a client that hangs up releases its tenant's lock.

use crate::support::{FixtureServer, HttpServer, Route, TenantSpec};
use serde_json::json;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

fn fixtures() -> FixtureServer {
    FixtureServer::start(vec![
        Route::html(
            "/shared",
            "<!doctype html><title>Shared page</title><p>the same URL for every tenant</p>",
        ),
        Route::new("/api", "application/json", "{\"ok\":true}"),
    ])
}

/// The page ids of a `## Pages` listing (`3: title (url) [selected]`).
fn page_ids(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|line| line.split_once(": ")?.0.trim().parse().ok())
        .collect()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// A raw `POST /mcp` with an optional bearer token; returns the status and the body.
async fn post(
    server: &HttpServer,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: impl Into<reqwest::Body>,
) -> (u16, String) {
    let mut request = reqwest::Client::new()
        .post(server.mcp_url())
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .timeout(Duration::from_secs(30))
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("the server answered");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

async fn get(server: &HttpServer, path: &str) -> (u16, String) {
    let response = reqwest::get(format!("{}{path}", server.base))
        .await
        .expect("the server answered");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// What one tenant does on the shared URL; returns its page ids.
async fn leave_traces(
    client: &crate::support::HttpClient,
    name: &str,
    fixtures: &FixtureServer,
) -> Vec<u64> {
    let opened = client
        .call("new_page", json!({ "url": fixtures.url("/shared") }))
        .await;
    assert!(!opened.is_error, "{name}: {}", opened.text);
    let script = format!(
        "async () => {{ document.cookie = 'owner={name}; path=/'; localStorage.setItem('owner', '{name}'); console.log('console-of-{name}'); const r = await fetch('/api?who={name}'); return r.status; }}"
    );
    let traced = client
        .call("evaluate_script", json!({ "function": script }))
        .await;
    assert!(traced.text.contains("200"), "{name}: {}", traced.text);
    let shot = client
        .call(
            "take_screenshot",
            json!({ "filePath": format!("{name}-shot.png") }),
        )
        .await;
    assert!(!shot.is_error, "{name}: {}", shot.text);
    let listed = client.call("list_pages", json!({})).await;
    page_ids(&listed.text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tenants_on_the_same_urls_see_only_their_own_pages_cookies_logs_and_files() {
    let pages = fixtures();
    let server = HttpServer::start(
        &[
            TenantSpec::new("alice", "token-alice").on_loopback(),
            TenantSpec::new("bob", "token-bob").on_loopback(),
        ],
        &[],
    )
    .await;
    let alice = server.connect("token-alice").await;
    let bob = server.connect("token-bob").await;

    let (alice_ids, bob_ids) = tokio::join!(
        leave_traces(&alice, "alice", &pages),
        leave_traces(&bob, "bob", &pages)
    );
    assert!(!alice_ids.is_empty() && !bob_ids.is_empty());
    let alice_set: BTreeSet<u64> = alice_ids.iter().copied().collect();
    assert!(
        bob_ids.iter().all(|id| !alice_set.contains(id)),
        "page ids are never shared: alice {alice_ids:?}, bob {bob_ids:?}"
    );

    for (client, me, other) in [(&alice, "alice", "bob"), (&bob, "bob", "alice")] {
        let listed = client.call("list_pages", json!({})).await;
        assert_eq!(
            listed.text.matches("Shared page").count(),
            1,
            "{me} sees exactly its own copy of the shared URL:\n{}",
            listed.text
        );
        let cookie = client
            .call(
                "evaluate_script",
                json!({ "function": "() => document.cookie + '|' + localStorage.getItem('owner')" }),
            )
            .await;
        assert!(
            cookie.text.contains(&format!("owner={me}|{me}")),
            "{me}: {}",
            cookie.text
        );
        assert!(
            !cookie.text.contains(other),
            "{me} sees {other}'s cookie: {}",
            cookie.text
        );

        let console = client.call("list_console_messages", json!({})).await;
        assert!(
            console.text.contains(&format!("console-of-{me}")),
            "{me}: {}",
            console.text
        );
        assert!(
            !console.text.contains(&format!("console-of-{other}")),
            "{me}: {}",
            console.text
        );

        let network = client.call("list_network_requests", json!({})).await;
        assert!(
            network.text.contains(&format!("/api?who={me}")),
            "{me}: {}",
            network.text
        );
        assert!(
            !network.text.contains(&format!("who={other}")),
            "{me}: {}",
            network.text
        );

        assert!(server.root(me).join(format!("{me}-shot.png")).is_file());
        assert!(!server.root(other).join(format!("{me}-shot.png")).exists());
    }

    // Bob guesses Alice's page ids.
    for id in &alice_ids {
        let selected = bob.call("select_page", json!({ "pageId": id })).await;
        assert!(
            selected.is_error,
            "bob selected alice's page {id}: {}",
            selected.text
        );
        assert!(selected.text.contains("No page found"), "{}", selected.text);
        let closed = bob.call("close_page", json!({ "pageId": id })).await;
        assert!(
            closed.is_error,
            "bob closed alice's page {id}: {}",
            closed.text
        );
    }
    // Bob writes and reads into Alice's root.
    let stolen = server.root("alice").join("stolen.png");
    let write = bob
        .call(
            "take_screenshot",
            json!({ "filePath": stolen.display().to_string() }),
        )
        .await;
    assert!(
        write.is_error,
        "bob wrote into alice's root: {}",
        write.text
    );
    assert!(write.text.contains("not within"), "{}", write.text);
    assert!(!stolen.exists());
    let escape = bob
        .call(
            "take_screenshot",
            json!({ "filePath": "../alice/escape.png" }),
        )
        .await;
    assert!(escape.is_error, "{}", escape.text);
    assert!(!server.root("alice").join("escape.png").exists());
    std::fs::write(server.root("alice").join("secret.txt"), "alice's secret").expect("write");
    let secret_url = format!(
        "file://{}",
        server.root("alice").join("secret.txt").display()
    );
    let read = bob.call("new_page", json!({ "url": secret_url })).await;
    assert!(read.is_error, "bob opened alice's file: {}", read.text);
    assert!(
        read.text.contains("not available to tenants"),
        "{}",
        read.text
    );
    let after = alice.call("list_pages", json!({})).await;
    assert_eq!(
        page_ids(&after.text),
        alice_ids,
        "bob changed alice's pages"
    );

    alice.close().await;
    bob.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_tenants_making_fifty_calls_each_at_once_are_all_answered_and_never_crossed() {
    const TENANTS: usize = 8;
    const CALLS: usize = 50;
    let pages = fixtures();
    let specs: Vec<TenantSpec> = (0..TENANTS)
        .map(|index| TenantSpec::new(&format!("t{index}"), &format!("token-{index}")).on_loopback())
        .collect();
    // Every call holds a connection: 400 from one address.
    let server = HttpServer::start(&specs, &["--max-connections-per-ip", "1024"]).await;
    let mut clients = Vec::new();
    for spec in &specs {
        let client = server.connect(&spec.token).await;
        let url = format!("{}#{}", pages.url("/shared"), spec.name);
        let opened = client.call("navigate_page", json!({ "url": url })).await;
        assert!(!opened.is_error, "{}: {}", spec.name, opened.text);
        clients.push((spec.name.clone(), client));
    }
    let started = Instant::now();
    let tenants = clients.iter().map(|(name, client)| async move {
        // Every call of the tenant is in flight at once; each counts on the tenant's page.
        let calls = (0..CALLS).map(|_| {
            client.call_raw(
                "evaluate_script",
                json!({ "function": "() => location.hash + '=' + (window.count = (window.count || 0) + 1)" }),
            )
        });
        (name.clone(), futures::future::join_all(calls).await)
    });
    let results = futures::future::join_all(tenants).await;
    let elapsed = started.elapsed();
    for (name, answers) in results {
        let mut counts = BTreeSet::new();
        for answer in answers {
            let output = answer.unwrap_or_else(|error| panic!("{name}: a call was lost: {error}"));
            assert!(!output.is_error, "{name}: {}", output.text);
            let marker = format!("#{name}=");
            let start = output
                .text
                .find(&marker)
                .unwrap_or_else(|| panic!("{name} got another tenant's answer: {}", output.text));
            let count: usize = output.text[start + marker.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .expect("a count");
            counts.insert(count);
        }
        let expected: BTreeSet<usize> = (1..=CALLS).collect();
        assert_eq!(
            counts, expected,
            "{name}: each call ran exactly once, in its tenant"
        );
    }
    eprintln!(
        "{} calls of {TENANTS} tenants in {:.2} s ({:.1} calls/s)",
        TENANTS * CALLS,
        elapsed.as_secs_f64(),
        (TENANTS * CALLS) as f64 / elapsed.as_secs_f64()
    );
    let (_, metrics) = server.metrics().await;
    for (name, _) in &clients {
        let line = format!(
            "devtools_mcp_tool_calls_total{{tenant=\"{name}\",tool=\"evaluate_script\"}} {CALLS}"
        );
        assert!(metrics.contains(&line), "missing {line} in\n{metrics}");
    }
    for (_, client) in clients {
        client.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_wrong_and_revoked_tokens_get_401_and_sighup_rereads_the_tenants_file() {
    let alice = TenantSpec::new("alice", "token-alice").on_loopback();
    let bob = TenantSpec::new("bob", "token-bob").on_loopback();
    let server = HttpServer::start(&[alice.clone(), bob.clone()], &[]).await;

    let (status, body) = post(&server, None, &[], INITIALIZE).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("Missing bearer token"), "{body}");
    let (status, body) = post(&server, Some("token-mallory"), &[], INITIALIZE).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("Unknown or revoked"), "{body}");
    let (status, _) = post(
        &server,
        None,
        &[("Authorization", "Basic dG9rZW4=")],
        INITIALIZE,
    )
    .await;
    assert_eq!(status, 401);
    let (status, body) = post(&server, Some("token-bob"), &[], INITIALIZE).await;
    assert_eq!(status, 200, "{body}");

    let bob_client = server.connect("token-bob").await;
    let listed = bob_client.call("list_pages", json!({})).await;
    assert!(!listed.is_error, "{}", listed.text);

    server.write_tenants(&[alice.clone(), bob.clone().with("revoked = true")]);
    server.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, _) = post(&server, Some("token-bob"), &[], INITIALIZE).await;
        if status == 401 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "bob's revoked token still works after SIGHUP"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let refused = bob_client.call_raw("list_pages", json!({})).await;
    assert!(
        refused.is_err(),
        "bob's open session still works: {refused:?}"
    );
    let (status, body) = post(&server, Some("token-alice"), &[], INITIALIZE).await;
    assert_eq!(status, 200, "alice is unaffected: {body}");

    // Removing a tenant from the file revokes it too.
    server.write_tenants(std::slice::from_ref(&bob));
    server.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    while post(&server, Some("token-alice"), &[], INITIALIZE).await.0 != 401 {
        assert!(
            Instant::now() < deadline,
            "a removed tenant's token still works"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, _) = post(&server, Some("token-bob"), &[], INITIALIZE).await;
    assert_eq!(status, 200, "bob is back");

    let (status, metrics) = server.metrics().await;
    assert_eq!(status, 200);
    let unauthorized = metrics
        .lines()
        .find_map(|line| line.strip_prefix("devtools_mcp_http_unauthorized_requests_total "))
        .and_then(|value| value.trim().parse::<f64>().ok())
        .expect("the unauthorized counter");
    assert!(unauthorized >= 4.0, "{metrics}");
    let (status, health) = get(&server, "/healthz").await;
    assert_eq!((status, health.as_str()), (200, "ok\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_malformed_and_cross_origin_requests_are_refused_and_serving_goes_on() {
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice").on_loopback()],
        &["--max-body-bytes", "65536"],
    )
    .await;
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"pad":"{}"}}}}"#,
        "x".repeat(200_000)
    );
    let (status, _) = post(&server, Some("token-alice"), &[], huge).await;
    assert_eq!(status, 413, "an oversized body is refused");
    let (status, body) = post(&server, Some("token-alice"), &[], "{not json").await;
    assert!(
        (400..500).contains(&status),
        "malformed JSON: {status} {body}"
    );
    let (status, body) = post(&server, Some("token-alice"), &[], r#"{"hello":"world"}"#).await;
    assert!(
        (400..500).contains(&status),
        "not JSON-RPC: {status} {body}"
    );
    let (status, body) = post(
        &server,
        Some("token-alice"),
        &[("Origin", "http://evil.example")],
        INITIALIZE,
    )
    .await;
    assert_eq!(status, 403, "a foreign Origin is refused: {body}");
    let (status, body) = post(
        &server,
        Some("token-alice"),
        &[("Host", "evil.example")],
        INITIALIZE,
    )
    .await;
    assert_eq!(status, 403, "a rebound Host is refused: {body}");

    let client = server.connect("token-alice").await;
    let listed = client.call("list_pages", json!({})).await;
    assert!(!listed.is_error, "{}", listed.text);
    let unknown = client.call_raw("no_such_tool", json!({})).await;
    assert!(unknown.is_err_and(|error| error.contains("not found")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_hangs_up_mid_call_releases_its_tenant_lock() {
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice").on_loopback()],
        &[],
    )
    .await;
    let client = server.connect("token-alice").await;
    assert!(!client.call("list_pages", json!({})).await.is_error);

    // A raw session whose call hangs for a minute, abandoned after one second.
    let response = reqwest::Client::new()
        .post(server.mcp_url())
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .bearer_auth("token-alice")
        .body(INITIALIZE)
        .send()
        .await
        .expect("initialize");
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .expect("a session id")
        .to_owned();
    drop(response);
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    post(&server, Some("token-alice"), &headers, initialized).await;
    let hang = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"evaluate_script","arguments":{"function":"() => new Promise(resolve => setTimeout(resolve, 60000))"}}}"#;
    let mut request = reqwest::Client::new()
        .post(server.mcp_url())
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .bearer_auth("token-alice")
        .body(hang);
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let response = request
        .send()
        .await
        .expect("the hanging call's response headers");
    assert!(response.status().is_success(), "{}", response.status());
    // Hold the stream while the call runs, then hang up without reading the answer.
    tokio::time::sleep(Duration::from_secs(1)).await;
    drop(response);

    let started = Instant::now();
    let next = client.call("list_pages", json!({})).await;
    assert!(!next.is_error, "{}", next.text);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the tenant's next call waited {:?} for the abandoned one",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policies_and_quotas_of_the_tenants_file_apply_per_tenant() {
    let pages = fixtures();
    let server = HttpServer::start(
        &[
            TenantSpec::new("reader", "token-reader")
                .on_loopback()
                .with("tools = [\"list_pages\", \"take_snapshot\"]"),
            TenantSpec::new("small", "token-small")
                .on_loopback()
                .with("max_pages = 2\nmax_sessions = 1"),
            TenantSpec::new("own", "token-own")
                .on_loopback()
                .with("browser = \"dedicated\""),
        ],
        &[],
    )
    .await;
    let reader = server.connect("token-reader").await;
    let names = reader.tool_names().await;
    assert_eq!(
        names,
        vec!["list_pages".to_owned(), "take_snapshot".to_owned()]
    );
    let refused = reader
        .call("evaluate_script", json!({ "function": "() => 1" }))
        .await;
    assert!(refused.is_error, "{}", refused.text);
    assert!(
        refused.text.contains("not allowed for tenant"),
        "{}",
        refused.text
    );

    let small = server.connect("token-small").await;
    // A trace records every tab of the browser: only for tenants with a browser of their own.
    let small_tools = small.tool_names().await;
    assert!(!small_tools.contains(&"performance_start_trace".to_owned()));
    assert!(small_tools.contains(&"take_snapshot".to_owned()));
    let trace = small.call("performance_start_trace", json!({})).await;
    assert!(
        trace.is_error && trace.text.contains("dedicated"),
        "{}",
        trace.text
    );

    let second = small
        .call("new_page", json!({ "url": pages.url("/shared") }))
        .await;
    assert!(!second.is_error, "{}", second.text);
    let third = small
        .call("new_page", json!({ "url": pages.url("/shared") }))
        .await;
    assert!(third.is_error, "{}", third.text);
    assert!(
        third.text.contains("at most 2 open pages"),
        "{}",
        third.text
    );
    let another_session = server.client("token-small").await;
    assert!(
        another_session.is_err(),
        "a second MCP session beyond max_sessions = 1"
    );

    // A tenant with a browser of its own: its own Chromium, the browser-wide tools too.
    let own = server.connect("token-own").await;
    assert!(
        own.tool_names()
            .await
            .contains(&"performance_start_trace".to_owned())
    );
    let opened = own
        .call("new_page", json!({ "url": pages.url("/shared") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let small_pages = small.call("list_pages", json!({})).await;
    let own_pages = own.call("list_pages", json!({})).await;
    assert_eq!(
        own_pages.text.matches("Shared page").count(),
        1,
        "{}",
        own_pages.text
    );
    assert!(
        page_ids(&own_pages.text)
            .iter()
            .all(|id| !page_ids(&small_pages.text).contains(id)),
        "{}\n{}",
        own_pages.text,
        small_pages.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_tenant_is_closed_and_sigterm_drains_then_closes_the_browser() {
    let pages = fixtures();
    let mut server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice").on_loopback()],
        &["--idle-timeout-secs", "1"],
    )
    .await;
    let client = server.connect("token-alice").await;
    let opened = client
        .call("new_page", json!({ "url": pages.url("/shared") }))
        .await;
    let before = page_ids(&opened.text);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !server.stderr().contains("closing an idle tenant") {
        assert!(Instant::now() < deadline, "the idle tenant was not closed");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let after = client.call("list_pages", json!({})).await;
    assert!(!after.text.contains("Shared page"), "{}", after.text);
    assert!(
        page_ids(&after.text).iter().all(|id| !before.contains(id)),
        "a fresh context after idling: {}",
        after.text
    );

    // A call in flight when SIGTERM arrives still gets its answer.
    let slow = client.call_raw(
        "evaluate_script",
        json!({ "function": "() => new Promise(resolve => setTimeout(() => resolve('finished'), 1500))" }),
    );
    let signal = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        server.signal("TERM");
    };
    let (answer, ()) = tokio::join!(slow, signal);
    let answer = answer.expect("the in-flight call was answered");
    assert!(answer.text.contains("finished"), "{}", answer.text);
    let browsers = crate::support::descendants(server.pid());
    let status = server.wait_exit(Duration::from_secs(15)).await;
    assert!(status.is_some_and(|status| status.success()), "{status:?}");
    let left = crate::support::wait_until_gone(&browsers, Duration::from_secs(5)).await;
    assert!(left.is_empty(), "processes left after shutdown: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenant_flags_switch_tool_categories_on_and_off_per_tenant() {
    let server = HttpServer::start(
        &[
            TenantSpec::new("plain", "token-plain")
                .on_loopback()
                .with("flags = { categoryEmulation = false }"),
            TenantSpec::new("emulating", "token-emulating")
                .on_loopback()
                .with("flags = { categoryEmulation = true, categoryNetwork = false }"),
        ],
        &[],
    )
    .await;
    let plain = server.connect("token-plain").await;
    let plain_tools = plain.tool_names().await;
    assert!(
        !plain_tools.contains(&"emulate".to_owned()),
        "{plain_tools:?}"
    );
    assert!(plain_tools.contains(&"list_network_requests".to_owned()));
    let refused = plain
        .call("resize_page", json!({ "width": 800, "height": 600 }))
        .await;
    assert!(refused.is_error, "{}", refused.text);
    assert!(
        refused
            .text
            .contains("is in category Emulation which is currently disabled"),
        "{}",
        refused.text
    );

    let emulating = server.connect("token-emulating").await;
    let tools = emulating.tool_names().await;
    assert!(tools.contains(&"emulate".to_owned()), "{tools:?}");
    assert!(
        !tools.contains(&"list_network_requests".to_owned()),
        "{tools:?}"
    );
    let resized = emulating
        .call("resize_page", json!({ "width": 800, "height": 600 }))
        .await;
    assert!(!resized.is_error, "{}", resized.text);
    let network = emulating.call("list_network_requests", json!({})).await;
    assert!(
        network.is_error
            && network
                .text
                .contains("is in category Network which is currently disabled"),
        "{}",
        network.text
    );
}

/// A tenant with a browser of its own still has a URL policy (every tenant has one): as 1.11.0
/// refuses PWA calls where network restrictions are configured, a web app (which makes the
/// browser fetch wherever its manifest says) is refused before the browser is asked.
#[tokio::test]
async fn web_apps_are_refused_to_tenants_under_a_url_policy() {
    let server = HttpServer::start(
        &[TenantSpec::new("own", "token-own")
            .on_loopback()
            .with("browser = \"dedicated\"")],
        &["--categoryPwa"],
    )
    .await;
    let own = server.connect("token-own").await;
    let refused = own
        .call(
            "get_os_app_state",
            json!({ "manifestId": "http://127.0.0.1:1/app/" }),
        )
        .await;
    assert!(
        refused.is_error
            && refused
                .text
                .contains("PWA APIs are not supported when network restrictions are configured."),
        "{}",
        refused.text
    );
}

/// The shared-browser refusal of browser-wide effects (a trace, extensions) is decided where
/// the browser is reached, not on the tool's name: a community plugin granted `performance`
/// under any name is refused the same way in a shared browser.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_under_another_name_cannot_trace_a_shared_browser_nor_use_extensions_or_web_apps()
{
    let pages = FixtureServer::start(vec![Route::html("/shared", "<title>Shared</title>")]);
    let scratch = tempfile::tempdir().expect("temp dir");
    let policy = scratch.path().join("policy.toml");
    std::fs::write(
        &policy,
        "[plugins.hostile]\ncapabilities = [\"pages.read\", \"performance\"]\n",
    )
    .expect("write policy");
    let plugins = crate::support::binary_dir().join("test-plugins");
    let server = HttpServer::start(
        &[TenantSpec::new("small", "token-small").on_loopback()],
        &[
            "--categoryExtensions",
            "--categoryPwa",
            "--plugin-dir",
            &plugins.to_string_lossy(),
            "--policy",
            &policy.to_string_lossy(),
        ],
    )
    .await;
    let small = server.connect("token-small").await;
    let opened = small
        .call("new_page", json!({ "url": pages.url("/shared") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let traced = small.call("hostile", json!({ "mode": "trace" })).await;
    assert!(
        traced.is_error
            && traced.text.contains("trace refused")
            && traced.text.contains("dedicated"),
        "{}",
        traced.text
    );
    // Extensions see every tab too: refused where the browser is reached, not by tool name.
    let listed = small.call("list_extensions", json!({})).await;
    assert!(
        listed.is_error && listed.text.contains("dedicated"),
        "{}",
        listed.text
    );
    // So does a web app: it is installed in the whole browser profile.
    let app = small
        .call(
            "get_os_app_state",
            json!({ "manifestId": pages.url("/app/") }),
        )
        .await;
    assert!(
        app.is_error
            && app.text.contains("whole browser profile")
            && app.text.contains("dedicated"),
        "{}",
        app.text
    );
}
