//! Pools every tenant shares (issue 45 item 8), end to end: the connection cap derives from
//! the process's real descriptor limit, and at the cap idle connections that never
//! authenticated make room, so a flood of them neither stops `/healthz` nor locks a tenant out.

use crate::support::{HttpServer, ServerSetup, TenantSpec};
use serde_json::json;
use std::time::{Duration, Instant};

/// Idle connections opened by the flood: more than the server's 1,024 descriptors.
const FLOOD: usize = 1200;
/// Loopback addresses they come from, each under the per-address cap (256).
const SOURCES: usize = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_idle_connections_under_1024_descriptors_lock_no_tenant_out() {
    let setup = ServerSetup {
        open_files: Some(1024),
        ..ServerSetup::default()
    };
    // Idle connections are not cut by their header timeout during the test.
    let server = HttpServer::start_with(
        setup,
        &[TenantSpec::new("alice", "token-alice")],
        &["--header-read-timeout-secs", "300"],
    )
    .await;
    let client = server.connect("token-alice").await;
    let warm = client.call("list_pages", json!({})).await;
    assert!(!warm.is_error, "{}", warm.text);
    client.close().await;

    // From several loopback addresses, as many clients.
    let address: std::net::SocketAddr = format!("127.0.0.1:{}", server.port())
        .parse()
        .expect("the server's address");
    let mut flood = Vec::with_capacity(FLOOD);
    for index in 0..FLOOD {
        let source: std::net::SocketAddr = format!("127.0.0.{}:0", 2 + index % SOURCES)
            .parse()
            .expect("a loopback source");
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.bind(source).expect("bind a loopback source");
        // A server that stopped accepting fills its listen queue: the rest of the flood
        // then waits in the kernel, which is no reason to stop the test.
        if let Ok(Ok(stream)) =
            tokio::time::timeout(Duration::from_secs(1), socket.connect(address)).await
        {
            flood.push(stream);
        }
    }
    assert!(
        flood.len() >= 1000,
        "only {} connections opened",
        flood.len()
    );
    tokio::time::sleep(Duration::from_secs(1)).await;

    let started = Instant::now();
    let health = tokio::time::timeout(
        Duration::from_secs(15),
        reqwest::get(format!("{}/healthz", server.base)),
    )
    .await
    .unwrap_or_else(|_| {
        panic!(
            "/healthz did not answer under the flood:\n{}",
            server.stderr()
        )
    })
    .expect("a response");
    assert_eq!(health.status().as_u16(), 200, "{}", server.stderr());
    let tenant = async {
        let client = server.connect("token-alice").await;
        let answer = client.call("list_pages", json!({})).await;
        client.close().await;
        answer
    };
    let answer = tokio::time::timeout(Duration::from_secs(60), tenant)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "the tenant waited {:?} behind idle connections:\n{}",
                started.elapsed(),
                server.stderr()
            )
        });
    assert!(!answer.is_error, "{}", answer.text);
    // The server stayed within its limit: the cap keeps a reserve of descriptors.
    let open = std::fs::read_dir(format!("/proc/{}/fd", server.pid()))
        .map(|entries| entries.count())
        .unwrap_or_default();
    assert!(open < 1024, "the server holds {open} descriptors");
    drop(flood);
}
