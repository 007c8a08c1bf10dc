//! `serve --discard-idle-secs`: an idle tenant's pages are closed (their renderers go back to
//! the machine), its browser context is kept, and its next call finds them reopened at their
//! URLs under the same ids, with a note saying what was lost.

use crate::support::{FixtureServer, HttpServer, Route, TenantSpec, descendants};
use serde_json::json;
use std::time::{Duration, Instant};

/// Renderer processes under the server (Chromium names their type on the command line).
fn renderers(server: u32) -> usize {
    descendants(server)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|command| String::from_utf8_lossy(&command).contains("--type=renderer"))
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_tenants_pages_are_closed_and_reopened_by_its_next_call() {
    let pages = FixtureServer::start(vec![Route::html(
        "/kept",
        "<!doctype html><title>Kept</title><p>a page worth keeping</p>",
    )]);
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice").on_loopback()],
        &["--discard-idle-secs", "2"],
    )
    .await;
    let alice = server.connect("token-alice").await;
    let opened = alice
        .call("navigate_page", json!({ "url": pages.url("/kept") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let stored = alice
        .call(
            "evaluate_script",
            json!({ "function": "() => { localStorage.setItem('kept', 'yes'); document.cookie = 'kept=yes'; return 'stored'; }" }),
        )
        .await;
    assert!(stored.text.contains("stored"), "{}", stored.text);
    let listed = alice.call("list_pages", json!({})).await;
    let id = listed
        .text
        .lines()
        .find(|line| line.contains("/kept"))
        .and_then(|line| line.split_once(':'))
        .map(|(id, _)| id.trim().to_owned())
        .unwrap_or_else(|| panic!("no /kept page in {}", listed.text));
    let busy = renderers(server.pid());
    assert!(busy >= 1, "no renderer under the server");

    // Idle: its renderer goes (the sweep runs every second at this setting).
    let deadline = Instant::now() + Duration::from_secs(20);
    while renderers(server.pid()) >= busy && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let idle = renderers(server.pid());
    assert!(
        idle < busy,
        "the idle tenant's renderer stayed: {busy} -> {idle}"
    );

    // The next call finds the page back, same id, same URL, same cookies and storage.
    let back = alice
        .call(
            "evaluate_script",
            json!({ "function": "() => localStorage.getItem('kept') + ' ' + document.cookie + ' ' + location.pathname" }),
        )
        .await;
    assert!(!back.is_error, "{}", back.text);
    assert!(back.text.contains("yes kept=yes /kept"), "{}", back.text);
    assert!(
        back.text.contains("closed after 2 s without a call")
            && back.text.contains(&format!("{id} ({}", pages.url("/kept"))),
        "{}",
        back.text
    );
    let listed = alice.call("list_pages", json!({})).await;
    assert!(
        listed.text.contains(&format!("{id}: ")) && !listed.text.contains("closed after"),
        "{}",
        listed.text
    );
}

/// A flag only `serve` reads stops a stdio start instead of being ignored.
#[test]
fn serve_only_flags_stop_a_stdio_start() {
    for flag in [
        "--discard-idle-secs",
        "--max-tenants",
        "--idle-timeout-secs",
    ] {
        let output = crate::support::command(env!("CARGO_BIN_EXE_devtools-mcp"))
            .args([flag, "5"])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run the server");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{flag}: {stderr}");
        assert!(
            stderr.contains(&format!("{flag} applies to `serve` (its tenants) only")),
            "{flag}: {stderr}"
        );
    }
}
