//! One server under test: a child process we spawn ourselves, with an rmcp client on its
//! stdio.
//!
//! We own the `Child` (instead of rmcp's `TokioChildProcess`) for three reasons: its pid gives
//! the server's own peak RSS (`VmHWM`, the browser excluded); the spawn -> initialize step is
//! timed from our `spawn` call; and at the end we can kill whatever it leaves behind, including
//! a browser that puppeteer started in a process group of its own.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, Tool};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{RoleClient, ServiceExt};
use tokio::process::{Child, Command};

/// How to start one server: the program and its arguments.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Shown in the table header.
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// What one `tools/call` answered, flattened for timing and comparison.
pub struct Output {
    /// The text content items joined with `\n`, or `"<protocol error> ..."` when the server
    /// answered with a JSON-RPC error instead of a result.
    pub text: String,
    /// `isError: true`, or a JSON-RPC error.
    pub is_error: bool,
    /// The number of image content items.
    pub images: usize,
}

/// A running server with an initialized MCP session.
pub struct Server {
    client: Option<RunningService<RoleClient, ()>>,
    child: Child,
    pid: u32,
    stderr_path: PathBuf,
    timeout: Duration,
}

impl Server {
    /// Spawns the server and completes `initialize` (+ `notifications/initialized`); returns
    /// the server and the time from spawn to a usable session.
    pub async fn start(
        launch: &Launch,
        timeout: Duration,
        run: usize,
    ) -> Result<(Server, Duration), String> {
        let stderr_path = std::env::temp_dir().join(format!(
            "devtools-mcp-bench-{}-{}-{run}.stderr.log",
            std::process::id(),
            launch.name
        ));
        let stderr = std::fs::File::create(&stderr_path)
            .map_err(|e| format!("cannot create {}: {e}", stderr_path.display()))?;
        let started = Instant::now();
        let mut child = Command::new(&launch.program)
            .args(&launch.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot spawn {}: {e}", launch.program.display()))?;
        let pid = child.id().ok_or("the server exited at once")?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err("the server's stdio was not piped".to_owned());
        };
        let mut server = Server {
            client: None,
            child,
            pid,
            stderr_path,
            timeout,
        };
        match tokio::time::timeout(timeout, ().serve((stdout, stdin))).await {
            Ok(Ok(client)) => {
                let elapsed = started.elapsed();
                server.client = Some(client);
                Ok((server, elapsed))
            }
            Ok(Err(e)) => Err(server.fail(&format!("initialize failed: {e}")).await),
            Err(_) => Err(server.fail("no initialize answer in time").await),
        }
    }

    /// The server's pid, for its resources in `/proc`.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn client(&self) -> Result<&RunningService<RoleClient, ()>, String> {
        self.client
            .as_ref()
            .ok_or_else(|| "no MCP session".to_owned())
    }

    /// `tools/list`, following pagination; returns the tools and the time it took.
    pub async fn list_tools(&mut self) -> Result<(Vec<Tool>, Duration), String> {
        let started = Instant::now();
        let answer = tokio::time::timeout(self.timeout, self.client()?.list_all_tools()).await;
        match answer {
            Ok(Ok(tools)) => Ok((tools, started.elapsed())),
            Ok(Err(e)) => Err(self.fail(&format!("tools/list failed: {e}")).await),
            Err(_) => Err(self.fail("tools/list timed out").await),
        }
    }

    /// `tools/call`; returns the flattened answer and the round-trip time. A JSON-RPC error
    /// is an answer too (the unknown-argument step expects one from some servers); a timeout
    /// or a dead server is not.
    pub async fn call(
        &mut self,
        tool: &str,
        arguments: serde_json::Value,
    ) -> Result<(Output, Duration), String> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let serde_json::Value::Object(map) = arguments {
            params = params.with_arguments(map);
        }
        let started = Instant::now();
        let answer = tokio::time::timeout(self.timeout, self.client()?.call_tool(params)).await;
        let elapsed = started.elapsed();
        match answer {
            Ok(Ok(result)) => Ok((flatten(result), elapsed)),
            Ok(Err(ServiceError::McpError(e))) => {
                let output = Output {
                    text: format!("<protocol error> {}: {}", e.code.0, e.message),
                    is_error: true,
                    images: 0,
                };
                Ok((output, elapsed))
            }
            Ok(Err(e)) => Err(self.fail(&format!("tools/call {tool} failed: {e}")).await),
            Err(_) => Err(self.fail(&format!("tools/call {tool} timed out")).await),
        }
    }

    /// The server process's own peak resident set (`VmHWM` of its pid, children excluded), in
    /// bytes.
    pub fn peak_rss(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }

    /// CPU time the server process has used so far, summed over its live threads from
    /// `/proc/<pid>/task/*/schedstat` (nanoseconds, unlike the 10 ms ticks of `stat`). The
    /// browser is a separate process and is not counted; threads that already exited are lost,
    /// which the per-step differences this feeds can tolerate.
    pub fn cpu_time(&self) -> Duration {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.pid)) else {
            return Duration::ZERO;
        };
        let nanos: u64 = tasks
            .filter_map(|task| {
                let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
                stat.split_whitespace().next()?.parse::<u64>().ok()
            })
            .sum();
        Duration::from_nanos(nanos)
    }

    /// Closes the session (the server sees EOF on stdin), gives it a few seconds to exit and
    /// close its browser, then SIGKILLs the server and every descendant still alive.
    pub async fn shutdown(mut self) {
        let descendants = descendants(self.pid);
        if let Some(mut client) = self.client.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        let _ = self.child.start_kill();
        kill(&descendants);
        let _ = std::fs::remove_file(&self.stderr_path);
    }

    /// Kills the server and its descendants and returns `what` with the server's stderr tail.
    async fn fail(&mut self, what: &str) -> String {
        let descendants = descendants(self.pid);
        let _ = self.child.start_kill();
        kill(&descendants);
        let stderr = std::fs::read_to_string(&self.stderr_path).unwrap_or_default();
        let tail: String = stderr.lines().rev().take(20).collect::<Vec<_>>().join("\n");
        let tail: String = tail.lines().rev().collect::<Vec<_>>().join("\n");
        format!(
            "{what}\n  stderr kept at {}, its tail:\n{tail}",
            self.stderr_path.display()
        )
    }
}

pub fn flatten(result: CallToolResult) -> Output {
    let mut texts = Vec::new();
    let mut images = 0;
    for item in result.content {
        match item {
            ContentBlock::Text(text) => texts.push(text.text),
            ContentBlock::Image(_) => images += 1,
            _ => {}
        }
    }
    Output {
        text: texts.join("\n"),
        is_error: result.is_error.unwrap_or(false),
        images,
    }
}

/// Live processes descending from `pid`, through the ppid field of `/proc/*/stat`. Taken
/// before shutdown: once the server exits, its orphans are re-parented out of reach.
pub fn descendants(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let table: Vec<(u32, u32)> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| Some((p, parent_of(p)?)))
        .collect();
    let mut found = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        for &(child, ppid) in &table {
            if ppid == parent && !found.contains(&child) {
                found.push(child);
                frontier.push(child);
            }
        }
    }
    found
}

/// The ppid in `/proc/<pid>/stat`, read after the last `)` since `comm` may hold spaces.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    fields.next()?;
    fields.next()?.parse().ok()
}

/// SIGKILLs `pids` with procps' `kill` (std signals only its own children, and `unsafe` is
/// denied, so no `libc::kill`). Pids that already exited are skipped by `kill` itself.
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
