//! Several instances behind a real load balancer: two `devtools-mcp serve` processes behind
//! HAProxy (Debian's `haproxy`) running the shipped `deploy/haproxy/haproxy.cfg` on loopback,
//! hashing on the tenant's token. A tenant always reaches the same instance; when that
//! instance dies its tenant is served by the other one (in a fresh browser context, which the
//! first answer names); a draining instance finishes its calls while new ones go elsewhere;
//! a full one is unready and its new tenants go elsewhere.

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
    // Both instances keep the tenant's files on the same storage, as pods mount one volume.
    let shared = tempfile::tempdir().expect("shared storage");
    let tenants = [TenantSpec::new("alice", "token-alice")
        .on_loopback()
        .with_root(shared.path())];
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
    let owner = owner_of_one_tenant([&first, &second]).await;
    // A file in the tenant's root, on the storage both instances share.
    std::fs::write(shared.path().join("notes.txt"), "kept").expect("write a file");
    let dead = match owner {
        0 => &first,
        _ => &second,
    };
    dead.signal("KILL");
    let killed = Instant::now();
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
    eprintln!(
        "fault cost: the tenant's instance killed, its next session answered {} ms later",
        killed.elapsed().as_millis()
    );
    assert!(!moved.is_error, "{}", moved.text);
    assert!(
        !moved.text.contains("Alice page"),
        "a fresh context on the other instance: {}",
        moved.text
    );
    assert!(
        moved.text.contains("## Server notes\n- This tenant's browser state (its pages, cookies and storage) was lost"),
        "the first answer after the move says the state was lost: {}",
        moved.text
    );
    // Said once, and the tenant's files are all there.
    let client = HttpClient::connect(&balancer.url, "token-alice")
        .await
        .expect("connect again");
    let next = client.call("list_pages", json!({})).await;
    assert!(!next.text.contains("was lost"), "{}", next.text);
    client.close().await;
    let kept = std::fs::read_to_string(shared.path().join("notes.txt"));
    assert_eq!(kept.ok().as_deref(), Some("kept"));
}

/// SIGTERM to the instance serving a tenant while one of its calls runs: that call is answered
/// in full (the instance drains), and the tenant's new requests meanwhile go to the other
/// instance (the draining one no longer listens, and the balancer retries elsewhere).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_instance_finishes_its_calls_while_new_ones_go_elsewhere() {
    let tenants = [TenantSpec::new("alice", "token-alice").on_loopback()];
    let first = HttpServer::start(&tenants, &["--shutdown-grace-secs", "30"]).await;
    let second = HttpServer::start(&tenants, &["--shutdown-grace-secs", "30"]).await;
    let balancer = Haproxy::start([&first, &second]).expect("haproxy (scripts/test installs it)");
    let client = through(&balancer, "token-alice").await;
    assert!(!client.call("list_pages", json!({})).await.is_error);
    let owner = owner_of_one_tenant([&first, &second]).await;
    let draining = [&first, &second][owner];

    let slow =
        "() => new Promise(resolve => setTimeout(() => resolve('finished while draining'), 3000))";
    let in_flight = client.call("evaluate_script", json!({ "function": slow }));
    let drain_then_connect = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        draining.signal("TERM");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let started = Instant::now();
        let elsewhere = HttpClient::connect(&balancer.url, "token-alice")
            .await
            .expect("a new session while the owner drains");
        let listed = elsewhere.call("list_pages", json!({})).await;
        let took = started.elapsed();
        elsewhere.close().await;
        (listed, took)
    };
    let (answered, (listed, took)) = tokio::join!(in_flight, drain_then_connect);
    assert!(!answered.is_error, "{}", answered.text);
    assert!(
        answered.text.contains("finished while draining"),
        "the in-flight call was cut: {}",
        answered.text
    );
    assert!(!listed.is_error, "{}", listed.text);
    assert!(
        took < Duration::from_secs(2),
        "the new session waited for the drain: {took:?}"
    );
    eprintln!(
        "fault cost: a new session while the tenant's instance drained answered in {} ms",
        took.as_millis()
    );
    let (_, metrics) = [&first, &second][1 - owner].metrics().await;
    assert!(
        metrics.contains("\ndevtools_mcp_active_tenants 1"),
        "the other instance took the tenant: {metrics}"
    );
    client.close().await;
}

