//! A live connection to Chromium: launched with a DevTools pipe, or connected to a running
//! browser (with `--wsHeaders` through a relay), watched so its death is known at once.

use super::launch::discovery::{Channel, auto_connect_endpoint, endpoint_dir, find_browser};
use super::launch::{browser_args, default_profile_dir, profile_lock};
use super::{pipe, raw, url_guard, ws_headers};
use crate::browser::{BrowserError, BrowserOptions};
use chromiumoxide::Browser;
use futures::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A live connection. Dropping it kills a browser we launched.
pub struct BrowserConn {
    pub browser: Browser,
    /// Our own thin connection to the same browser, for large replies (see `cdp::raw`).
    pub raw: Arc<raw::RawLink>,
    alive: Arc<AtomicBool>,
    pub launched: bool,
    /// The DevTools pipe of a browser this server launched.
    pub pipe: Option<Arc<pipe::PipeLink>>,
    /// The process of a browser this server launched (attached browsers have none here).
    own_process: Option<OwnProcess>,
    /// Deleted (with the profile) when the browser is closed: `--isolated`.
    _temporary_profile: Option<tempfile::TempDir>,
    /// `--blockedUrlPattern`/`--allowedUrlPattern` enforced on every target.
    url_guard: Option<url_guard::UrlGuard>,
}

/// The Chromium process of a launched browser, watched by a task: its exit marks the
/// connection dead at once (not when the WebSocket notices), and dropping this (the
/// connection gone without a shutdown) kills it.
struct OwnProcess {
    kill: tokio::sync::oneshot::Sender<()>,
    exited: tokio::task::JoinHandle<()>,
    /// Its pid, to see a death the watching task has not been scheduled to notice yet.
    pid: Option<u32>,
}

impl OwnProcess {
    fn watch(mut child: tokio::process::Child, alive: Arc<AtomicBool>) -> OwnProcess {
        let (kill, killed) = tokio::sync::oneshot::channel::<()>();
        let pid = child.id();
        let exited = tokio::spawn(async move {
            tokio::select! {
                _ = child.wait() => {}
                // A kill request, or the sender dropped with the connection.
                _ = killed => {
                    let _killed = child.kill().await;
                }
            }
            alive.store(false, Ordering::SeqCst);
        });
        OwnProcess { kill, exited, pid }
    }

    /// False once the process died, even before the watching task ran: a dead process is a
    /// zombie (or gone) at once, while the task waits for a busy runtime to poll it.
    fn running(&self) -> bool {
        let Some(pid) = self.pid else {
            return false;
        };
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // The state follows the command name, which is in parentheses.
            Ok(stat) => stat
                .rsplit_once(") ")
                .is_none_or(|(_, rest)| !rest.starts_with(['Z', 'X'])),
            // No /proc (not Linux): the watching task is the only witness.
            Err(_) if !std::path::Path::new("/proc/self").exists() => true,
            Err(_) => false,
        }
    }
}

impl BrowserConn {
    /// Launches or connects as the options say; with URL patterns, only once every target of
    /// the browser is restricted by them (see `url_guard`).
    pub async fn open(options: &BrowserOptions) -> Result<BrowserConn, BrowserError> {
        let mut connection = Self::open_unguarded(options).await?;
        if let Some(patterns) = &options.url_patterns {
            let endpoint = connection.browser.websocket_address().clone();
            let guard =
                url_guard::UrlGuard::start(&endpoint, patterns.clone(), connection.alive.clone())
                    .await
                    .map_err(|reason| BrowserError::UrlPatterns {
                        flag: patterns.restriction.flag(),
                        reason,
                    })?;
            connection.url_guard = Some(guard);
        }
        Ok(connection)
    }

    /// Whether a target was open at a URL the patterns refuse when the server connected:
    /// 1.11.0 leaves such pages alone, and out of its list.
    pub fn hides_target(&self, target_id: &str) -> bool {
        self.url_guard
            .as_ref()
            .is_some_and(|guard| guard.hides(target_id))
    }

