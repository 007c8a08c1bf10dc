//! Several instances behind a real load balancer: two `devtools-mcp serve` processes behind
//! HAProxy (Debian's `haproxy`) running the shipped `deploy/haproxy/haproxy.cfg` on loopback,
//! hashing on the tenant's token. A tenant always reaches the same instance, and when that
//! instance dies its tenant is served by the other one (in a fresh browser context).

use crate::support::{FixtureServer, HttpClient, HttpServer, Route, TenantSpec};
use serde_json::json;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

struct Haproxy {
    child: Child,
    url: String,
}

impl Haproxy {
    fn start(backends: [&HttpServer; 2]) -> Option<Haproxy> {
        let program = crate::support::which("haproxy")?;
        let port = crate::support::free_port();
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/haproxy/haproxy.cfg");
        let child = crate::support::command(program)
            .arg("-db")
            .arg("-f")
            .arg(config)
            .env("MCP_BIND", format!("127.0.0.1:{port}"))
            .env("MCP_BACKEND_1", format!("127.0.0.1:{}", backends[0].port()))
            .env("MCP_BACKEND_2", format!("127.0.0.1:{}", backends[1].port()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start haproxy");
        crate::support::wait_for_port(port, Duration::from_secs(10), "haproxy");
        Some(Haproxy {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        })
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn through(balancer: &Haproxy, token: &str) -> HttpClient {
    // Health checks mark both instances up after `rise 2` checks (500 ms apart).
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        match HttpClient::connect(&balancer.url, token).await {
            Ok(client) => return client,
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(error) => panic!("no instance answered through haproxy: {error}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_stays_on_one_instance_and_moves_when_it_dies() {
    let pages = FixtureServer::start(vec![Route::html(
        "/mine",
        "<!doctype html><title>Alice page</title><p>alice</p>",
    )]);
    let tenants = [TenantSpec::new("alice", "token-alice").on_loopback()];
    let first = HttpServer::start(&tenants, &[]).await;
    let second = HttpServer::start(&tenants, &[]).await;
    let Some(balancer) = Haproxy::start([&first, &second]) else {
        panic!(
            "Debian's haproxy is not installed (scripts/test installs it: apt-get install haproxy)"
        );
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;

    let client = through(&balancer, "token-alice").await;
    let opened = client
        .call("new_page", json!({ "url": pages.url("/mine") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    client.close().await;
    // Every new session of the tenant lands on the instance that has its page.
    for _ in 0..5 {
        let again = through(&balancer, "token-alice").await;
        let listed = again.call("list_pages", json!({})).await;
        assert!(listed.text.contains("Alice page"), "{}", listed.text);
        again.close().await;
    }
    // Which instance is it? Asked directly, only one has the page.
    let mut owner = None;
    for (index, server) in [&first, &second].into_iter().enumerate() {
        let direct = server.connect("token-alice").await;
        if direct
            .call("list_pages", json!({}))
            .await
            .text
            .contains("Alice page")
        {
            owner = Some(index);
        }
        direct.close().await;
    }
    let owner = owner.expect("one instance holds the tenant's page");
    let dead = match owner {
        0 => &first,
        _ => &second,
    };
    dead.signal("KILL");
    // The balancer notices within a health-check interval and sends the tenant to the other.
    let deadline = Instant::now() + Duration::from_secs(20);
    let moved = loop {
        if let Ok(client) = HttpClient::connect(&balancer.url, "token-alice").await
            && let Ok(listed) = client.call_raw("list_pages", json!({})).await
        {
            client.close().await;
            break listed;
        }
        assert!(
            Instant::now() < deadline,
            "the tenant was not moved to the live instance"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert!(!moved.is_error, "{}", moved.text);
    assert!(
        !moved.text.contains("Alice page"),
        "a fresh context on the other instance: {}",
        moved.text
    );
}
