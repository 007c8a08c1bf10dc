//! The servers a capacity step runs, each deployed the way its users run several agents:
//! devtools-mcp as one `serve` process with a tenant per agent (one shared Chromium, a
//! browser context each) and as one stdio process per agent; chrome-devtools-mcp as one stdio
//! process per agent (a browser each); Playwright MCP as one HTTP server with a client per
//! agent (`--isolated`: one browser, a context per client).

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::agent::Client;
use crate::dialect::Dialect;
use crate::server::{Launch, Server, descendants};
use crate::tenants::{HttpServer, write_tenants};

/// How a target serves several agents.
#[derive(Clone, Debug)]
pub enum Deployment {
    /// `devtools-mcp serve --http` with one tenant per agent; `program` is devtools-mcp and
    /// `args` the browser flags.
    Tenants,
    /// One stdio process per agent.
    ProcessPerAgent,
    /// One HTTP server (`--port 0`), one MCP session per agent, no authentication.
    PlaywrightHttp,
}

#[derive(Clone, Debug)]
pub struct Target {
    pub launch: Launch,
    pub dialect: Dialect,
    pub deployment: Deployment,
}

impl Target {
    /// The row label: the server and how it was deployed.
    pub fn label(&self) -> String {
        let how = match self.deployment {
            Deployment::Tenants => "serve, a tenant per agent",
            Deployment::ProcessPerAgent => "stdio, a process per agent",
            Deployment::PlaywrightHttp => "HTTP, a client per agent",
        };
        format!("{} ({how})", self.launch.name)
    }

    /// Starts what `agents` agents need and connects each one.
    pub async fn start(&self, agents: usize, timeout: Duration) -> Result<Running, String> {
        match self.deployment {
            Deployment::Tenants => self.start_tenants(agents, timeout).await,
            Deployment::ProcessPerAgent => self.start_processes(agents, timeout).await,
            Deployment::PlaywrightHttp => self.start_playwright(agents, timeout).await,
        }
    }

    async fn start_tenants(&self, agents: usize, timeout: Duration) -> Result<Running, String> {
        let dir = tempfile::Builder::new()
            .prefix("devtools-mcp-bench-capacity-")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary folder: {e}"))?;
        let tokens: Vec<String> = (0..agents)
            .map(|index| format!("capacity-token-{index}-{}", std::process::id()))
            .collect();
        let file = write_tenants(&self.launch.program, dir.path(), &tokens, "").await?;
        let server =
            HttpServer::start(&self.launch.program, &self.launch.args, &file, timeout).await?;
        let pid = server.pid().ok_or("the serve process exited at once")?;
        let mut clients = Vec::new();
        for token in &tokens {
            clients.push(Client::Http(server.client(token, timeout).await?));
        }
        Ok(Running {
            clients,
            pids: vec![pid],
            holder: Holder::Serve(server, dir),
        })
    }

    async fn start_processes(&self, agents: usize, timeout: Duration) -> Result<Running, String> {
        let starts = (0..agents).map(|index| Server::start(&self.launch, timeout, index));
        let mut clients = Vec::new();
        let mut failure = None;
        for started in futures::future::join_all(starts).await {
            match started {
                Ok((server, _)) => clients.push(Client::Stdio(Box::new(server))),
                Err(error) => failure = Some(error),
            }
        }
        if let Some(error) = failure {
            for client in clients {
                client.close().await;
            }
            return Err(error);
        }
        let pids = clients
            .iter()
            .filter_map(|client| match client {
                Client::Stdio(server) => Some(server.pid()),
                Client::Http(_) => None,
            })
            .collect();
        Ok(Running {
            clients,
            pids,
            holder: Holder::Nothing,
        })
    }

