//! A tenant's footprint is what its browser context holds, wherever it holds it: a
//! SharedWorker (a target of the context, not of a page), a `WebAssembly.Memory` or canvas
//! backing stores (memory of the tenant's renderer processes that no DevTools heap shows),
//! each held to the tenant's own `renderer_memory_mib` while a tenant with a larger cap
//! shares the browser; and a shared or dedicated worker spinning after the call that started
//! it is stopped.

use crate::support::{FixtureServer, HttpClient, HttpServer, Route, TenantSpec};
use serde_json::json;
use std::time::{Duration, Instant};

const CAP: &str = "renderer_memory_mib = 64\ncall_timeout_secs = 40";

/// Grows to 200 MiB of ArrayBuffers in 8 MiB steps, and keeps them.
const HOG_SHARED_WORKER: &str = "const hog = []; onconnect = (event) => event.ports[0].postMessage('connected'); setInterval(() => { if (hog.length < 25) { const b = new ArrayBuffer(8 << 20); new Uint8Array(b).fill(1); hog.push(b); } }, 50);";

/// Keeps a core busy in 90 ms slices, answering between them.
const SPINNING_SHARED_WORKER: &str = "onconnect = (event) => event.ports[0].postMessage('connected'); setInterval(() => { const t = Date.now(); while (Date.now() - t < 90); }, 0);";

fn fixtures() -> FixtureServer {
    FixtureServer::start(vec![
        Route::html(
            "/page",
            "<!doctype html><title>Fixture</title><p>fixture page body</p>",
        ),
        Route::new("/hog-shared.js", "text/javascript", HOG_SHARED_WORKER),
        Route::new("/spin-shared.js", "text/javascript", SPINNING_SHARED_WORKER),
    ])
}

/// Alice capped at 64 MiB with `/page` open, beside Bob with the default cap (1 GiB) and a
/// page of his own: a limit that holds only for the largest cap in the browser fails here.
async fn alice_beside_bob(pages: &FixtureServer) -> (HttpServer, HttpClient, HttpClient) {
    let server = HttpServer::start(
        &[
            TenantSpec::new("alice", "token-alice")
                .on_loopback()
                .with(CAP),
            TenantSpec::new("bob", "token-bob").on_loopback(),
        ],
        &[],
    )
    .await;
    let bob = server.connect("token-bob").await;
    let opened = bob
        .call("new_page", json!({ "url": pages.url("/page") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let alice = server.connect("token-alice").await;
    let opened = alice
        .call("new_page", json!({ "url": pages.url("/page") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    (server, alice, bob)
}

/// What the tenant's answers said until `noted` was in one of them (or `within` passed),
/// and one listing more.
async fn answers_until(alice: &HttpClient, noted: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    let mut answers = String::new();
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let listed = alice.call("list_pages", json!({})).await;
        answers.push_str("\n--- next answer ---\n");
        answers.push_str(&listed.text);
        if listed.text.contains(noted) {
            let listed = alice.call("list_pages", json!({})).await;
            answers.push_str("\n--- next answer ---\n");
            answers.push_str(&listed.text);
            break;
        }
    }
    answers
}

/// Runs `function` in the selected page; what the cap stops never says `survived`.
async fn run(alice: &HttpClient, function: &str) -> String {
    let answer = alice
        .call("evaluate_script", json!({ "function": function }))
        .await;
    assert!(!answer.text.contains("survived"), "{}", answer.text);
    answer.text
}

/// The private memory (`RssAnon` + `VmSwap`) of every process under the server: the
/// browser and all of its children.
fn browser_private_mib(server_pid: u32) -> u64 {
    let mut total_kib = 0;
    for pid in descendants(server_pid) {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        for line in status.lines() {
            if let Some((key, value)) = line.split_once(':')
                && matches!(key, "RssAnon" | "VmSwap")
            {
                let kib = value.trim().trim_end_matches("kB").trim();
                total_kib += kib.parse::<u64>().unwrap_or(0);
            }
        }
    }
    total_kib >> 10
}

/// CPU seconds the processes under the server (not the server itself) used so far.
fn browser_cpu_seconds(server_pid: u32) -> f64 {
    let ticks: u64 = descendants(server_pid)
        .into_iter()
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
            Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
        })
        .sum();
    ticks as f64 / 100.0
}

fn descendants(root: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let parent = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()?;
            Some((pid, parent))
        })
        .collect();
    let mut found = vec![];
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, _) in parents.iter().filter(|(_, of)| *of == parent) {
            found.push(*pid);
            frontier.push(*pid);
        }
    }
    found
}

/// The note says what was closed over Alice's cap, the browser gave the memory back, and
/// Bob (whose renderers hold what they held) kept his page and had nothing closed.
async fn assert_caught(
    answers: &str,
    what: &str,
    server: &HttpServer,
    baseline_mib: u64,
    bob: &HttpClient,
) {
    eprintln!("alice's answers: {answers}");
    assert!(
        answers.contains(what) && answers.contains("renderer_memory_mib of 64 MiB"),
        "no note of {what} over the cap: {answers}"
    );
    let now = browser_private_mib(server.pid());
    assert!(
        now < baseline_mib + 120,
        "the browser still holds {now} MiB (it held {baseline_mib} MiB before): {answers}"
    );
    let listed = bob.call("list_pages", json!({})).await;
    assert!(
        listed.text.contains("/page") && !listed.text.contains("was closed"),
        "{}",
        listed.text
    );
}

