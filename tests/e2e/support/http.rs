//! Runs `devtools-mcp serve --http 127.0.0.1:0` with a tenants file of the test's making, and
//! talks to it over real HTTP: rmcp's streamable HTTP client (reqwest) per tenant, and plain
//! reqwest for what a well-behaved client never sends.

use super::mcp::{ToolOutput, browser_args, timeout};
use super::{kill_group, kill_tree};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

/// One `[[tenant]]` of the tenants file; its sandbox root is made under the server's dir.
#[derive(Clone, Debug)]
pub struct TenantSpec {
    pub name: String,
    pub token: String,
    /// More TOML lines for the entry, e.g. `max_pages = 2`.
    pub extra: String,
    /// Its sandbox root, when not the server's own folder for it (storage several servers
    /// share).
    pub root: Option<PathBuf>,
}

impl TenantSpec {
    pub fn new(name: &str, token: &str) -> TenantSpec {
        TenantSpec {
            name: name.to_owned(),
            token: token.to_owned(),
            extra: String::new(),
            root: None,
        }
    }

    /// The tenant's files live in `root`, e.g. storage shared by several instances.
    pub fn with_root(mut self, root: &Path) -> TenantSpec {
        self.root = Some(root.to_path_buf());
        self
    }

    /// A tenant without a static token: it signs in with OAuth access tokens only.
    pub fn oauth_only(name: &str) -> TenantSpec {
        TenantSpec::new(name, "")
    }

    pub fn with(mut self, line: &str) -> TenantSpec {
        self.extra.push_str(line);
        self.extra.push('\n');
        self
    }

    /// Lets the tenant's browser reach the tests' fixture servers on 127.0.0.1, which the
    /// default egress policy refuses (loopback).
    pub fn on_loopback(self) -> TenantSpec {
        self.with("egress_allow = [\"127.0.0.1/32\"]")
    }
}

/// The `/metrics` token of servers started with [`HttpServer::start`].
pub const METRICS_TOKEN: &str = "token-metrics";

/// How to start a server beyond its tenants and flags.
#[derive(Clone, Debug, Default)]
pub struct ServerSetup {
    /// TOML put before the `[[tenant]]` entries (e.g. `metrics_token_sha256 = "..."`).
    pub preamble: String,
    /// `ulimit -n` for the server process (soft and hard).
    pub open_files: Option<u64>,
    /// `ulimit -Sn` only: the soft limit, below a higher hard one.
    pub soft_open_files: Option<u64>,
    /// The browser flags instead of the test browser's (e.g. `--wsEndpoint` alone).
    pub browser: Option<Vec<String>>,
}

pub struct HttpServer {
    child: Child,
    pid: u32,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    dir: tempfile::TempDir,
    stderr: PathBuf,
    exited: bool,
    preamble: String,
}

impl HttpServer {
    /// Starts the server for `tenants` with the test browser flags plus `extra_args`.
    pub async fn start(tenants: &[TenantSpec], extra_args: &[&str]) -> HttpServer {
        let setup = ServerSetup {
            preamble: format!(
                "metrics_token_sha256 = {:?}",
                hex::encode(Sha256::digest(METRICS_TOKEN.as_bytes()))
            ),
            ..ServerSetup::default()
        };
        HttpServer::start_with(setup, tenants, extra_args).await
    }

    /// Like [`HttpServer::start`], with `head` at the top of the tenants file (e.g. an
    /// `[oauth]` section).
    pub async fn start_with_head(
        head: &str,
        tenants: &[TenantSpec],
        extra_args: &[&str],
    ) -> HttpServer {
        let setup = ServerSetup {
            preamble: format!(
                "metrics_token_sha256 = {:?}\n{head}",
                hex::encode(Sha256::digest(METRICS_TOKEN.as_bytes()))
            ),
            ..ServerSetup::default()
        };
        HttpServer::start_with(setup, tenants, extra_args).await
    }

