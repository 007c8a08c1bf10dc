//! The browser, in three layers that import only downward:
//!
//! - [`cdp`]: reaching Chromium: launch and connect, the DevTools pipe, our thin socket for
//!   large replies, side connections, and one command helper with one table of timeouts.
//! - [`page`]: the page model: a [`McpPage`] with private state and a slot per feature;
//!   navigation, actions and settling, input, screenshots, emulation and snapshots.
//! - [`features`]: one type per capability, kept in its page's slot: console and network
//!   collectors, styles, performance traces, heap snapshots, screencasts, page tools,
//!   extensions, PWAs, and the memory the renderers hold.
//!
//! A test (`layers.rs`) keeps `cdp` from naming `page` or `features`, and `page` from naming
//! `features`.

pub mod cdp;
pub mod features;
pub mod page;

pub use cdp::connection::BrowserConn;
pub use cdp::raw::{RawClient, RawLink};
pub use cdp::shared::SharedBrowser;
pub use cdp::{cdp, pipe};
pub use features::long_lived::LongLived;
pub use features::screencast::{ScreencastOptions, find_ffmpeg};
pub use page::emulation::EmulateRequest;
pub use page::screenshot::ScreenshotFlags;
pub use page::{McpPage, Target};

use std::path::PathBuf;
use std::sync::Arc;

/// How long taking a page in hand may take (about 100 ms when it answers).
const TRACK_TIMEOUT: std::time::Duration = cdp::timeouts::COMMAND;

/// Starts tracking a page: the page model (its dialogs watched from now on) with every
/// feature it has from its start. Bounded by [`TRACK_TIMEOUT`]: chromiumoxide holds every
/// message to a page it has not finished setting up, without a deadline, so a page whose set-up
/// never ends would otherwise hold the caller (and the session) for good.
pub async fn track(
    page: chromiumoxide::Page,
    isolated_context: Option<String>,
    redact_network_headers: bool,
    raw: Arc<RawLink>,
) -> Result<McpPage, String> {
    let tracked = tokio::time::timeout(TRACK_TIMEOUT, async {
        let mut page = McpPage::attach(page, isolated_context, raw).await?;
        features::attach(&mut page, redact_network_headers).await?;
        Ok::<_, String>(page)
    })
    .await
    .map_err(|_| {
        format!(
            "The page did not answer within {} s while it was being set up (it may not have finished opening, or its renderer may have crashed).",
            TRACK_TIMEOUT.as_secs()
        )
    })??;
    tracked.warm_raw_session();
    Ok(tracked)
}

/// How to get a browser: the reference's launch and connect flags.
#[derive(Debug, Clone, Default)]
pub struct BrowserOptions {
    pub browser_url: Option<String>,
    pub ws_endpoint: Option<String>,
    pub executable_path: Option<PathBuf>,
    /// `--channel`: the Chrome channel to find when no `executable_path` is given.
    pub channel: Option<String>,
    /// `--autoConnect`: attach to the user's running Chrome of `channel` (or `user_data_dir`).
    pub auto_connect: bool,
    /// `--experimentalDevtools`: the launched browser opens DevTools for every tab.
    pub devtools: bool,
    pub headless: bool,
    pub isolated: bool,
    pub user_data_dir: Option<PathBuf>,
    pub chrome_args: Vec<String>,
    /// `--ignoreDefaultChromeArg`: default arguments the launched browser is not given.
    pub ignore_default_chrome_args: Vec<String>,
    pub viewport: Option<(u32, u32)>,
    pub proxy_server: Option<String>,
    pub accept_insecure_certs: bool,
    /// `--screenshot*` defaults.
    pub screenshot: ScreenshotFlags,
    /// `--redactNetworkHeaders`.
    pub redact_network_headers: bool,
    /// `--experimentalScreencast`, `--experimentalFfmpegPath`, `--screencastFps`.
    pub screencast: ScreencastOptions,
    /// `--nodePath`, `--lighthousePath`.
    pub lighthouse: crate::lighthouse::LighthouseOptions,
    /// `--categoryExperimentalWebmcp` or `--categoryExperimentalThirdParty`: pages may register
    /// WebMCP tools (`document.modelContext`), a Blink feature off by default.
    pub webmcp: bool,
    /// `--categoryExtensions`: the launched browser allows extensions and installing them over
    /// CDP (`Extensions.loadUnpacked`), as Puppeteer's `enableExtensions` does.
    pub extensions: bool,
    /// Keep Chromium's popup blocker on (chromiumoxide turns it off): a tenant's page must
    /// not open windows without a user gesture, beyond every quota.
    pub block_popups: bool,
    /// Where tools may navigate (`--javascriptEvaluation`, `--fileNavigations`).
    pub navigation: crate::policy::navigation::NavigationPolicy,
    /// `--wsHeaders`: sent with the WebSocket handshake of `--wsEndpoint`.
    pub ws_headers: Vec<(String, String)>,
    /// `--blockedUrlPattern` or `--allowedUrlPattern`: enforced on every target of the browser
    /// (`cdp::url_guard`) and checked before each navigation a tool asks for.
    pub url_patterns: Option<std::sync::Arc<crate::policy::url_patterns::UrlPatterns>>,
    /// `--experimentalRecovery`: a relaunch after the browser died reopens the pages.
    pub recovery: bool,
    /// `--experimentalDownloads`: where and how much pages may download.
    pub downloads: Option<features::downloads::DownloadSettings>,
    /// `--experimentalHumanInTheLoop`: `request_human` may open a live view of a page on a
    /// loopback listener (stdio only: a tenant's browser never does).
    pub human_in_the_loop: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(
        "Could not find Chrome or Chromium (looked in {searched} and on PATH). Install Google Chrome (https://www.google.com/chrome/) or Chromium (e.g. `apt-get install chromium`, `dnf install chromium`, `brew install --cask chromium`), or pass --executablePath with the path of a Chrome or Chromium binary."
    )]
    NoExecutable { searched: String },
    #[error(
        "Could not find {product} (--channel) at {searched}. Install it ({download}), or pass --executablePath with the path of a Chrome or Chromium binary instead of --channel."
    )]
    ChannelMissing {
        product: &'static str,
        searched: String,
        download: &'static str,
    },
    #[error(
        "The browser named by --executablePath does not exist: {0}. Pass the path of a Chrome or Chromium binary, or leave --executablePath out to use the installed Chrome or Chromium."
    )]
    ExecutableMissing(String),
    #[error("Failed to launch the browser ({executable}): {reason}")]
    Launch { executable: String, reason: String },
    #[error(
        "Could not connect to Chrome in {0}. Check if Chrome is running and remote debugging is enabled by going to chrome://inspect/#remote-debugging."
    )]
    AutoConnect(String),
    #[error("Failed to connect to the browser at {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error(
        "The browser is already running for {0}. Use --isolated to run multiple browser instances."
    )]
    ProfileInUse(String),
    #[error("Cannot create the browser profile directory {dir}: {reason}")]
    Profile { dir: String, reason: String },
    #[error("Cannot create a browser context for this session: {0}")]
    Context(String),
    /// `--experimentalDownloads` is never left unenforced.
    #[error("Cannot save downloads into the session's folder: {0}")]
    Downloads(String),
    /// The server never runs with a restriction it could not set up.
    #[error("Cannot enforce {flag} on the browser: {reason}")]
    UrlPatterns { flag: &'static str, reason: String },
}
