//! Hostile clients of the HTTP server: another tenant's session id, slow and idle
//! connections, connection floods from one address, running out of file descriptors, a SIGHUP
//! that revokes a busy tenant, and `/metrics` without its token.

use crate::support::{HttpServer, ServerSetup, TenantSpec};
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A raw request to `/mcp`: the status, the session header and the body.
async fn request(
    server: &HttpServer,
    method: reqwest::Method,
    token: &str,
    session: Option<&str>,
    body: Option<&str>,
) -> (u16, Option<String>, String) {
    let mut request = reqwest::Client::new()
        .request(method, server.mcp_url())
        .bearer_auth(token)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-06-18")
        .timeout(Duration::from_secs(5));
    if let Some(session) = session {
        request = request.header("Mcp-Session-Id", session);
    }
    if let Some(body) = body {
        request = request
            .header("Content-Type", "application/json")
            .body(body.to_owned());
    }
    match request.send().await {
        Ok(response) => {
            let status = response.status().as_u16();
            let session = response
                .headers()
                .get("mcp-session-id")
                .and_then(|value| value.to_str().ok())
                .map(String::from);
            // An event stream stays open: read what came within the timeout.
            let body = tokio::time::timeout(Duration::from_secs(2), response.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            (status, session, body)
        }
        Err(error) => (0, None, error.to_string()),
    }
}

/// Opens an MCP session with raw requests; its id.
async fn open_session(server: &HttpServer, token: &str) -> Result<String, (u16, String)> {
    let (status, session, body) =
        request(server, reqwest::Method::POST, token, None, Some(INITIALIZE)).await;
    let Some(session) = session.filter(|_| status == 200) else {
        return Err((status, body));
    };
    let (status, _, _) = request(
        server,
        reqwest::Method::POST,
        token,
        Some(&session),
        Some(INITIALIZED),
    )
    .await;
    assert_eq!(status, 202, "initialized notification");
    Ok(session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_cannot_use_stream_cancel_or_delete_another_tenants_session() {
    let server = HttpServer::start(
        &[
            TenantSpec::new("alice", "token-alice"),
            TenantSpec::new("mallory", "token-mallory"),
        ],
        &[],
    )
    .await;
    let alice = open_session(&server, "token-alice")
        .await
        .expect("alice's session");
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#;
    for (method, body) in [
        (reqwest::Method::GET, None),
        (reqwest::Method::POST, Some(list)),
        (reqwest::Method::POST, Some(cancel)),
        (reqwest::Method::DELETE, None),
    ] {
        let (status, _, text) =
            request(&server, method.clone(), "token-mallory", Some(&alice), body).await;
        assert_eq!(status, 404, "mallory's {method} on alice's session: {text}");
        assert!(!text.contains("list_pages"), "{text}");
    }
    // Alice's session is untouched.
    let (status, _, text) = request(
        &server,
        reqwest::Method::POST,
        "token-alice",
        Some(&alice),
        Some(list),
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert!(text.contains("list_pages"), "{text}");
    let (status, _, _) = request(
        &server,
        reqwest::Method::DELETE,
        "token-alice",
        Some(&alice),
        None,
    )
    .await;
    assert!(
        (200..300).contains(&status),
        "alice deletes her own session: {status}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_need_their_own_token_and_are_off_without_one() {
    let server = HttpServer::start(&[TenantSpec::new("alice", "token-alice")], &[]).await;
    let client = reqwest::Client::new();
    let url = format!("{}/metrics", server.base);
    let status = |token: Option<&'static str>| {
        let mut request = client.get(&url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            request
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0)
        }
    };
    assert_eq!(status(None).await, 401);
    assert_eq!(status(Some("token-alice")).await, 401, "a tenant's token");
    assert_eq!(status(Some("wrong")).await, 401);
    let (code, text) = server.metrics().await;
    assert_eq!(code, 200);
    assert!(
        text.contains("devtools_mcp_http_unauthorized_requests_total"),
        "{text}"
    );

    let off = HttpServer::start_with(
        ServerSetup::default(),
        &[TenantSpec::new("alice", "token-alice")],
        &[],
    )
    .await;
    let response = reqwest::get(format!("{}/metrics", off.base))
        .await
        .expect("an answer");
    assert_eq!(response.status().as_u16(), 404);
    let text = response.text().await.unwrap_or_default();
    assert!(text.contains("metrics_token_sha256"), "{text}");
    assert!(!text.contains("alice"), "{text}");
}

/// Whether the server closed `stream` (a read returns 0 or fails) within `limit`.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    stream
        .set_read_timeout(Some(limit))
        .expect("a read timeout");
    let mut buffer = [0u8; 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            // An error answer (408) before closing is fine too.
            Ok(_) => continue,
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_slow_bodies_and_idle_connections_are_cut_off() {
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice")],
        &[
            "--header-read-timeout-secs",
            "2",
            "--body-read-timeout-secs",
            "2",
        ],
    )
    .await;
    let address = format!("127.0.0.1:{}", server.port());
    let started = Instant::now();
    let mut idle = TcpStream::connect(&address).expect("connect");
    let mut slow_headers = TcpStream::connect(&address).expect("connect");
    slow_headers
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .expect("part of the headers");
    let mut slow_body = TcpStream::connect(&address).expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer token-alice\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{}",
        INITIALIZE.len(),
        &INITIALIZE[..10]
    );
    slow_body
        .write_all(head.as_bytes())
        .expect("headers and a bit of body");
    let (idle_closed, headers_closed, body_closed) = tokio::task::spawn_blocking(move || {
        (
            closed_within(&mut idle, Duration::from_secs(10)),
            closed_within(&mut slow_headers, Duration::from_secs(10)),
            closed_within(&mut slow_body, Duration::from_secs(10)),
        )
    })
    .await
    .expect("the readers");
    assert!(idle_closed, "an idle connection stayed open");
    assert!(headers_closed, "a connection trickling headers stayed open");
    assert!(body_closed, "a connection withholding its body stayed open");
    assert!(started.elapsed() < Duration::from_secs(15));
    let health = reqwest::get(format!("{}/healthz", server.base)).await;
    assert!(health.is_ok_and(|r| r.status().is_success()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_cannot_hold_more_than_its_connections_and_serving_goes_on() {
    let server = HttpServer::start(
        &[TenantSpec::new("alice", "token-alice")],
        &["--max-connections-per-ip", "4"],
    )
    .await;
    let address = format!("127.0.0.1:{}", server.port());
    let held: Vec<TcpStream> = (0..4)
        .map(|_| TcpStream::connect(&address).expect("connect"))
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut fifth = TcpStream::connect(&address).expect("the kernel accepts");
    fifth
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("a timeout");
    let mut answer = String::new();
    let _read = fifth.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
    drop(held);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let health = reqwest::get(format!("{}/healthz", server.base)).await;
    assert!(
        health.is_ok_and(|r| r.status().is_success()),
        "served again"
    );
}

/// User plus system CPU time of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |index: usize| {
        fields
            .get(index)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of stat; 12 and 13 after `) state`.
    field(11) + field(12)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_out_of_file_descriptors_neither_spins_nor_floods_the_log() {
    let setup = ServerSetup {
        open_files: Some(96),
        ..ServerSetup::default()
    };
    // A cap above the descriptor limit, so accept itself fails (EMFILE).
    let server = HttpServer::start_with(
        setup,
        &[TenantSpec::new("alice", "token-alice")],
        &[
            "--max-connections",
            "4096",
            "--max-connections-per-ip",
            "4096",
        ],
    )
    .await;
    let address = format!("127.0.0.1:{}", server.port());
    let mut flood = Vec::new();
    for _ in 0..200 {
        if let Ok(stream) = TcpStream::connect(&address) {
            flood.push(stream);
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let log_before = server.stderr().len();
    let ticks_before = cpu_ticks(server.pid());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let ticks = cpu_ticks(server.pid()) - ticks_before;
    let logged = server.stderr().len() - log_before;
    // Spinning would be ~300 ticks (100 per second) and megabytes of log.
    assert!(
        ticks < 100,
        "the server used {ticks} ticks of CPU in 3 s at EMFILE"
    );
    assert!(logged < 4096, "{logged} bytes of log in 3 s at EMFILE");
    drop(flood);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let health = reqwest::get(format!("{}/healthz", server.base)).await;
        if health.is_ok_and(|r| r.status().is_success()) {
            break;
        }
        assert!(Instant::now() < deadline, "the server does not serve again");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A call that would run 50 s, started in the background: its answer and how long it took.
fn a_50_s_call(
    client: crate::support::HttpClient,
) -> tokio::task::JoinHandle<(Result<crate::support::ToolOutput, String>, Duration)> {
    tokio::spawn(async move {
        let started = Instant::now();
        let answer = client
            .call_raw(
                "evaluate_script",
                json!({ "function": "() => new Promise(resolve => setTimeout(resolve, 50000))" }),
            )
            .await;
        (answer, started.elapsed())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_a_busy_tenant_with_sighup_blocks_no_one_and_stops_its_call() {
    let busy = TenantSpec::new("busy", "token-busy").with("call_timeout_secs = 60");
    let other = TenantSpec::new("other", "token-other");
    let server = HttpServer::start(&[busy.clone(), other.clone()], &[]).await;
    let busy_client = server.connect("token-busy").await;
    let warm = busy_client.call("list_pages", json!({})).await;
    assert!(!warm.is_error, "{}", warm.text);
    let call = a_50_s_call(busy_client);
    tokio::time::sleep(Duration::from_secs(1)).await;
    server.write_tenants(&[busy.with("revoked = true"), other]);
    server.signal("HUP");
    // Accepting goes on at once while the busy tenant is closed.
    for _ in 0..5 {
        let started = Instant::now();
        let health = tokio::time::timeout(
            Duration::from_secs(2),
            reqwest::get(format!("{}/healthz", server.base)),
        )
        .await;
        assert!(
            health.is_ok_and(|r| r.is_ok_and(|r| r.status().is_success())),
            "the server stopped accepting after SIGHUP"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let other_client = tokio::time::timeout(Duration::from_secs(10), server.connect("token-other"))
        .await
        .expect("another tenant connects at once");
    let listed = other_client.call("list_pages", json!({})).await;
    assert!(!listed.is_error, "{}", listed.text);
    let (answer, elapsed) = call.await.expect("the busy call");
    assert!(
        elapsed < Duration::from_secs(20),
        "the revoked tenant's call ran on for {elapsed:?}: {answer:?}"
    );
    let (status, _, _) = request(
        &server,
        reqwest::Method::POST,
        "token-busy",
        None,
        Some(INITIALIZE),
    )
    .await;
    assert_eq!(status, 401, "the revoked token");
}

/// A reload is a revocation of the old settings (issue 45 item 9): a tenant changed by SIGHUP
/// has its call in flight stopped at once, and its next calls run under the new settings (a
/// tool it may no longer call is gone), while an unchanged tenant keeps its pages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_applies_to_a_changed_tenant_at_once_in_flight_included() {
    let pages = crate::fixtures::server();
    let alice = TenantSpec::new("alice", "token-alice")
        .on_loopback()
        .with("call_timeout_secs = 60");
    let bob = TenantSpec::new("bob", "token-bob").on_loopback();
    let server = HttpServer::start(&[alice.clone(), bob.clone()], &[]).await;
    let bob_client = server.connect("token-bob").await;
    let opened = bob_client
        .call("new_page", json!({ "url": pages.url("/") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text);
    let alice_client = server.connect("token-alice").await;
    let warm = alice_client.call("list_pages", json!({})).await;
    assert!(!warm.is_error, "{}", warm.text);
    let call = a_50_s_call(alice_client);
    tokio::time::sleep(Duration::from_secs(1)).await;
    server.write_tenants(&[alice.with("deny_tools = [\"evaluate_script\"]"), bob]);
    server.signal("HUP");
    let (answer, elapsed) = call.await.expect("alice's call");
    assert!(
        elapsed < Duration::from_secs(20),
        "alice's call ran on under her old settings for {elapsed:?}: {answer:?}"
    );
    assert!(
        answer
            .as_ref()
            .is_err_and(|message| message.contains("reload of the tenants file")),
        "{answer:?}"
    );
    let alice_again = server.connect("token-alice").await;
    let tools = alice_again.tool_names().await;
    assert!(!tools.contains(&"evaluate_script".to_string()), "{tools:?}");
    assert!(tools.contains(&"list_pages".to_string()), "{tools:?}");
    let refused = alice_again
        .call_raw("evaluate_script", json!({ "function": "() => 1" }))
        .await;
    assert!(
        !matches!(&refused, Ok(output) if !output.is_error),
        "a denied tool ran: {refused:?}"
    );
    let listed = bob_client.call("list_pages", json!({})).await;
    assert!(
        listed.text.contains(&pages.url("/")),
        "bob lost his page: {}",
        listed.text
    );
}

/// Idle connections that never authenticate must not lock tenants out (finding 17): the soft
/// open-files limit is raised to the hard one at start, and at the connection cap the oldest
/// connection that never authenticated is closed to admit the next, long before the idle
/// timeout would have cut it. A tenant's calls and `/healthz` are answered meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_unauthenticated_connections_never_lock_a_tenant_out() {
    let setup = ServerSetup {
        soft_open_files: Some(256),
        ..ServerSetup::default()
    };
    let server = HttpServer::start_with(
        setup,
        &[TenantSpec::new("alice", "token-alice")],
        &[
            "--max-connections",
            "16",
            "--header-read-timeout-secs",
            "300",
        ],
    )
    .await;
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.pid()))
        .expect("the server's limits");
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .expect("an open-files line");
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        fields[3], fields[4],
        "the soft limit is the hard one: {line}"
    );
    assert_ne!(fields[3], "256", "the soft limit was raised: {line}");

    let address = format!("127.0.0.1:{}", server.port());
    let idle: Vec<TcpStream> = (0..16)
        .filter_map(|_| TcpStream::connect(&address).ok())
        .collect();
    assert_eq!(idle.len(), 16);
    tokio::time::sleep(Duration::from_millis(500)).await;

    let started = Instant::now();
    let health = tokio::time::timeout(
        Duration::from_secs(10),
        reqwest::get(format!("{}/healthz", server.base)),
    )
    .await
    .expect("/healthz answers at the cap")
    .expect("a response");
    assert!(health.status().is_success(), "{}", health.status());
    let tenant = async {
        let client = server.connect("token-alice").await;
        client.call("list_pages", json!({})).await
    };
    let answer = tokio::time::timeout(Duration::from_secs(60), tenant)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "the tenant waited {:?} behind idle connections",
                started.elapsed()
            )
        });
    assert!(!answer.is_error, "{}", answer.text);
    // The oldest idle connections were the ones closed.
    let mut closed = 0;
    for mut stream in idle {
        let _timeout = stream.set_read_timeout(Some(Duration::from_millis(200)));
        let mut byte = [0u8; 1];
        if matches!(stream.read(&mut byte), Ok(0)) {
            closed += 1;
        }
    }
    assert!(closed >= 2, "{closed} idle connections were closed");
}