    /// [`HttpServer::start`] with a preamble in the tenants file and process limits.
    pub async fn start_with(
        setup: ServerSetup,
        tenants: &[TenantSpec],
        extra_args: &[&str],
    ) -> HttpServer {
        let dir = tempfile::Builder::new()
            .prefix("devtools-mcp-http-")
            .tempdir()
            .expect("a temporary directory");
        let stderr = dir.path().join("server.stderr.log");
        let stderr_file = std::fs::File::create(&stderr).expect("the stderr log file");
        let tenants_path = dir.path().join("tenants.toml");
        let text = format!("{}\n{}", setup.preamble, tenants_toml(dir.path(), tenants));
        std::fs::write(&tenants_path, text).expect("the tenants file");
        let mut args = vec![
            "serve".to_owned(),
            "--http".to_owned(),
            "127.0.0.1:0".to_owned(),
            "--tenants".to_owned(),
            tenants_path.display().to_string(),
        ];
        args.extend(setup.browser.clone().unwrap_or_else(browser_args));
        args.extend(extra_args.iter().map(|arg| (*arg).to_owned()));
        let ulimit = match (setup.open_files, setup.soft_open_files) {
            (Some(limit), _) => Some(format!("ulimit -n {limit}")),
            (None, Some(soft)) => Some(format!("ulimit -Sn {soft}")),
            (None, None) => None,
        };
        let mut command = match ulimit {
            Some(ulimit) => {
                // `exec` keeps the pid: the server is the process the harness watches.
                let mut command = crate::support::tokio_command("sh");
                command
                    .arg("-c")
                    .arg(format!("{ulimit} && exec \"$0\" \"$@\""))
                    .arg(env!("CARGO_BIN_EXE_devtools-mcp"));
                command
            }
            None => crate::support::tokio_command(env!("CARGO_BIN_EXE_devtools-mcp")),
        };
        let child = command
            .args(&args)
            .envs(super::server_env())
            .env("RUST_LOG", "info,chromiumoxide=off")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr_file)
            .kill_on_drop(true)
            .process_group(0)
            .spawn()
            .expect("spawn devtools-mcp serve");
        let pid = child.id().expect("the server's pid");
        let mut server = HttpServer {
            child,
            pid,
            base: String::new(),
            dir,
            stderr,
            exited: false,
            preamble: setup.preamble.clone(),
        };
        let deadline = Instant::now() + timeout();
        loop {
            let log = server.stderr();
            // Only a whole line: the server may still be writing the last one.
            if let Some(line) = log
                .split_inclusive('\n')
                .filter(|line| line.ends_with('\n'))
                .find_map(|line| line.strip_prefix("devtools-mcp: serving MCP over HTTP at "))
            {
                server.base = line.trim().trim_end_matches("/mcp").to_owned();
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("the server exited ({status}) before listening:\n{log}");
            }
            if Instant::now() >= deadline {
                panic!("the server did not listen within {:?}:\n{log}", timeout());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `GET /metrics` with the metrics token: the status and the text.
    pub async fn metrics(&self) -> (u16, String) {
        let response = reqwest::Client::new()
            .get(format!("{}/metrics", self.base))
            .bearer_auth(METRICS_TOKEN)
            .send()
            .await
            .expect("the server answered");
        let status = response.status().as_u16();
        (status, response.text().await.unwrap_or_default())
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.base
            .rsplit(':')
            .next()
            .and_then(|port| port.parse().ok())
            .expect("the server's port")
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The tenant's sandbox root.
    pub fn root(&self, tenant: &str) -> PathBuf {
        root_of(self.dir.path(), tenant)
    }

    /// Rewrites the tenants file (the server re-reads it on SIGHUP).
    pub fn write_tenants(&self, tenants: &[TenantSpec]) {
        let text = format!(
            "{}\n{}",
            self.preamble,
            tenants_toml(self.dir.path(), tenants)
        );
        std::fs::write(self.dir.path().join("tenants.toml"), text)
            .expect("rewrite the tenants file");
    }

    /// Replaces the tenants file with `text` as it is (a broken file, for instance).
    pub fn write_tenants_text(&self, text: &str) {
        std::fs::write(self.dir.path().join("tenants.toml"), text)
            .expect("rewrite the tenants file");
    }

    /// Sends a signal (`HUP`, `TERM`...) to the server with procps' `kill`.
    pub fn signal(&self, name: &str) {
        let status = crate::support::command("kill")
            .args([format!("-{name}"), self.pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{name} {} failed", self.pid);
    }

    /// The server's log so far.
    pub fn stderr(&self) -> String {
        std::fs::read(&self.stderr)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    }

    /// Waits for the server to exit; `None` if it did not within `limit`.
    pub async fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let status = tokio::time::timeout(limit, self.child.wait())
            .await
            .ok()?
            .ok()?;
        self.exited = true;
        Some(status)
    }

    /// An MCP client of the tenant with this token (initialized over HTTP).
    pub async fn client(&self, token: &str) -> Result<HttpClient, String> {
        HttpClient::connect(&self.mcp_url(), token).await
    }

    /// Like [`HttpServer::client`], panicking with the server's log on failure.
    pub async fn connect(&self, token: &str) -> HttpClient {
        match self.client(token).await {
            Ok(client) => client,
            Err(message) => panic!("{message}\n--- server log ---\n{}", self.stderr()),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if self.exited {
            return;
        }
        if std::thread::panicking() {
            eprintln!("--- server log ---\n{}", self.stderr());
        }
        kill_tree(self.pid);
        kill_group(self.pid);
    }
}

/// Runs `serve` for `tenants` (sandbox roots under `dir`) with the test browser flags plus
/// `extra_args`, expecting it to refuse to start: what it printed.
pub async fn refused_start(dir: &Path, tenants: &[TenantSpec], extra_args: &[&str]) -> String {
    let tenants_path = dir.join("refused-tenants.toml");
    std::fs::write(&tenants_path, tenants_toml(dir, tenants)).expect("the tenants file");
    let mut command = crate::support::tokio_command(env!("CARGO_BIN_EXE_devtools-mcp"));
    command
        .args(["serve", "--http", "127.0.0.1:0", "--tenants"])
        .arg(&tenants_path)
        .args(browser_args())
        .args(extra_args)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(timeout(), command.output())
        .await
        .unwrap_or_else(|_| panic!("the server did not refuse to start: {tenants:?}"))
        .expect("run devtools-mcp serve");
    let printed = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        !output.status.success(),
        "the server must refuse to start: {tenants:?}\n{printed}"
    );
    printed
}

fn root_of(dir: &Path, tenant: &str) -> PathBuf {
    dir.join("roots").join(tenant)
}

fn tenants_toml(dir: &Path, tenants: &[TenantSpec]) -> String {
    let mut text = String::new();
    for tenant in tenants {
        let token = if tenant.token.is_empty() {
            String::new()
        } else {
            let hash = hex::encode(Sha256::digest(tenant.token.as_bytes()));
            format!("token_sha256 = {hash:?}\n")
        };
        text.push_str(&format!(
            "[[tenant]]\nname = {:?}\n{token}sandbox_root = {:?}\n{}\n",
            tenant.name,
            tenant
                .root
                .clone()
                .unwrap_or_else(|| root_of(dir, &tenant.name))
                .display()
                .to_string(),
            tenant.extra
        ));
    }
    text
}

/// One tenant's MCP client over HTTP.
pub struct HttpClient {
    client: RunningService<RoleClient, ()>,
}

impl HttpClient {
    /// An MCP client of the server at `mcp_url` with this bearer token (initialized over HTTP).
    pub async fn connect(mcp_url: &str, token: &str) -> Result<HttpClient, String> {
        let config = StreamableHttpClientTransportConfig::with_uri(mcp_url.to_owned())
            .auth_header(token)
            .max_concurrent_requests(64);
        let transport = StreamableHttpClientTransport::from_config(config);
        match tokio::time::timeout(timeout(), ().serve(transport)).await {
            Ok(Ok(client)) => Ok(HttpClient { client }),
            Ok(Err(error)) => Err(format!("MCP initialization over HTTP failed: {error}")),
            Err(_) => Err("MCP initialization over HTTP timed out".to_owned()),
        }
    }

    /// Calls a tool; a JSON-RPC error or a transport failure is `Err` with its text.
    pub async fn call_raw(
        &self,
        tool: &str,
        arguments: serde_json::Value,
    ) -> Result<ToolOutput, String> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let serde_json::Value::Object(map) = arguments {
            params = params.with_arguments(map);
        }
        match tokio::time::timeout(timeout(), self.client.call_tool(params)).await {
            Ok(Ok(result)) => Ok(ToolOutput::from_result(result)),
            Ok(Err(ServiceError::McpError(error))) => Err(error.to_string()),
            Ok(Err(error)) => Err(format!("transport: {error}")),
            Err(_) => Err(format!("tools/call {tool} timed out")),
        }
    }

    /// Calls a tool; panics unless it answered (an `isError` result is an answer).
    pub async fn call(&self, tool: &str, arguments: serde_json::Value) -> ToolOutput {
        match self.call_raw(tool, arguments).await {
            Ok(output) => output,
            Err(error) => panic!("tools/call {tool} was not answered: {error}"),
        }
    }

    /// `resources/read`: the text of the resource's first content, or the error's message.
    pub async fn read_resource(&self, uri: &str) -> Result<String, String> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        match tokio::time::timeout(timeout(), self.client.read_resource(params)).await {
            Ok(Ok(result)) => match result.contents.into_iter().next() {
                Some(rmcp::model::ResourceContents::TextResourceContents { text, .. }) => Ok(text),
                other => Err(format!("not a text resource: {other:?}")),
            },
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err("resources/read timed out".into()),
        }
    }

    /// The names of the tools this tenant is offered.
    pub async fn tool_names(&self) -> Vec<String> {
        let tools = tokio::time::timeout(timeout(), self.client.list_all_tools())
            .await
            .expect("tools/list timed out")
            .expect("tools/list failed");
        tools
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect()
    }

    pub async fn close(self) {
        let _closed = tokio::time::timeout(timeout(), self.client.cancel()).await;
    }
}
