//! The flags Chromium is launched with, and where it and its profile are found.

use crate::browser::BrowserOptions;
use std::path::{Path, PathBuf};

/// chromiumoxide's default flags (Puppeteer's) without `--disable-popup-blocking`.
const AUTOMATION_ARGS_WITH_POPUP_BLOCKING: [&str; 23] = [
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

/// Everything the launched browser is given: Puppeteer's defaults (less those named by
/// `--ignoreDefaultChromeArg`, which, as Puppeteer's `ignoreDefaultArgs`, removes defaults only),
/// then ours and the user's ([`launch_args`]), the DevTools pipe and the profile.
pub(super) fn browser_args(options: &BrowserOptions, profile_dir: &Path) -> Vec<String> {
    let mut defaults: Vec<String> = AUTOMATION_ARGS_WITH_POPUP_BLOCKING
        .iter()
        .map(|arg| (*arg).to_string())
        .collect();
    if !options.block_popups {
        defaults.push("--disable-popup-blocking".into());
    }
    if options.extensions {
        defaults.push("--enable-unsafe-extension-debugging".into());
    } else {
        defaults.push("--disable-extensions".into());
    }
    if options.headless {
        defaults.extend(["--headless=new", "--hide-scrollbars", "--mute-audio"].map(String::from));
    }
    defaults.retain(|arg| !options.ignore_default_chrome_args.contains(arg));
    let mut args = defaults;
    args.extend(launch_args(options));
    args.extend([
        "--remote-debugging-port=0".to_string(),
        super::pipe::PIPE_FLAG.to_string(),
        format!("--user-data-dir={}", profile_dir.display()),
    ]);
    if options.extensions {
        args.push("--load-extension=".to_string());
    }
    if let Some((width, height)) = options.viewport {
        args.push(format!("--window-size={width},{height}"));
    }
    if options.accept_insecure_certs {
        args.push("--ignore-certificate-errors".into());
    }
    args
}

/// Flags that keep Chromium from calling home (this network refuses it, and it stalls) plus the
/// reference's fixed ones and the user's `--chromeArg`s.
fn launch_args(options: &BrowserOptions) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn headless(ignored: &[&str], chrome_args: &[&str]) -> Vec<String> {
        let options = BrowserOptions {
            headless: true,
            ignore_default_chrome_args: ignored.iter().map(|arg| arg.to_string()).collect(),
            chrome_args: chrome_args.iter().map(|arg| arg.to_string()).collect(),
            ..BrowserOptions::default()
        };
        browser_args(&options, Path::new("/profile"))
    }

    #[test]
    fn ignored_defaults_are_left_out_and_nothing_else() {
        let all = headless(&[], &[]);
        for default in [
            "--hide-scrollbars",
            "--disable-extensions",
            "--disable-sync",
        ] {
            assert!(
                all.iter().any(|arg| arg == default),
                "{default} missing: {all:?}"
            );
        }
        // A default, a flag of ours (not a default, as in 1.11.0) and a user's flag named.
        let named = [
            "--hide-scrollbars",
            "--hide-crash-restore-bubble",
            "--no-zygote",
        ];
        let some = headless(&named, &["--no-zygote"]);
        assert!(
            !some.iter().any(|arg| arg == "--hide-scrollbars"),
            "{some:?}"
        );
        assert!(some.iter().any(|arg| arg == "--hide-crash-restore-bubble"));
        assert!(some.iter().any(|arg| arg == "--no-zygote"));
        let unnamed = headless(&[], &["--no-zygote"]);
        assert_eq!(
            some.len(),
            unnamed.len() - 1,
            "only the one default is gone"
        );
        // A tenant's egress proxy is not a default: naming it leaves it in place.
        let proxied = BrowserOptions {
            proxy_server: Some("http://127.0.0.1:9".into()),
            ignore_default_chrome_args: vec!["--proxy-server=http://127.0.0.1:9".into()],
            ..BrowserOptions::default()
        };
        let args = browser_args(&proxied, Path::new("/profile"));
        assert!(
            args.iter()
                .any(|arg| arg == "--proxy-server=http://127.0.0.1:9"),
            "{args:?}"
        );
        // The user's flags come after the defaults, so theirs win where Chromium keeps the last.
        let user = headless(&[], &["--headless=old"]);
        let position = |flag: &str| user.iter().position(|arg| arg == flag);
        assert!(
            position("--headless=new") < position("--headless=old"),
            "{user:?}"
        );
    }
}
