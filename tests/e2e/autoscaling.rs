//! The autoscaling signal of `serve` (deploy/kubernetes/horizontalpodautoscaler.yaml reads
//! it): `/metrics` counts the agents holding a browser context, those mid-call, and their
//! calls in flight, and each gauge follows the tenants up as they call and down as they
//! finish and expire.

use crate::support::{HttpServer, TenantSpec};
use serde_json::json;
use std::time::{Duration, Instant};

/// `(active_tenants, busy_tenants, calls_in_flight)`.
type Gauges = (i64, i64, i64);

fn gauge(metrics: &str, name: &str) -> Option<i64> {
    metrics.lines().find_map(|line| {
        line.strip_prefix(name)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

async fn gauges(server: &HttpServer) -> (Option<Gauges>, String) {
    let (status, metrics) = server.metrics().await;
    assert_eq!(status, 200, "{metrics}");
    let read = (|| {
        Some((
            gauge(&metrics, "devtools_mcp_active_tenants")?,
            gauge(&metrics, "devtools_mcp_busy_tenants")?,
            gauge(&metrics, "devtools_mcp_calls_in_flight")?,
        ))
    })();
    (read, metrics)
}

/// Polls `/metrics` until the gauges read `expected`; panics with the last scrape after 20 s.
async fn wait_for(server: &HttpServer, expected: Gauges, when: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (read, metrics) = gauges(server).await;
        if read == Some(expected) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{when}: expected (active, busy, in flight) = {expected:?}, read {read:?}:\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_gauges_rise_with_calling_tenants_and_fall_when_they_finish_and_expire() {
    let server = HttpServer::start(
        &[
            TenantSpec::new("alice", "token-alice"),
            TenantSpec::new("bob", "token-bob"),
        ],
        &["--idle-timeout-secs", "3"],
    )
    .await;
    let (read, metrics) = gauges(&server).await;
    for name in ["active_tenants", "busy_tenants", "calls_in_flight"] {
        assert!(
            metrics.contains(&format!("# HELP devtools_mcp_{name} "))
                && metrics.contains(&format!("# TYPE devtools_mcp_{name} gauge")),
            "{name} is a documented gauge:\n{metrics}"
        );
    }
    assert_eq!(read, Some((0, 0, 0)), "{metrics}");

    // Connecting is not using: an agent costs a browser context from its first call.
    let alice = server.connect("token-alice").await;
    let bob = server.connect("token-bob").await;
    wait_for(&server, (0, 0, 0), "two clients connected, no call yet").await;

    // Both agents mid-call at once: two active, two busy, two calls in flight.
    let slow = json!({
        "function": "() => new Promise(resolve => setTimeout(() => resolve('slow call done'), 3000))"
    });
    let (alice_answer, bob_answer, ()) = tokio::join!(
        alice.call("evaluate_script", slow.clone()),
        bob.call("evaluate_script", slow),
        wait_for(&server, (2, 2, 2), "both tenants calling"),
    );
    for answer in [&alice_answer, &bob_answer] {
        assert!(answer.text.contains("slow call done"), "{}", answer.text);
    }
    // Answered: no load left, both contexts still held for their next turn.
    wait_for(&server, (2, 0, 0), "both answered").await;

    // Alice keeps working; Bob ends and his context expires after the idle timeout.
    bob.close().await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let listed = alice.call("list_pages", json!({})).await;
        assert!(!listed.is_error, "{}", listed.text);
        let (read, metrics) = gauges(&server).await;
        if read == Some((1, 0, 0)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Bob's idle context was not closed while Alice kept calling: {read:?}\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    alice.close().await;
    wait_for(&server, (0, 0, 0), "both tenants gone idle").await;
}
