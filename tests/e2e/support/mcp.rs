//! Runs the server binary as a child process and talks MCP to it with the rmcp client.
//!
//! The harness spawns the child itself and hands rmcp its `(stdout, stdin)` pipes instead of
//! using `TokioChildProcess`: rmcp's graceful shutdown escalates to SIGTERM after 3 s and
//! SIGKILL after 3 s more, which would hide a server that ignores the end of its stdin. Owning
//! the `Child` lets `shutdown` measure exactly how long the server took to exit on its own.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use base64::Engine;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, Tool};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{RoleClient, ServiceExt};
use tokio::process::{Child, Command};
use tokio::sync::Mutex;

use super::{kill_group, kill_tree};

/// Upper bound for every await in the harness, so a hang fails the test with a message
/// instead: 60 s, or `$DEVTOOLS_MCP_E2E_TIMEOUT_SECS` (for slow machines, or to see a hang
/// fail fast).
pub fn timeout() -> Duration {
    let secs = std::env::var("DEVTOOLS_MCP_E2E_TIMEOUT_SECS").ok();
    Duration::from_secs(secs.and_then(|s| s.parse().ok()).unwrap_or(60))
}
/// How much of the server's stderr a failure message quotes.
const STDERR_TAIL_BYTES: u64 = 8 * 1024;

/// The Chromium to drive: `$CHROMIUM`, else Debian's `/usr/bin/chromium`.
pub fn chromium_path() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned())
}

/// Where the servers under test keep their state, per user: `<target>/tmp/e2e-<uid>/`, with
/// `cache/` (compiled tools, shared by all tests and runs so nothing is compiled twice) and
/// `tmp/` (the servers' private `TMPDIR`). The server refuses a cache or plugin folder inside a
/// folder plugins may write to, the temp dir included; a private `TMPDIR` beside the cache
/// keeps the tests passing from any clone location (under `/tmp` too) and with any `TMPDIR`.
fn state_dir() -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    // `/proc/self` is owned by our effective uid: a std-only way to make the name per user.
    let uid = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(0);
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("e2e-{uid}"))
}

/// The compiled-code cache shared by all tests of one user.
pub fn cache_dir() -> PathBuf {
    state_dir().join("cache")
}

/// The temp dir of every server the harness starts (created private on first use): where
/// the server writes temporary files, and one of its file roots.
pub fn server_temp_dir() -> PathBuf {
    use std::os::unix::fs::DirBuilderExt;
    let dir = state_dir().join("tmp");
    let _exists = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir);
    dir.canonicalize().unwrap_or(dir)
}

/// The environment every server process gets: its private `TMPDIR`.
pub fn server_env() -> Vec<(String, String)> {
    vec![(
        "TMPDIR".to_owned(),
        server_temp_dir().to_string_lossy().into_owned(),
    )]
}

/// The server binary as a plain command (one-shot CLI calls), with [`server_env`].
pub fn server_command() -> std::process::Command {
    let mut command = crate::support::command(env!("CARGO_BIN_EXE_devtools-mcp"));
    command.envs(server_env());
    command
}

/// The arguments every test passes: headless, throwaway profile, no sandbox (tests run as
/// root in containers), no GPU, the shared cache, and page-id routing off (1.11.0 turns it on
/// by default; a test that wants it passes `--pageIdRouting` after these, which wins, or uses
/// [`McpServer::start_routed`]).
pub fn browser_args() -> Vec<String> {
    let cache = cache_dir().to_string_lossy().into_owned();
    [
        "--no-page-id-routing",
        "--headless",
        "--isolated",
        "--executablePath",
        &chromium_path(),
        "--chromeArg=--no-sandbox",
        "--chromeArg=--disable-gpu",
        "--cache-dir",
        &cache,
    ]
    .map(str::to_owned)
    .to_vec()
}

/// What a `tools/call` returned, flattened for assertions.
#[derive(Clone, Debug, Default)]
pub struct ToolOutput {
    /// The text content items, joined with `\n`.
    pub text: String,
    pub is_error: bool,
    /// `(mime type, decoded bytes)` of each image content item.
    pub images: Vec<(String, Vec<u8>)>,
    pub structured: Option<serde_json::Value>,
    /// The URI of each `resource_link` content item.
    pub resource_links: Vec<String>,
}

