//! The HTTP part of the soak: `serve --http` with N tenants walking at once. Each decile every
//! tenant opens a fresh MCP session (closed properly at the decile's end) and abandons
//! another: it sends `initialize` over a raw connection and never comes back, as a client
//! that crashed would.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::{DECILES, Decile, Options, Part, Sample, Walker, line, rounds_per_decile};
use crate::fixtures::FixtureServer;
use crate::tenants::{self, HttpServer};

/// The tenants' `session_idle_secs`.
const SESSION_IDLE: &str = "session_idle_secs = 60";
/// Before each sample, connections and the runtime's idle blocking threads (kept 10 s) are
/// given this long to go, so that the sample shows what is held, not what is passing.
const QUIET: Duration = Duration::from_secs(12);

pub(super) async fn run(options: &Options<'_>, fixtures: &FixtureServer) -> Result<Part, String> {
    let dir = std::env::temp_dir().join(format!("devtools-mcp-soak-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let tokens: Vec<String> = (0..options.tenants)
        .map(|index| format!("soak-token-{index}-{}", std::process::id()))
        .collect();
    // Abandoned sessions are closed after a minute (the default is 30): within the run, so
    // that what they held is seen to come back.
    let tenants_file = tenants::write_tenants(options.server, &dir, &tokens, SESSION_IDLE).await?;
    // The walk calls without `pageId`, on each tenant's selected page.
    let mut browser_flags = options.browser_flags.clone();
    browser_flags.push("--no-page-id-routing".to_owned());
    let mut server = HttpServer::start(
        options.server,
        &browser_flags,
        &tenants_file,
        options.timeout,
    )
    .await?;
    let outcome = walk(&server, &tokens, options, fixtures).await;
    server.stop().await;
    let _removed = std::fs::remove_dir_all(&dir);
    outcome
}

async fn walk(
    server: &HttpServer,
    tokens: &[String],
    options: &Options<'_>,
    fixtures: &FixtureServer,
) -> Result<Part, String> {
    let pid = server.pid().ok_or("the HTTP server exited at once")?;
    let rounds = rounds_per_decile(options.tenant_calls);
    let mut walkers: Vec<Walker> = (0..tokens.len())
        .map(|index| Walker::new(&format!("t{index}")))
        .collect();
    let mut deciles = Vec::new();
    let mut abandoned = 0;
    // Time spent making calls, the quiet pauses before samples excluded.
    let mut wall = Duration::ZERO;
    for decile in 0..DECILES {
        let started = Instant::now();
        let firsts: Vec<usize> = walkers.iter().map(|w| w.latencies.len()).collect();
        let batches = walkers
            .iter_mut()
            .zip(tokens)
            .map(|(walker, token)| async move {
                abandon_a_session(&server.url, token)?;
                let client = server.client(token, options.timeout).await?;
                let mut outcome = Ok(());
                for _ in 0..rounds {
                    outcome = walker.round(&client, fixtures, options.timeout).await;
                    if outcome.is_err() {
                        break;
                    }
                }
                if outcome.is_ok() && !walker.is_settled() {
                    outcome = walker.round(&client, fixtures, options.timeout).await;
                }
                let _closed = client.cancel().await;
                outcome
            });
        let outcomes = futures::future::join_all(batches).await;
        wall += started.elapsed();
        for outcome in outcomes {
            outcome?;
        }
        abandoned += tokens.len();
        tokio::time::sleep(QUIET).await;
        let calls: usize = walkers.iter().map(|w| w.latencies.len()).sum();
        let sample = Sample::take(pid, calls);
        eprintln!("soak http, decile {}: {}", decile + 1, line(&sample));
        let latencies = walkers
            .iter()
            .zip(&firsts)
            .flat_map(|(walker, &first)| walker.latencies[first..].iter().copied())
            .collect();
        deciles.push(Decile { sample, latencies });
    }
    let calls: usize = walkers.iter().map(|w| w.latencies.len()).sum();
    Ok(Part {
        title: format!(
            "HTTP: {} tenants at once, {} mixed calls each, one shared Chromium",
            tokens.len(),
            calls / tokens.len().max(1)
        ),
        deciles,
        wall,
        errors: walkers.iter().map(|w| w.errors).sum(),
        quoted_errors: walkers
            .iter()
            .flat_map(|w| w.quoted_errors.iter().cloned())
            .take(5)
            .collect(),
        notes: vec![format!(
            "{} sessions opened and closed, {abandoned} opened and abandoned (never closed) \
             on the way; tenants have `{SESSION_IDLE}`, and each sample is taken {} s after \
             the decile's last call",
            tokens.len() * DECILES,
            QUIET.as_secs()
        )],
    })
}

/// `initialize` over a connection of its own, then gone: the server now holds a session that
/// no client will ever close.
fn abandon_a_session(url: &str, token: &str) -> Result<(), String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("not an http:// URL: {url}"))?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak-abandoned","version":"0"}}}"#;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream =
        TcpStream::connect(authority).map_err(|e| format!("cannot reach {authority}: {e}"))?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("cannot send initialize: {e}"))?;
    let mut head = [0u8; 512];
    let read = stream
        .read(&mut head)
        .map_err(|e| format!("no answer to initialize: {e}"))?;
    let head = String::from_utf8_lossy(&head[..read]);
    if !head.starts_with("HTTP/1.1 200") || !head.to_ascii_lowercase().contains("mcp-session-id") {
        return Err(format!(
            "initialize for an abandoned session was refused: {}",
            head.lines().next().unwrap_or_default()
        ));
    }
    Ok(())
}