    async fn open_unguarded(options: &BrowserOptions) -> Result<BrowserConn, BrowserError> {
        if let Some(endpoint) = &options.ws_endpoint
            && !options.ws_headers.is_empty()
        {
            let relayed = ws_headers::relay(endpoint, &options.ws_headers)
                .await
                .map_err(|reason| BrowserError::Connect {
                    url: endpoint.clone(),
                    reason,
                })?;
            return Self::connect(&relayed).await;
        }
        if let Some(url) = options
            .ws_endpoint
            .as_ref()
            .or(options.browser_url.as_ref())
        {
            return Self::connect(url).await;
        }
        if options.auto_connect {
            let channel = options.channel.as_deref().and_then(Channel::parse);
            let endpoint = auto_connect_endpoint(options.user_data_dir.as_deref(), channel)?;
            return Self::connect(&endpoint).await.map_err(|error| match error {
                BrowserError::Connect { .. } => BrowserError::AutoConnect(endpoint_dir(
                    options.user_data_dir.as_deref(),
                    channel,
                )),
                other => other,
            });
        }
        Self::launch(options).await
    }

    async fn connect(url: &str) -> Result<BrowserConn, BrowserError> {
        protect_debugging_endpoint(url);
        let (browser, handler) =
            Browser::connect(url.to_string())
                .await
                .map_err(|error| BrowserError::Connect {
                    url: url.to_string(),
                    reason: error.to_string(),
                })?;
        Ok(Self::with_handler(browser, handler, false, None))
    }

    async fn launch(options: &BrowserOptions) -> Result<BrowserConn, BrowserError> {
        let channel = options.channel.as_deref().and_then(Channel::parse);
        let executable = find_browser(options.executable_path.as_deref(), channel)?;
        let (profile_dir, temporary) = match (&options.user_data_dir, options.isolated) {
            (Some(dir), _) => (dir.clone(), None),
            (None, true) => {
                let temp = tempfile::Builder::new()
                    .prefix("devtools-mcp-profile-")
                    .tempdir()
                    .map_err(|error| BrowserError::Profile {
                        dir: std::env::temp_dir().display().to_string(),
                        reason: error.to_string(),
                    })?;
                (temp.path().to_path_buf(), Some(temp))
            }
            (None, false) => (default_profile_dir(), None),
        };
        std::fs::create_dir_all(&profile_dir).map_err(|error| BrowserError::Profile {
            dir: profile_dir.display().to_string(),
            reason: error.to_string(),
        })?;
        if temporary.is_none() && profile_lock::in_use(&profile_dir) {
            return Err(BrowserError::ProfileInUse(
                profile_dir.display().to_string(),
            ));
        }
        // Started by us with a DevTools pipe beside the WebSocket (see `pipe`): the `PWA`
        // domain is offered on the pipe only, and Chromium exits when the pipe closes, so a
        // server killed outright never leaves its browser running.
        Self::launch_with_pipe(options, &executable, &profile_dir, temporary).await
    }