/// An instance at its `--max-tenants` is unready and refuses new tenants with 503, which the
/// balancer retries on the other instance: every tenant is served, and the full instance
/// holds no more than its cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_instance_is_unready_and_its_new_tenants_go_elsewhere() {
    let tenants: Vec<TenantSpec> = (0..8)
        .map(|index| TenantSpec::new(&format!("t{index}"), &format!("token-t{index}")))
        .collect();
    let small = HttpServer::start(&tenants, &["--max-tenants", "1"]).await;
    let large = HttpServer::start(&tenants, &[]).await;
    let readyz = |server: &HttpServer| {
        let url = format!("{}/readyz", server.base);
        async move { reqwest::get(url).await.expect("readyz").status().as_u16() }
    };
    assert_eq!(readyz(&small).await, 200);
    let balancer = Haproxy::start([&small, &large]).expect("haproxy (scripts/test installs it)");
    let mut clients = Vec::new();
    for index in 0..8 {
        let client = through(&balancer, &format!("token-t{index}")).await;
        let listed = client.call("list_pages", json!({})).await;
        assert!(!listed.is_error, "t{index}: {}", listed.text);
        clients.push(client);
    }
    // Every tenant again: none lands on the full instance, none is refused.
    for (index, client) in clients.iter().enumerate() {
        let listed = client.call("list_pages", json!({})).await;
        assert!(!listed.is_error, "t{index} again: {}", listed.text);
    }
    let (_, small_metrics) = small.metrics().await;
    let (_, large_metrics) = large.metrics().await;
    assert!(
        small_metrics.contains("\ndevtools_mcp_active_tenants 1"),
        "{small_metrics}"
    );
    assert!(
        large_metrics.contains("\ndevtools_mcp_active_tenants 7"),
        "{large_metrics}"
    );
    assert!(
        !small_metrics.contains("\ndevtools_mcp_http_refused_full_requests_total 0"),
        "no tenant was hashed to the full instance, so the refusal went untested: {small_metrics}"
    );
    assert_eq!(readyz(&small).await, 503, "the full instance is unready");
    assert_eq!(readyz(&large).await, 200);
    for client in clients {
        client.close().await;
    }
}

/// Which of two instances holds the one tenant in use, from their `/metrics` (asking each
/// directly would make both take the tenant).
async fn owner_of_one_tenant(servers: [&HttpServer; 2]) -> usize {
    let mut owner = None;
    for (index, server) in servers.into_iter().enumerate() {
        let (status, metrics) = server.metrics().await;
        assert_eq!(status, 200, "{metrics}");
        if metrics.contains("\ndevtools_mcp_active_tenants 1") {
            owner = Some(index);
        }
    }
    owner.expect("one instance holds the tenant")
}

/// A planned stop is not a crash: SIGTERM gives every tenant's lease back, so the instance
/// started next on the same storage (a plain restart) answers each tenant's first call
/// normally, while after a kill each tenant's first answer says its state was lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_after_sigterm_is_not_reported_as_lost_state() {
    let pages = FixtureServer::start(vec![Route::html(
        "/mine",
        "<!doctype html><title>A page</title><p>mine</p>",
    )]);
    let storage = [
        tempfile::tempdir().expect("alice's storage"),
        tempfile::tempdir().expect("bob's storage"),
    ];
    let tenants = [
        TenantSpec::new("alice", "token-alice")
            .on_loopback()
            .with_root(storage[0].path()),
        TenantSpec::new("bob", "token-bob")
            .on_loopback()
            .with_root(storage[1].path()),
    ];
    let tokens = ["token-alice", "token-bob"];
    let leases = storage
        .each_ref()
        .map(|root| root.path().join(".devtools-mcp-lease"));
    let mut first = HttpServer::start(&tenants, &[]).await;
    for token in tokens {
        let client = first.connect(token).await;
        let opened = client
            .call("new_page", json!({ "url": pages.url("/mine") }))
            .await;
        assert!(!opened.is_error, "{token}: {}", opened.text);
    }
    for lease in &leases {
        assert!(
            lease.exists(),
            "the serving instance holds {}",
            lease.display()
        );
    }
    first.signal("TERM");
    let status = first.wait_exit(Duration::from_secs(20)).await;
    assert!(status.is_some_and(|status| status.success()), "{status:?}");
    for lease in &leases {
        assert!(!lease.exists(), "SIGTERM gave {} back", lease.display());
    }

    let mut second = HttpServer::start(&tenants, &[]).await;
    for token in tokens {
        let client = second.connect(token).await;
        let listed = client.call("list_pages", json!({})).await;
        assert!(!listed.is_error, "{token}: {}", listed.text);
        assert!(
            !listed.text.contains("was lost"),
            "{token}: {}",
            listed.text
        );
        client.close().await;
    }
    // A crash is still told: killed, the instance keeps its leases.
    second.signal("KILL");
    let _killed = second.wait_exit(Duration::from_secs(20)).await;
    let third = HttpServer::start(&tenants, &[]).await;
    for token in tokens {
        let client = third.connect(token).await;
        let listed = client.call("list_pages", json!({})).await;
        assert!(!listed.is_error, "{token}: {}", listed.text);
        assert!(
            listed
                .text
                .contains("browser state (its pages, cookies and storage) was lost"),
            "{token}: {}",
            listed.text
        );
        client.close().await;
    }
}