impl ToolOutput {
    pub fn from_result(result: CallToolResult) -> ToolOutput {
        let mut texts = Vec::new();
        let mut images = Vec::new();
        let mut resource_links = Vec::new();
        for item in result.content {
            match item {
                ContentBlock::Text(text) => texts.push(text.text),
                ContentBlock::Image(image) => {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(image.data.as_bytes())
                        .expect("the server sent an image whose data is not valid base64");
                    images.push((image.mime_type, bytes));
                }
                ContentBlock::ResourceLink(link) => resource_links.push(link.uri),
                _ => {}
            }
        }
        ToolOutput {
            text: texts.join("\n"),
            is_error: result.is_error.unwrap_or(false),
            images,
            structured: result.structured_content,
            resource_links,
        }
    }
}

/// A running server with an initialized MCP session over its stdio.
pub struct McpServer {
    client: RunningService<RoleClient, ()>,
    child: Mutex<Child>,
    pid: u32,
    stderr: StderrLog,
    /// Set by a completed `shutdown`: what is left then is the test's to check, not ours to kill.
    shut_down: bool,
}

impl McpServer {
    /// Spawns the server with [`browser_args`] plus `extra_args`; panics if it does not come up.
    pub async fn start(extra_args: &[&str]) -> McpServer {
        let mut args = browser_args();
        args.extend(extra_args.iter().map(|a| (*a).to_owned()));
        match McpServer::start_with(args, Vec::new()).await {
            Ok(server) => server,
            Err(message) => panic!("{message}"),
        }
    }

    /// Like [`McpServer::start`] with the reference 1.11.0's default: page-id routing on.
    pub async fn start_routed(extra_args: &[&str]) -> McpServer {
        let mut args = vec!["--pageIdRouting"];
        args.extend_from_slice(extra_args);
        McpServer::start(&args).await
    }

    /// Spawns the server with exactly `args` and extra `env`; `Err` carries the reason and the
    /// server's stderr, for tests that expect startup to fail.
    pub async fn start_with(
        args: Vec<String>,
        env: Vec<(String, String)>,
    ) -> Result<McpServer, String> {
        McpServer::start_program(Path::new(env!("CARGO_BIN_EXE_devtools-mcp")), args, env).await
    }

