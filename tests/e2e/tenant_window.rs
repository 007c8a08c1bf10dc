//! A tenant's window: 1280x720 unless the operator gives `--viewport` (the 4K screen 1.11.0
//! emulates would size each tenant's window to 1905x2140, and the GPU process keeps its
//! surfaces: about 12 MiB more per idle tenant, BENCHMARKS.md "What an idle agent costs").

use crate::support::{HttpServer, TenantSpec};
use serde_json::json;

const OUTER_SIZE: &str = "() => outerWidth + 'x' + outerHeight";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_window_is_1280_by_720_unless_the_operator_says() {
    let server = HttpServer::start(&[TenantSpec::new("alice", "token-alice")], &[]).await;
    let alice = server.connect("token-alice").await;
    let size = alice
        .call("evaluate_script", json!({ "function": OUTER_SIZE }))
        .await;
    assert!(size.text.contains("\"1280x720\""), "{}", size.text);
    let opened = alice
        .call("new_page", json!({ "url": "about:blank" }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let size = alice
        .call("evaluate_script", json!({ "function": OUTER_SIZE }))
        .await;
    assert!(size.text.contains("\"1280x720\""), "{}", size.text);

    let sized = HttpServer::start(
        &[TenantSpec::new("bob", "token-bob")],
        &["--viewport", "1024x768"],
    )
    .await;
    let bob = sized.connect("token-bob").await;
    let size = bob
        .call("evaluate_script", json!({ "function": OUTER_SIZE }))
        .await;
    assert!(size.text.contains("\"1024x768\""), "{}", size.text);
}
