//! The flags Chromium is launched with, and where it and its profile are found.

use crate::browser::BrowserOptions;
use std::path::PathBuf;

/// chromiumoxide's default flags (Puppeteer's) without `--disable-popup-blocking`.
pub(super) const AUTOMATION_ARGS_WITH_POPUP_BLOCKING: [&str; 23] = [
    "--disable-background-networking",
    "--enable-features=NetworkService,NetworkServiceInProcess",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--disable-component-extensions-with-background-pages",
    "--disable-default-apps",
    "--disable-dev-shm-usage",
    "--disable-features=TranslateUI",
    "--disable-hang-monitor",
    "--disable-ipc-flooding-protection",
    "--disable-prompt-on-repost",
    "--disable-renderer-backgrounding",
    "--disable-sync",
    "--force-color-profile=srgb",
    "--metrics-recording-only",
    "--no-first-run",
    "--enable-automation",
    "--password-store=basic",
    "--use-mock-keychain",
    "--enable-blink-features=IdleDetection",
    "--lang=en_US",
];

/// Flags that keep Chromium from calling home (this network refuses it, and it stalls) plus the
/// reference's fixed ones and the user's `--chromeArg`s.
pub(super) fn launch_args(options: &BrowserOptions) -> Vec<String> {
    let mut args: Vec<String> = [
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-crash-restore-bubble",
        // No new-tab page at start: the session opens about:blank itself, at once.
        "--no-startup-window",
    ]
    .map(String::from)
    .to_vec();
    if options.headless {
        args.push("--screen-info={3840x2160}".into());
    }
    // Chromium refuses to start as root with its sandbox on; containers run as root.
    if running_as_root() && !options.chrome_args.iter().any(|arg| arg == "--no-sandbox") {
        args.push("--no-sandbox".into());
    }
    if let Some(proxy) = &options.proxy_server {
        args.push(format!("--proxy-server={proxy}"));
    }
    let own_blink_features = options
        .chrome_args
        .iter()
        .any(|arg| arg.starts_with("--enable-blink-features"));
    if options.webmcp && !own_blink_features {
        args.push("--enable-blink-features=WebMCP".into());
    }
    args.extend(options.chrome_args.iter().cloned());
    args
}

fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|metadata| metadata.uid() == 0)
}

pub(super) fn find_chromium() -> Option<PathBuf> {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
        "/usr/bin/google-chrome-stable",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|path| path.is_file())
}

pub(super) fn default_profile_dir() -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("devtools-mcp")
        .join("chrome-profile")
}