    fn with_handler(
        browser: Browser,
        mut handler: chromiumoxide::Handler,
        launched: bool,
        temporary_profile: Option<tempfile::TempDir>,
    ) -> BrowserConn {
        let alive = Arc::new(AtomicBool::new(true));
        let flag = alive.clone();
        tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                if let Err(error) = event {
                    tracing::debug!(%error, "browser connection event error");
                    if matches!(
                        error,
                        chromiumoxide::error::CdpError::Ws(_)
                            | chromiumoxide::error::CdpError::ChannelSendError(_)
                    ) {
                        break;
                    }
                }
            }
            flag.store(false, Ordering::SeqCst);
            tracing::info!("browser connection closed");
        });
        let raw = raw::RawLink::new(browser.websocket_address().clone());
        BrowserConn {
            browser,
            raw,
            alive,
            launched,
            pipe: None,
            own_process: None,
            _temporary_profile: temporary_profile,
            url_guard: None,
        }
    }

    /// Starts Chromium with the flags chromiumoxide's own launch passes (Puppeteer's), the
    /// reference's and the user's, plus the DevTools pipe, and connects to it.
    async fn launch_with_pipe(
        options: &BrowserOptions,
        executable: &std::path::Path,
        profile_dir: &std::path::Path,
        temporary: Option<tempfile::TempDir>,
    ) -> Result<BrowserConn, BrowserError> {
        let failed = |reason: String| BrowserError::Launch {
            executable: executable.display().to_string(),
            reason,
        };
        let args = browser_args(options, profile_dir);
        let piped = pipe::launch(executable, &args, Duration::from_secs(30))
            .await
            .map_err(failed)?;
        protect_debugging_endpoint(&piped.ws_url);
        let (browser, handler) = Browser::connect(piped.ws_url.clone())
            .await
            .map_err(|error| failed(error.to_string()))?;
        let mut connection = Self::with_handler(browser, handler, true, temporary);
        // Our thin connection runs over the pipe, not a second WebSocket.
        connection.raw = piped.raw;
        connection.pipe = Some(Arc::new(piped.link));
        connection.own_process = Some(OwnProcess::watch(piped.child, connection.alive.clone()));
        Ok(connection)
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
            && self.own_process.as_ref().is_none_or(OwnProcess::running)
    }

    /// Closes a launched browser (waiting briefly, then killing it); detaches from a connected
    /// one, which keeps running.
    pub async fn shutdown(mut self, budget: Duration) {
        if !self.launched {
            return;
        }
        if let Some(process) = self.own_process.take() {
            let OwnProcess {
                kill, mut exited, ..
            } = process;
            let graceful = async {
                let _closed = self.browser.close().await;
                let _exited = (&mut exited).await;
            };
            if tokio::time::timeout(budget, graceful).await.is_err() {
                let _kill = kill.send(());
                let _exited = exited.await;
            }
            return;
        }
        let graceful = async {
            let _closed = self.browser.close().await;
            let _exited = self.browser.wait().await;
        };
        if tokio::time::timeout(budget, graceful).await.is_err() {
            let _killed = self.browser.kill().await;
            let _exited = self.browser.wait().await;
        }
    }
}

/// No tenant may reach the browser's remote-debugging endpoint through its egress proxy, even
/// one allowed on loopback: from there a page could drive every tenant's pages.
fn protect_debugging_endpoint(url: &str) {
    let Ok(parsed) = url::Url::parse(url) else {
        return;
    };
    let Some(port) = parsed.port_or_known_default() else {
        return;
    };
    let hosts: Vec<std::net::IpAddr> = match parsed.host() {
        Some(url::Host::Ipv4(address)) => vec![address.into()],
        Some(url::Host::Ipv6(address)) => vec![address.into()],
        // A name: every address it has now, and loopback (`localhost`).
        Some(url::Host::Domain(name)) => {
            let mut found: Vec<std::net::IpAddr> =
                std::net::ToSocketAddrs::to_socket_addrs(&(name, port))
                    .map(|addresses| addresses.map(|address| address.ip()).collect())
                    .unwrap_or_default();
            found.push(std::net::Ipv4Addr::LOCALHOST.into());
            found
        }
        None => return,
    };
    for host in hosts {
        crate::net::egress::protect(
            std::net::SocketAddr::new(host, port),
            "the browser's remote-debugging port",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A killed browser counts as dead at once, before the task watching it is polled: the
    /// next call relaunches instead of talking to a corpse.
    #[tokio::test(flavor = "current_thread")]
    async fn a_killed_process_is_dead_before_its_watcher_runs() {
        let child = tokio::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let alive = Arc::new(AtomicBool::new(true));
        let process = OwnProcess::watch(child, alive.clone());
        assert!(process.running());
        let pid = process.pid.expect("a pid").to_string();
        let killed = std::process::Command::new("kill")
            .args(["-9", &pid])
            .status()
            .expect("kill runs");
        assert!(killed.success());
        // No await in between: the watcher (same thread) has not run.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while process.running() {
            assert!(std::time::Instant::now() < deadline, "still running");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(alive.load(Ordering::SeqCst), "the watcher has not run yet");
    }
}
