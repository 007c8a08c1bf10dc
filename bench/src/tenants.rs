//! `--tenants N`: the multi-tenant scenario. One `devtools-mcp serve --http` on 127.0.0.1
//! with N tenants sharing its Chromium (a browser context each); every tenant fires all of
//! its calls at once over streamable HTTP. It is measured with 1 tenant, then with N, so the
//! aggregate throughput of N tenants (who run in parallel) can be set against one tenant
//! (whose calls are serialized, in arrival order, by its lock).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

use crate::fixtures::FixtureServer;

/// What each call does, on the small form page.
const WORKLOADS: [(&str, &str); 2] = [
    (
        "evaluate_script",
        "() => document.title + ' ' + location.pathname",
    ),
    ("take_snapshot", ""),
];

pub struct Options<'a> {
    pub server: &'a Path,
    pub browser_flags: Vec<String>,
    pub tenants: usize,
    pub calls: usize,
    pub runs: u32,
    pub timeout: Duration,
}

struct Measure {
    tenants: usize,
    wall: Duration,
    latencies: Vec<Duration>,
}

/// Runs the scenario and returns its markdown report.
pub async fn bench(options: &Options<'_>, fixtures: &FixtureServer) -> Result<String, String> {
    let dir =
        std::env::temp_dir().join(format!("devtools-mcp-bench-tenants-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let tokens: Vec<String> = (0..options.tenants)
        .map(|index| format!("bench-token-{index}-{}", std::process::id()))
        .collect();
    let tenants_file = write_tenants(options.server, &dir, &tokens, "").await?;
    let mut server = HttpServer::start(
        options.server,
        &options.browser_flags,
        &tenants_file,
        options.timeout,
    )
    .await?;
    let mut out = format!(
        "Multi-tenant scenario: `devtools-mcp serve --http` on 127.0.0.1, one shared Chromium \
         (a browser context per tenant), each tenant firing {} calls at once over streamable \
         HTTP; median of {} runs (wall time of the whole batch).\n\n\
         | call | tenants | calls | wall time | calls/s | vs 1 tenant | call latency p50 / p95 |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
        options.calls, options.runs
    );
    let result = async {
        for (tool, function) in WORKLOADS {
            let mut single = None;
            for count in [1, options.tenants] {
                let mut measures = Vec::new();
                for _ in 0..options.runs {
                    let measure =
                        run_once(&server, &tokens[..count], tool, function, options, fixtures)
                            .await?;
                    eprintln!(
                        "{tool} x {count} tenants: {} calls in {:.2} s",
                        count * options.calls,
                        measure.wall.as_secs_f64()
                    );
                    measures.push(measure);
                }
                measures.sort_by_key(|measure| measure.wall);
                let median = &measures[measures.len() / 2];
                let rate = (median.tenants * options.calls) as f64 / median.wall.as_secs_f64();
                let baseline = *single.get_or_insert(rate);
                let mut latencies = median.latencies.clone();
                latencies.sort();
                out.push_str(&format!(
                    "| `{tool}` | {} | {} | {:.2} s | {rate:.1} | {:.2}x | {} / {} ms |\n",
                    median.tenants,
                    median.tenants * options.calls,
                    median.wall.as_secs_f64(),
                    rate / baseline,
                    percentile(&latencies, 50).as_millis(),
                    percentile(&latencies, 95).as_millis(),
                ));
            }
        }
        Ok::<(), String>(())
    }
    .await;
    server.stop().await;
    let _removed = std::fs::remove_dir_all(&dir);
    result.map(|()| out)
}

fn percentile(sorted: &[Duration], percent: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[(sorted.len() - 1) * percent / 100]
}

/// One batch: every tenant connects and opens the page (not timed), then all calls at once.
async fn run_once(
    server: &HttpServer,
    tokens: &[String],
    tool: &str,
    function: &str,
    options: &Options<'_>,
    fixtures: &FixtureServer,
) -> Result<Measure, String> {
    let mut clients = Vec::new();
    for token in tokens {
        let client = server.client(token, options.timeout).await?;
        call(
            &client,
            "navigate_page",
            json!({ "url": fixtures.url("/small.html") }),
            options.timeout,
        )
        .await?;
        clients.push(client);
    }
    let arguments = match tool {
        "evaluate_script" => json!({ "function": function }),
        _ => json!({}),
    };
    let started = Instant::now();
    let batches = clients.iter().map(|client| {
        let arguments = arguments.clone();
        async move {
            let calls = (0..options.calls).map(|_| {
                let arguments = arguments.clone();
                async move {
                    let sent = Instant::now();
                    call(client, tool, arguments, options.timeout)
                        .await
                        .map(|()| sent.elapsed())
                }
            });
            futures::future::join_all(calls).await
        }
    });
    let results = futures::future::join_all(batches).await;
    let wall = started.elapsed();
    let mut latencies = Vec::new();
    for batch in results {
        for latency in batch {
            latencies.push(latency?);
        }
    }
    for client in clients {
        let _closed = client.cancel().await;
    }
    Ok(Measure {
        tenants: tokens.len(),
        wall,
        latencies,
    })
}

async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    arguments: serde_json::Value,
    timeout: Duration,
) -> Result<(), String> {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let serde_json::Value::Object(map) = arguments {
        params = params.with_arguments(map);
    }
    match tokio::time::timeout(timeout, client.call_tool(params)).await {
        Ok(Ok(result)) if result.is_error != Some(true) => Ok(()),
        Ok(Ok(result)) => Err(format!(
            "{tool} answered with an error: {:?}",
            result.content
        )),
        Ok(Err(error)) => Err(format!("{tool} failed: {error}")),
        Err(_) => Err(format!("{tool} timed out")),
    }
}

/// The tenants file, its hashes made by the server's own `tenant hash-token`. Each tenant may
/// reach the fixture server on 127.0.0.1 through its egress proxy (loopback is refused by
/// default).
pub async fn write_tenants(
    server: &Path,
    dir: &Path,
    tokens: &[String],
    extra: &str,
) -> Result<PathBuf, String> {
    let mut text = String::new();
    for (index, token) in tokens.iter().enumerate() {
        let mut child = Command::new(server)
            .args(["tenant", "hash-token"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {} tenant hash-token: {e}", server.display()))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(token.as_bytes())
                .await
                .map_err(|e| format!("cannot write the token: {e}"))?;
        }
        let output = child
            .wait_with_output()
            .await
            .map_err(|e| format!("tenant hash-token failed: {e}"))?;
        let hash = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        let root = dir.join(format!("root-{index}"));
        text.push_str(&format!(
            "[[tenant]]\nname = \"t{index}\"\ntoken_sha256 = {hash:?}\nsandbox_root = {:?}\nmax_sessions = 1000\negress_allow = [\"127.0.0.1/32\"]\n{extra}\n",
            root.display().to_string()
        ));
    }
    let path = dir.join("tenants.toml");
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    /// `server serve --http 127.0.0.1:0 --tenants FILE FLAGS...`, once it listens (within
    /// `timeout`).
    pub async fn start(
        server: &Path,
        flags: &[String],
        tenants: &Path,
        timeout: Duration,
    ) -> Result<HttpServer, String> {
        let mut child = Command::new(server)
            .args(["serve", "--http", "127.0.0.1:0", "--tenants"])
            .arg(tenants)
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", server.display()))?;
        let stderr = child
            .stderr
            .take()
            .ok_or("the server's stderr was not piped")?;
        let mut lines = BufReader::new(stderr).lines();
        let url = tokio::time::timeout(timeout, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.strip_prefix("devtools-mcp: serving MCP over HTTP at ") {
                    return Some(url.trim().to_owned());
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
        .ok_or("the server did not start listening")?;
        // Keep draining its log so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_line)) = lines.next_line().await {} });
        Ok(HttpServer { child, url })
    }

    pub async fn client(
        &self,
        token: &str,
        timeout: Duration,
    ) -> Result<RunningService<RoleClient, ()>, String> {
        let config = StreamableHttpClientTransportConfig::with_uri(self.url.as_str())
            .auth_header(token)
            .max_concurrent_requests(1024);
        let transport = StreamableHttpClientTransport::from_config(config);
        match tokio::time::timeout(timeout, ().serve(transport)).await {
            Ok(Ok(client)) => Ok(client),
            Ok(Err(error)) => Err(format!("MCP over HTTP failed to initialize: {error}")),
            Err(_) => Err("MCP over HTTP did not initialize in time".to_owned()),
        }
    }

    /// The server's pid, for its resources in `/proc`.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// SIGTERM (a graceful stop that closes the browser), then a kill if it lingers.
    pub async fn stop(&mut self) {
        if let Some(pid) = self.child.id() {
            let _signalled = std::process::Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
        }
        if tokio::time::timeout(Duration::from_secs(15), self.child.wait())
            .await
            .is_err()
        {
            let _killed = self.child.kill().await;
        }
    }
}