    /// Like [`McpServer::start_with`] for any program, e.g. a wrapper script around the server.
    pub async fn start_program(
        program: &Path,
        args: Vec<String>,
        env: Vec<(String, String)>,
    ) -> Result<McpServer, String> {
        let (stderr, stderr_file) = StderrLog::create()?;
        let mut env = env;
        if !env.iter().any(|(name, _)| name == "TMPDIR") {
            env.extend(server_env());
        }
        let mut child = crate::support::tokio_command(program)
            .args(&args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr_file)
            .kill_on_drop(true)
            // Its own process group, so that Chromium processes orphaned by a crashed server
            // can still be found (by group) and killed when the test ends.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot spawn {}: {e}", program.display()))?;
        let pid = child
            .id()
            .ok_or("the server exited before its pid was read")?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err("the server's stdio was not piped".to_owned());
        };
        let problem = match tokio::time::timeout(timeout(), ().serve((stdout, stdin))).await {
            Ok(Ok(client)) => {
                return Ok(McpServer {
                    client,
                    child: Mutex::new(child),
                    pid,
                    stderr,
                    shut_down: false,
                });
            }
            Ok(Err(e)) => format!("MCP initialization failed: {e}"),
            Err(_) => format!("no MCP initialization within {:?}", timeout()),
        };
        let exit = describe_exit(&mut child).await;
        kill_tree(pid);
        kill_group(pid);
        Err(format!(
            "{problem}\n  program: {} {args:?}\n  {exit}\n{}",
            program.display(),
            stderr.render_tail()
        ))
    }

    /// The capabilities the server declared in `initialize`, as JSON.
    pub fn capabilities(&self) -> serde_json::Value {
        let declared = self
            .client
            .peer_info()
            .map(|info| info.capabilities.clone());
        serde_json::to_value(declared).unwrap_or_default()
    }

    /// `logging/setLevel`: whether the server accepted it.
    #[allow(deprecated)]
    pub async fn set_log_level(&self) -> Result<(), String> {
        let params = rmcp::model::SetLevelRequestParams::new(rmcp::model::LoggingLevel::Info);
        match tokio::time::timeout(timeout(), self.client.set_level(params)).await {
            Ok(result) => result.map_err(|error| error.to_string()),
            Err(_) => Err("logging/setLevel timed out".into()),
        }
    }

    /// All tools, following pagination.
    pub async fn list_tools(&self) -> Vec<Tool> {
        match tokio::time::timeout(timeout(), self.client.list_all_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(e)) => self.fail(&format!("tools/list failed: {e}")).await,
            Err(_) => self.fail("tools/list timed out").await,
        }
    }

    /// Calls a tool; panics on a protocol-level error. A tool's own failure is a normal
    /// result with `is_error` set.
    pub async fn call(&self, tool: &str, arguments: serde_json::Value) -> ToolOutput {
        match self.call_raw(tool, arguments).await {
            Ok(output) => output,
            Err(e) => {
                self.fail(&format!("tools/call {tool} was rejected: {e}"))
                    .await
            }
        }
    }

    /// Like [`McpServer::call`] with its own time limit, for tools slower than [`timeout`]
    /// allows (a Lighthouse audit).
    pub async fn call_within(
        &self,
        tool: &str,
        arguments: serde_json::Value,
        limit: Duration,
    ) -> ToolOutput {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let serde_json::Value::Object(map) = arguments {
            params = params.with_arguments(map);
        }
        match tokio::time::timeout(limit.max(timeout()), self.client.call_tool(params)).await {
            Ok(Ok(result)) => ToolOutput::from_result(result),
            Ok(Err(e)) => self.fail(&format!("tools/call {tool} failed: {e}")).await,
            Err(_) => self.fail(&format!("tools/call {tool} timed out")).await,
        }
    }

    /// Calls a tool; a JSON-RPC error answer (unknown tool, invalid params...) is `Err` with
    /// `"<code>: <message>"`. A timeout or a dead server still panics, so a test expecting an
    /// error cannot pass because the server crashed.
    pub async fn call_raw(
        &self,
        tool: &str,
        arguments: serde_json::Value,
    ) -> Result<ToolOutput, String> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        match arguments {
            serde_json::Value::Object(map) => params = params.with_arguments(map),
            serde_json::Value::Null => {}
            other => panic!("tool arguments must be a JSON object or null, got {other}"),
        }
        match tokio::time::timeout(timeout(), self.client.call_tool(params)).await {
            Ok(Ok(result)) => Ok(ToolOutput::from_result(result)),
            Ok(Err(ServiceError::McpError(e))) => Err(e.to_string()),
            Ok(Err(e)) => self.fail(&format!("tools/call {tool} failed: {e}")).await,
            Err(_) => self.fail(&format!("tools/call {tool} timed out")).await,
        }
    }

    /// `resources/read`: the text of the resource's first content, or the error's message.
    /// `resources/read`: the first content whole, text or blob.
    pub async fn read_resource_contents(
        &self,
        uri: &str,
    ) -> Result<rmcp::model::ResourceContents, String> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri);
        match tokio::time::timeout(timeout(), self.client.read_resource(params)).await {
            Ok(Ok(result)) => result
                .contents
                .into_iter()
                .next()
                .ok_or_else(|| "no contents".to_string()),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err("resources/read timed out".into()),
        }
    }

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

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Everything the server has written to stderr so far (its logs), e.g. to assert on a warning.
    pub fn stderr(&self) -> String {
        std::fs::read(&self.stderr.path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    }

    /// Closes the server's stdin and waits for it to exit; returns how long that took.
    /// Nothing is signalled: a server that ignores the end of stdin fails the test after
    /// [`timeout()`].
    pub async fn shutdown(self) -> Duration {
        self.shutdown_with_status().await.0
    }

    /// [`McpServer::shutdown`], also returning the exit status.
    pub async fn shutdown_with_status(mut self) -> (Duration, ExitStatus) {
        let started = Instant::now();
        // Cancels the session; rmcp then closes its transport, dropping the pipe to our stdin.
        if tokio::time::timeout(timeout(), self.client.close())
            .await
            .is_err()
        {
            self.fail::<()>("closing the MCP session timed out").await;
        }
        let waited = tokio::time::timeout(timeout(), self.child.get_mut().wait()).await;
        match waited {
            Ok(Ok(status)) => {
                self.shut_down = true;
                (started.elapsed(), status)
            }
            Ok(Err(e)) => panic!("waiting for the server to exit failed: {e}"),
            Err(_) => {
                self.fail("the server did not exit after its stdin was closed")
                    .await
            }
        }
    }

    /// Panics with a message naming what failed, whether the server is still alive, and the
    /// tail of its stderr. Generic so that it fits any `match` arm.
    async fn fail<T>(&self, what: &str) -> T {
        let exit = describe_exit(&mut *self.child.lock().await).await;
        self.stderr.reported.store(true, Ordering::Relaxed);
        panic!(
            "{what}\n  server pid {}: {exit}\n  full stderr: {}\n{}",
            self.pid,
            self.stderr.path.display(),
            self.stderr.render_tail()
        )
    }
}

