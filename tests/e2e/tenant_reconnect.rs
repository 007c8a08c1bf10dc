//! Faults under several tenants sharing one browser (issue 45 item 11): after the DevTools
//! connection is cut, every page the browser holds is adopted again by the tenant whose
//! browser context holds it (listed, under its quota and footprint watch) or closed; none is
//! left running outside every tenant's listing.

use crate::support::{FixtureServer, HttpServer, Route, ServerSetup, TenantSpec};
use serde_json::json;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const RECONNECTED: &str = "Note: the browser was restarted or reconnected since the last call.";

/// A TCP relay to a browser's DevTools port whose cut closes the server's side only: the
/// browser's side stays open, as when a network fault or a proxy drops one half and the
/// browser never learns it. The browser then keeps every context of the old connection.
struct HalfOpenRelay {
    port: u16,
    server_side: Arc<Mutex<Vec<TcpStream>>>,
    /// Held open until the relay is dropped.
    _browser_side: Arc<Mutex<Vec<TcpStream>>>,
}

impl HalfOpenRelay {
    fn start(upstream: std::net::SocketAddr) -> HalfOpenRelay {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind the relay");
        let port = listener.local_addr().expect("relay address").port();
        let server_side = Arc::new(Mutex::new(Vec::<TcpStream>::new()));
        let browser_side = Arc::new(Mutex::new(Vec::<TcpStream>::new()));
        let (servers, browsers) = (server_side.clone(), browser_side.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(browser) = TcpStream::connect(upstream) else {
                    continue;
                };
                if let (Ok(mut servers), Ok(mut browsers)) = (servers.lock(), browsers.lock()) {
                    servers.extend(client.try_clone().ok());
                    browsers.extend(browser.try_clone().ok());
                }
                if let (Ok(mut from), Ok(mut to)) = (client.try_clone(), browser.try_clone()) {
                    // The server's side closing never closes the browser's.
                    std::thread::spawn(move || {
                        let _copied = std::io::copy(&mut from, &mut to);
                    });
                }
                if let (Ok(mut from), Ok(mut to)) = (browser.try_clone(), client.try_clone()) {
                    std::thread::spawn(move || {
                        let _copied = std::io::copy(&mut from, &mut to);
                        let _closed = to.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        HalfOpenRelay {
            port,
            server_side,
            _browser_side: browser_side,
        }
    }

    /// Closes the server's side of every connection carried so far.
    fn cut(&self) {
        if let Ok(mut live) = self.server_side.lock() {
            for stream in live.drain(..) {
                let _closed = stream.shutdown(Shutdown::Both);
            }
        }
    }
}

/// The URLs of every page target the browser holds, whatever its context (DevTools' own
/// `/json/list`, asked of the browser directly, not through the server).
async fn browser_pages(ws_endpoint: &str) -> Vec<String> {
    let authority = ws_endpoint
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .unwrap_or_default();
    let listed: serde_json::Value = reqwest::get(format!("http://{authority}/json/list"))
        .await
        .expect("the browser's /json/list")
        .json()
        .await
        .expect("a JSON list");
    listed
        .as_array()
        .into_iter()
        .flatten()
        .filter(|target| target["type"] == "page")
        .filter_map(|target| target["url"].as_str().map(String::from))
        .collect()
}

/// The rows of `## Pages` in an answer.
fn listed_rows(text: &str) -> usize {
    text.lines()
        .filter(|line| {
            line.split_once(": ")
                .is_some_and(|(id, _)| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_cut_connection_every_page_is_its_tenants_again_or_closed() {
    let browser = crate::lifecycle::ExternalBrowser::start();
    let endpoint = url::Url::parse(&browser.ws_endpoint).expect("ws endpoint");
    let upstream = endpoint
        .socket_addrs(|| None)
        .expect("endpoint address")
        .into_iter()
        .next()
        .expect("an address");
    let relay = HalfOpenRelay::start(upstream);
    let mut relayed = endpoint.clone();
    relayed.set_port(Some(relay.port)).expect("relay port");
    let pages = FixtureServer::start(
        ["alice", "bob", "carol"]
            .map(|name| {
                Route::html(
                    &format!("/{name}"),
                    format!("<!doctype html><title>{name}</title><p>{name}</p>"),
                )
            })
            .to_vec(),
    );
    // Heap shares of their own: removing carol then changes neither alice nor bob.
    let tenant = |name: &str| {
        TenantSpec::new(name, &format!("token-{name}"))
            .on_loopback()
            .with("heap_snapshot_mib = 64")
    };
    let (alice, bob, carol) = (tenant("alice"), tenant("bob"), tenant("carol"));
    let setup = ServerSetup {
        browser: Some(vec![
            "--no-page-id-routing".into(),
            "--wsEndpoint".into(),
            relayed.to_string(),
        ]),
        ..ServerSetup::default()
    };
    let server =
        HttpServer::start_with(setup, &[alice.clone(), bob.clone(), carol.clone()], &[]).await;
    let mut clients = Vec::new();
    for name in ["alice", "bob", "carol"] {
        let client = server.connect(&format!("token-{name}")).await;
        let opened = client
            .call("new_page", json!({ "url": pages.url(&format!("/{name}")) }))
            .await;
        assert!(!opened.is_error, "{name}: {}", opened.text);
        clients.push(client);
    }
    let before = browser_pages(&browser.ws_endpoint).await;
    assert!(
        before.contains(&pages.url("/carol")),
        "the browser lists every tenant's page: {before:?}"
    );

    relay.cut();
    // Carol goes away while the connection is down: closing her context fails, so it is
    // left in the browser with her page, owned by no one.
    server.write_tenants(&[alice, bob]);
    server.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !server.stderr().contains("tenants file re-read") {
        assert!(Instant::now() < deadline, "the reload was not logged");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let started = Instant::now();
    let alice_listed = loop {
        let listed = clients[0].call("list_pages", json!({})).await;
        if listed.text.starts_with(RECONNECTED) || started.elapsed() > Duration::from_secs(10) {
            break listed;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        alice_listed.text.starts_with(RECONNECTED),
        "{}",
        alice_listed.text
    );
    assert!(
        alice_listed.text.contains(&pages.url("/alice")),
        "alice's page is hers again after the reconnection: {}",
        alice_listed.text
    );
    assert!(!alice_listed.text.contains(&pages.url("/bob")));
    let bob_listed = clients[1].call("list_pages", json!({})).await;
    assert!(
        bob_listed.text.contains(&pages.url("/bob")),
        "bob's page is his again after the reconnection: {}",
        bob_listed.text
    );
    assert!(!bob_listed.text.contains(&pages.url("/alice")));

    // Every page the browser holds is in a tenant's listing, but the browser's own first tab.
    let after = browser_pages(&browser.ws_endpoint).await;
    assert!(
        !after.contains(&pages.url("/carol")),
        "the removed tenant's page runs on: {after:?}"
    );
    let listed = listed_rows(&alice_listed.text) + listed_rows(&bob_listed.text);
    assert_eq!(
        after.len(),
        listed + 1,
        "pages outside every listing: {after:?}\nalice: {}\nbob: {}",
        alice_listed.text,
        bob_listed.text
    );
    // Adopted pages are the tenants' to use.
    let snapshot = clients[0].call("take_snapshot", json!({})).await;
    assert!(!snapshot.is_error, "{}", snapshot.text);
}