fn assert_gone(answers: &str, url: &str) {
    let last = answers
        .rsplit("--- next answer ---")
        .next()
        .unwrap_or_default();
    assert!(!last.contains(url), "{url} is still open: {answers}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_worker_holding_more_than_the_cap_is_closed() {
    let pages = fixtures();
    let (server, alice, bob) = alice_beside_bob(&pages).await;
    let baseline = browser_private_mib(server.pid());
    let started = run(
        &alice,
        "() => { window.w = new SharedWorker('/hog-shared.js'); return 'started'; }",
    )
    .await;
    assert!(started.contains("started"), "{started}");
    let answers = answers_until(&alice, "renderer_memory_mib", Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_caught(&answers, "Shared worker", &server, baseline, &bob).await;
    alice.close().await;
    bob.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wasm_memory_past_the_cap_is_caught_beside_a_tenant_with_a_larger_cap() {
    let pages = fixtures();
    let (server, alice, bob) = alice_beside_bob(&pages).await;
    let baseline = browser_private_mib(server.pid());
    let said = run(
        &alice,
        "async () => { const m = new WebAssembly.Memory({ initial: 1, maximum: 16384 }); window.m = m; for (let i = 0; i < 80; i++) { m.grow(64); new Uint8Array(m.buffer).fill(1); await new Promise(r => setTimeout(r, 100)); } return 'survived'; }",
    )
    .await;
    let answers = format!(
        "{said}\n{}",
        answers_until(&alice, "renderer_memory_mib", Duration::from_secs(15)).await
    );
    assert_caught(&answers, "was closed", &server, baseline, &bob).await;
    assert_gone(&answers, &pages.url("/page"));
    alice.close().await;
    bob.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canvases_past_the_cap_are_caught_beside_a_tenant_with_a_larger_cap() {
    let pages = fixtures();
    let (server, alice, bob) = alice_beside_bob(&pages).await;
    let baseline = browser_private_mib(server.pid());
    // 16 MiB of pixels each, drawn so the backing store is real, kept by the page.
    let said = run(
        &alice,
        "async () => { window.canvases = []; for (let i = 0; i < 25; i++) { const c = document.createElement('canvas'); c.width = 2048; c.height = 2048; const g = c.getContext('2d'); g.fillStyle = 'red'; g.fillRect(0, 0, 2048, 2048); g.getImageData(0, 0, 1, 1); window.canvases.push(c); await new Promise(r => setTimeout(r, 100)); } return 'survived'; }",
    )
    .await;
    let answers = format!(
        "{said}\n{}",
        answers_until(&alice, "renderer_memory_mib", Duration::from_secs(15)).await
    );
    assert_caught(&answers, "was closed", &server, baseline, &bob).await;
    assert_gone(&answers, &pages.url("/page"));
    alice.close().await;
    bob.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_worker_spinning_after_the_call_is_stopped() {
    let pages = fixtures();
    let (server, alice, bob) = alice_beside_bob(&pages).await;
    let started = run(
        &alice,
        "() => { window.w = new SharedWorker('/spin-shared.js'); return 'started'; }",
    )
    .await;
    assert!(started.contains("started"), "{started}");
    let answers = answers_until(&alice, "outside any call", Duration::from_secs(20)).await;
    eprintln!("alice's answers: {answers}");
    assert!(
        answers.contains("Shared worker") && answers.contains("outside any call"),
        "no note of the spinning shared worker: {answers}"
    );
    // Stopped, not only noted: the browser is idle again.
    let before = browser_cpu_seconds(server.pid());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let used = browser_cpu_seconds(server.pid()) - before;
    assert!(
        used < 1.0,
        "the browser used {used:.2} s of CPU in 3 s: {answers}"
    );
    // The page that started it is still open: only what ran outside a call was stopped.
    let listed = alice.call("list_pages", json!({})).await;
    assert!(listed.text.contains(&pages.url("/page")), "{}", listed.text);
    let listed = bob.call("list_pages", json!({})).await;
    assert!(
        listed.text.contains("/page") && !listed.text.contains("was closed"),
        "{}",
        listed.text
    );
    alice.close().await;
    bob.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dedicated_worker_spinning_after_the_call_closes_its_page() {
    let pages = fixtures();
    let (server, alice, bob) = alice_beside_bob(&pages).await;
    // It answers every measurement between its slices, so only the CPU it uses shows it.
    let started = run(
        &alice,
        "() => { window.w = new Worker(URL.createObjectURL(new Blob(['setInterval(() => { const t = Date.now(); while (Date.now() - t < 90); }, 0)']))); return 'started'; }",
    )
    .await;
    assert!(started.contains("started"), "{started}");
    let answers = answers_until(&alice, "outside any call", Duration::from_secs(20)).await;
    eprintln!("alice's answers: {answers}");
    assert!(
        answers.contains("was closed: one of its workers ran outside any call"),
        "no note of the spinning worker: {answers}"
    );
    assert_gone(&answers, &pages.url("/page"));
    let before = browser_cpu_seconds(server.pid());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let used = browser_cpu_seconds(server.pid()) - before;
    assert!(
        used < 1.0,
        "the browser used {used:.2} s of CPU in 3 s: {answers}"
    );
    let listed = bob.call("list_pages", json!({})).await;
    assert!(listed.text.contains("/page"), "{}", listed.text);
    alice.close().await;
    bob.close().await;
}