    async fn start_playwright(&self, agents: usize, timeout: Duration) -> Result<Running, String> {
        let mut child = Command::new(&self.launch.program)
            .args(&self.launch.args)
            .args(["--port", "0", "--host", "127.0.0.1"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.launch.program.display()))?;
        let pid = child.id().ok_or("Playwright MCP exited at once")?;
        let stderr = child.stderr.take().ok_or("its stderr was not piped")?;
        let mut lines = BufReader::new(stderr).lines();
        // It prints `Listening on http://localhost:PORT` and accepts only that Host header.
        let base = tokio::time::timeout(timeout, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.trim().strip_prefix("Listening on ") {
                    return Some(url.trim().to_owned());
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
        .ok_or("Playwright MCP did not print the address it listens on")?;
        tokio::spawn(async move { while let Ok(Some(_line)) = lines.next_line().await {} });
        let url = format!("{base}/mcp");
        let mut clients = Vec::new();
        for _ in 0..agents {
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
            let transport = StreamableHttpClientTransport::from_config(config);
            match tokio::time::timeout(timeout, ().serve(transport)).await {
                Ok(Ok(client)) => clients.push(Client::Http(client)),
                Ok(Err(error)) => return Err(format!("Playwright MCP over HTTP: {error}")),
                Err(_) => return Err("Playwright MCP over HTTP did not initialize".to_owned()),
            }
        }
        Ok(Running {
            clients,
            pids: vec![pid],
            holder: Holder::Playwright(child, pid),
        })
    }
}

/// What a step keeps alive besides the agents' clients.
enum Holder {
    Nothing,
    Serve(HttpServer, tempfile::TempDir),
    Playwright(Child, u32),
}

/// The started target: one client per agent and the server processes to measure.
pub struct Running {
    pub clients: Vec<Client>,
    pub pids: Vec<u32>,
    holder: Holder,
}

impl Running {
    /// Stops the shared server, if any, and every process it left (the agents' own servers
    /// are stopped by closing their clients).
    pub async fn stop(self) {
        match self.holder {
            Holder::Nothing => {}
            Holder::Serve(mut server, dir) => {
                let left = server.pid().map(descendants).unwrap_or_default();
                server.stop().await;
                kill(&left);
                drop(dir);
            }
            Holder::Playwright(mut child, pid) => {
                let left = descendants(pid);
                let _killed = child.kill().await;
                kill(&left);
            }
        }
    }
}

fn kill(pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--"])
        .args(pids.iter().map(u32::to_string))
        .stderr(Stdio::null())
        .status();
}

/// The targets `--capacity-targets` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    /// devtools-mcp `serve`, a tenant per agent.
    Serve,
    /// devtools-mcp over stdio, a process per agent.
    Stdio,
    /// chrome-devtools-mcp over stdio, a process per agent.
    Reference,
    /// Playwright MCP over HTTP, a client per agent.
    Playwright,
}

/// The targets to run, from what is installed and chosen: `ours` is the devtools-mcp binary
/// and `browser` its browser flags; the peers' launches come from the main bench's discovery.
pub fn all(
    which: &[Which],
    ours: PathBuf,
    browser: Vec<String>,
    reference: Option<Launch>,
    playwright: Option<Launch>,
    serve_args: &[String],
) -> Vec<Target> {
    // The loop calls without a `pageId`, as the main bench does.
    let mut browser = browser;
    browser.push("--no-page-id-routing".to_owned());
    // `--capacity-serve-arg`s show in the serve target's name.
    let serve_name = match serve_args {
        [] => "devtools-mcp".to_owned(),
        args => format!("devtools-mcp {}", args.join(" ")),
    };
    let mut targets = vec![
        Target {
            launch: Launch {
                name: serve_name,
                program: ours.clone(),
                args: browser.iter().chain(serve_args).cloned().collect(),
            },
            dialect: Dialect::DevTools,
            deployment: Deployment::Tenants,
        },
        Target {
            launch: Launch {
                name: "devtools-mcp".to_owned(),
                program: ours,
                args: browser,
            },
            dialect: Dialect::DevTools,
            deployment: Deployment::ProcessPerAgent,
        },
    ];
    targets.retain(|target| match target.deployment {
        Deployment::Tenants => which.contains(&Which::Serve),
        _ => which.contains(&Which::Stdio),
    });
    if let Some(reference) = reference.filter(|_| which.contains(&Which::Reference)) {
        targets.push(Target {
            launch: reference,
            dialect: Dialect::DevTools,
            deployment: Deployment::ProcessPerAgent,
        });
    }
    if let Some(playwright) = playwright.filter(|_| which.contains(&Which::Playwright)) {
        targets.push(Target {
            launch: playwright,
            dialect: Dialect::Playwright,
            deployment: Deployment::PlaywrightHttp,
        });
    }
    targets
}
