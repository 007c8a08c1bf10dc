//! A browser launched with a DevTools pipe (`--remote-debugging-pipe`, fds 3 and 4) beside its
//! WebSocket port, as Puppeteer launches it for the reference (`pipe: true`). Two things come
//! with the pipe only: some domains (`PWA`) are offered to a client on the pipe alone, and
//! Chromium exits when the pipe closes, so a server that is killed outright never leaves its
//! browser running. chromiumoxide cannot hand the child extra descriptors, so the server
//! starts Chromium itself, passes it its ends of two anonymous pipes, connects chromiumoxide to
//! the WebSocket address Chromium prints, and keeps the pipe. Anonymous pipes have no name in
//! the file system: nothing a plugin or a tenant can write to reaches them.

use command_fds::{CommandFdExt, FdMapping};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};
use tokio::sync::Mutex;

/// The descriptors Chromium reads commands from and writes replies to.
const CHILD_READS: i32 = 3;
const CHILD_WRITES: i32 = 4;
/// Replies on the pipe are read up to this size (a `PWA.*` reply is tiny; this bounds a
/// misbehaving browser).
const MAX_MESSAGE: usize = 8 << 20;
/// One command's bound.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// Our end of the pipe: commands go out NUL-terminated, replies come back the same way.
pub struct PipeLink {
    io: Mutex<PipeIo>,
}

struct PipeIo {
    to_browser: pipe::Sender,
    from_browser: BufReader<pipe::Receiver>,
    next_id: u64,
}

impl PipeLink {
    /// Sends one browser-level command and reads until its reply; events the browser sends
    /// on the pipe are skipped (nothing subscribes to any). A protocol error is the browser's
    /// message.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        let mut io = self.io.lock().await;
        let exchange = async {
            io.next_id += 1;
            let id = io.next_id;
            let mut message = json!({ "id": id, "method": method, "params": params }).to_string();
            message.push('\0');
            io.to_browser
                .write_all(message.as_bytes())
                .await
                .map_err(|error| format!("The browser's DevTools pipe is closed: {error}"))?;
            loop {
                let mut frame = Vec::new();
                let read = (&mut io.from_browser)
                    .take(MAX_MESSAGE as u64)
                    .read_until(0, &mut frame)
                    .await
                    .map_err(|error| format!("The browser's DevTools pipe failed: {error}"))?;
                if read == 0 {
                    return Err("The browser closed its DevTools pipe.".to_string());
                }
                if frame.last() != Some(&0) {
                    return Err(
                        "The browser sent an oversized message on its DevTools pipe.".into(),
                    );
                }
                frame.pop();
                let Ok(reply) = serde_json::from_slice::<Value>(&frame) else {
                    continue;
                };
                if reply["id"] != id {
                    continue;
                }
                if let Some(error) = reply.get("error") {
                    return Err(error["message"]
                        .as_str()
                        .unwrap_or("Protocol error")
                        .to_string());
                }
                return Ok(reply["result"].clone());
            }
        };
        match tokio::time::timeout(COMMAND_TIMEOUT, exchange).await {
            Ok(result) => result,
            Err(_) => Err(format!(
                "Timeout running {method}: the browser did not answer on its DevTools pipe within {} s.",
                COMMAND_TIMEOUT.as_secs()
            )),
        }
    }
}

/// A launched Chromium with its pipe and the WebSocket address it printed.
pub struct PipedBrowser {
    pub child: Child,
    pub link: PipeLink,
    pub ws_url: String,
}

/// Starts `executable` with `args` (which must ask for `--remote-debugging-port` and
/// `--remote-debugging-pipe`), the pipe on fds 3 and 4, and waits up to `timeout` for the
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
    Ok(PipedBrowser {
        child,
        link: PipeLink {
            io: Mutex::new(PipeIo {
                to_browser,
                from_browser: BufReader::new(from_browser),
                next_id: 0,
            }),
        },
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