impl Drop for McpServer {
    /// A test that panicked or skipped `shutdown` must not leave the server or its Chromium
    /// behind. After a completed `shutdown` nothing is killed, so that a test can still see
    /// (and fail on) processes the server leaked.
    fn drop(&mut self) {
        if self.shut_down {
            return;
        }
        if matches!(self.child.get_mut().try_wait(), Ok(None)) {
            kill_tree(self.pid);
        }
        kill_group(self.pid);
    }
}

/// Gives a dying server a moment to be reaped, then says how it ended.
async fn describe_exit(child: &mut Child) -> String {
    match tokio::time::timeout(Duration::from_secs(2), child.wait()).await {
        Ok(Ok(status)) => format!("exited with {status}"),
        Ok(Err(e)) => format!("exit status unknown: {e}"),
        Err(_) => "still running".to_owned(),
    }
}

/// The server's stderr, sent to a file so it survives the server's death and needs no reader.
/// The file is removed when the test passes and kept (with its tail printed) when it panics.
struct StderrLog {
    path: PathBuf,
    /// Set once a failure message quoted the tail, so a panic does not print it twice.
    reported: AtomicBool,
}

impl StderrLog {
    fn create() -> Result<(StderrLog, std::fs::File), String> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "devtools-mcp-e2e-{}-{}.stderr.log",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        let file = std::fs::File::create(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let log = StderrLog {
            path,
            reported: AtomicBool::new(false),
        };
        Ok((log, file))
    }

    /// The last few KiB, starting at a line boundary.
    fn tail(&self) -> String {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(mut file) = std::fs::File::open(&self.path) else {
            return String::new();
        };
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let start = len.saturating_sub(STDERR_TAIL_BYTES);
        let mut bytes = Vec::new();
        if file.seek(SeekFrom::Start(start)).is_err() || file.read_to_end(&mut bytes).is_err() {
            return String::new();
        }
        let text = String::from_utf8_lossy(&bytes);
        match (start > 0, text.find('\n')) {
            (true, Some(newline)) => text[newline + 1..].to_owned(),
            _ => text.into_owned(),
        }
    }

    fn render_tail(&self) -> String {
        format!(
            "--- server stderr, tail ---\n{}\n--- end of server stderr ---",
            self.tail().trim_end()
        )
    }
}

impl Drop for StderrLog {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_file(&self.path);
        } else if !self.reported.load(Ordering::Relaxed) {
            eprintln!(
                "server stderr kept at {}\n{}",
                self.path.display(),
                self.render_tail()
            );
        }
    }
}
