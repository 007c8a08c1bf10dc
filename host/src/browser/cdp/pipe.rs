//! A browser launched with a DevTools pipe (`--remote-debugging-pipe`, fds 3 and 4) beside its
//! WebSocket port, as Puppeteer launches it for the reference (`pipe: true`). Two things come
//! with the pipe only: some domains (`PWA`) are offered to a client on the pipe alone, and
//! Chromium exits when the pipe closes, so a server that is killed outright never leaves its
//! browser running. chromiumoxide cannot hand the child extra descriptors, so the server
//! starts Chromium itself, passes it its ends of two anonymous pipes, connects chromiumoxide to
//! the WebSocket address Chromium prints, and runs our own thin connection (`raw`) over the
//! pipe, in CBOR mode. Anonymous pipes have no name in the file system: nothing a plugin or a
//! tenant can write to reaches them.

use super::raw::RawLink;
use super::{CdpError, timeouts};
use command_fds::{CommandFdExt, FdMapping};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

/// The descriptors Chromium reads commands from and writes replies to.
const CHILD_READS: i32 = 3;
const CHILD_WRITES: i32 = 4;

/// The flag that asks for the pipe, in the mode our side speaks: CBOR, the browser's own
/// form of every message, so it does not convert megabytes of replies to JSON first.
pub const PIPE_FLAG: &str = "--remote-debugging-pipe=cbor";

/// Browser-level commands on the pipe (`PWA.*`, offered there only), sent on the thin
/// connection that runs over it (see `raw`).
pub struct PipeLink {
    raw: Arc<RawLink>,
}

impl PipeLink {
    /// Sends one browser-level command; a protocol error is the browser's message.
    pub async fn call(&self, method: &'static str, params: Value) -> Result<Value, String> {
        let reply = async {
            let client = self.raw.client().await?;
            client
                .call(None, method, params, timeouts::CAPTURE)
                .await?
                .result()
        };
        reply.await.map_err(|error: CdpError| error.to_string())
    }
}

/// A launched Chromium, the thin connection over its pipe, and the WebSocket address it
/// printed.
pub struct PipedBrowser {
    pub child: Child,
    pub raw: Arc<RawLink>,
    pub link: PipeLink,
    pub ws_url: String,
}

/// Starts `executable` with `args` (which must ask for `--remote-debugging-port` and
/// [`PIPE_FLAG`]), the pipe on fds 3 and 4, and waits up to `timeout` for the
/// WebSocket address on its stderr. The child is killed if this fails, or when dropped.
pub async fn launch(
    executable: &Path,
    args: &[String],
    timeout: Duration,
) -> Result<PipedBrowser, String> {
    let (browser_reads, we_write) = std::io::pipe().map_err(|error| error.to_string())?;
    let (we_read, browser_writes) = std::io::pipe().map_err(|error| error.to_string())?;
    let mut command = Command::new(executable);
    command
        .args(args)
        // The key that seals named sessions is the server's, never the browser's.
        .env_remove("DEVTOOLS_MCP_SESSION_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
        .fd_mappings(vec![
            FdMapping {
                parent_fd: browser_reads.into(),
                child_fd: CHILD_READS,
            },
            FdMapping {
                parent_fd: browser_writes.into(),
                child_fd: CHILD_WRITES,
            },
        ])
        .map_err(|error| error.to_string())?;
    let mut child = command.spawn().map_err(|error| error.to_string())?;
    // The child's ends were moved into the command, which is dropped here: only the child
    // holds them, so a dead browser reads as end-of-file on our side.
    drop(command);
    let stderr = child
        .stderr
        .take()
        .ok_or("the browser's stderr was not captured")?;
    let ws_url = match tokio::time::timeout(timeout, websocket_address(stderr)).await {
        Ok(Ok(url)) => url,
        Ok(Err(error)) => return Err(error),
        Err(_) => {
            return Err(format!(
                "the browser did not print its DevTools address within {} s",
                timeout.as_secs()
            ));
        }
    };
    let to_browser = pipe::Sender::from_owned_fd(we_write.into())
        .map_err(|error| format!("cannot use the DevTools pipe: {error}"))?;
    let from_browser = pipe::Receiver::from_owned_fd(we_read.into())
        .map_err(|error| format!("cannot use the DevTools pipe: {error}"))?;
    let raw = RawLink::over_pipe(to_browser, from_browser);
    Ok(PipedBrowser {
        child,
        link: PipeLink { raw: raw.clone() },
        raw,
        ws_url,
    })
}

/// Reads stderr until `DevTools listening on ws://...`, then keeps draining it in the
/// background (a full stderr pipe would stall the browser).
async fn websocket_address(stderr: tokio::process::ChildStderr) -> Result<String, String> {
    let mut lines = BufReader::new(stderr).lines();
    let mut last = String::new();
    while let Some(line) = lines
        .next_line()
        .await
        .map_err(|error| format!("cannot read the browser's output: {error}"))?
    {
        if let Some(url) = line
            .split_once("DevTools listening on ")
            .map(|(_, url)| url.trim().to_string())
        {
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return Ok(url);
        }
        if !line.trim().is_empty() {
            last = line;
        }
    }
    Err(format!("the browser exited before it was ready: {last}"))
}
