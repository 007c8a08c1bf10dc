//! The flags Chromium is launched with, and where it and its profile are found.

pub mod discovery;
pub mod profile_lock;
mod puppeteer;

use crate::browser::BrowserOptions;
use puppeteer::{ARGS, DISABLED_FEATURES, ENABLED_FEATURES, HEADLESS_ARGS};
use std::path::{Path, PathBuf};

/// Left out of Puppeteer's defaults for a browser whose popups stay blocked (a tenant's).
const UNBLOCK_POPUPS: &str = "--disable-popup-blocking";

/// Everything the launched browser is given: Puppeteer's defaults ([`puppeteer`]; a tenant's
/// browser keeps popups blocked) less those named by `--ignoreDefaultChromeArg` (which, as
/// Puppeteer's `ignoreDefaultArgs`, removes defaults only), then ours and the user's
/// ([`launch_args`]), the DevTools pipe and the profile.
pub(super) fn browser_args(options: &BrowserOptions, profile_dir: &Path) -> Vec<String> {
    let (features, user_args) = features(&options.chrome_args);
    let mut defaults: Vec<String> = ARGS
        .iter()
        .filter(|arg| !(options.block_popups && **arg == UNBLOCK_POPUPS))
        .map(|arg| (*arg).to_string())
        .collect();
    defaults.extend(features);
    if options.headless {
        defaults.extend(HEADLESS_ARGS.map(String::from));
    }
    if options.extensions {
        defaults.push("--enable-unsafe-extension-debugging".into());
    } else {
        defaults.push("--disable-extensions".into());
    }
    defaults.retain(|arg| !options.ignore_default_chrome_args.contains(arg));
    let mut args = defaults;
    args.extend(launch_args(options, user_args));
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

/// The default `--disable-features` and `--enable-features` switches with the user's features
/// merged in, as Puppeteer does (Chromium keeps only the last of each switch, so a user's own
/// list would otherwise drop the defaults), and the user's other flags. A feature both lists
/// name stays enabled.
fn features(chrome_args: &[String]) -> ([String; 2], Vec<&str>) {
    let mut disabled: Vec<&str> = DISABLED_FEATURES.to_vec();
    let mut enabled: Vec<&str> = ENABLED_FEATURES.to_vec();
    let mut others = Vec::new();
    for arg in chrome_args {
        if let Some(list) = arg.strip_prefix("--disable-features=") {
            disabled.extend(list.split(',').map(str::trim).filter(|f| !f.is_empty()));
        } else if let Some(list) = arg.strip_prefix("--enable-features=") {
            enabled.extend(list.split(',').map(str::trim).filter(|f| !f.is_empty()));
        } else {
            others.push(arg.as_str());
        }
    }
    disabled.retain(|feature| !enabled.contains(feature));
    let switches = [
        format!("--disable-features={}", disabled.join(",")),
        format!("--enable-features={}", enabled.join(",")),
    ];
    (switches, others)
}

/// Flags that keep Chromium from calling home (this network refuses it, and it stalls) plus the
/// reference's fixed ones and the user's `--chromeArg`s.
fn launch_args(options: &BrowserOptions, user_args: Vec<&str>) -> Vec<String> {
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
    // `--experimentalDevtools`, as 1.11.0 launches it.
    if options.devtools {
        args.push("--auto-open-devtools-for-tabs".into());
    }
    let own_blink_features = user_args
        .iter()
        .any(|arg| arg.starts_with("--enable-blink-features"));
    if options.webmcp && !own_blink_features {
        args.push("--enable-blink-features=WebMCP".into());
    }
    args.extend(user_args.into_iter().map(String::from));
    args
}

fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|metadata| metadata.uid() == 0)
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
    fn the_defaults_are_puppeteer_24s_as_1_11_0_launches_them() {
        let args = headless(&[], &[]);
        // chrome-devtools-mcp 1.11.0's `puppeteer.launch` (headless, no extensions), up to the
        // profile and pipe flags, which Puppeteer adds elsewhere.
        let reference = [
            "--allow-pre-commit-input",
            "--disable-background-networking",
            "--disable-background-timer-throttling",
            "--disable-backgrounding-occluded-windows",
            "--disable-breakpad",
            "--disable-client-side-phishing-detection",
            "--disable-component-extensions-with-background-pages",
            "--disable-crash-reporter",
            "--disable-default-apps",
            "--disable-dev-shm-usage",
            "--disable-hang-monitor",
            "--disable-infobars",
            "--disable-ipc-flooding-protection",
            "--disable-popup-blocking",
            "--disable-prompt-on-repost",
            "--disable-renderer-backgrounding",
            "--disable-search-engine-choice-screen",
            "--disable-sync",
            "--enable-automation",
            "--export-tagged-pdf",
            "--force-color-profile=srgb",
            "--generate-pdf-document-outline",
            "--metrics-recording-only",
            "--no-first-run",
            "--password-store=basic",
            "--use-mock-keychain",
            "--disable-features=Translate,AcceptCHFrame,MediaRouter,OptimizationHints,WebUIReloadButton,WebUIOmniboxPopup,WebUIOmniboxAimPopup,ProcessPerSiteUpToMainFrameThreshold,IsolateSandboxedIframes",
            "--enable-features=PdfOopif",
            "--headless=new",
            "--hide-scrollbars",
            "--mute-audio",
            "--disable-extensions",
        ];
        let defaults: Vec<&str> = args
            .iter()
            .take(reference.len())
            .map(String::as_str)
            .collect();
        assert_eq!(defaults, reference);
        // A tenant's browser blocks popups: the one default it leaves out.
        let blocking = BrowserOptions {
            headless: true,
            block_popups: true,
            ..BrowserOptions::default()
        };
        let args = browser_args(&blocking, Path::new("/profile"));
        assert!(!args.iter().any(|arg| arg == "--disable-popup-blocking"));
        assert_eq!(args.len(), headless(&[], &[]).len() - 1);
    }

    #[test]
    fn the_users_feature_lists_are_merged_into_the_defaults() {
        let args = headless(
            &[],
            &[
                "--disable-features=Foo, Bar",
                "--no-zygote",
                "--enable-features=Translate,Baz",
                "--disable-features=Qux",
            ],
        );
        let switches = |prefix: &str| -> Vec<&String> {
            args.iter().filter(|arg| arg.starts_with(prefix)).collect()
        };
        assert_eq!(
            switches("--disable-features="),
            [
                "--disable-features=AcceptCHFrame,MediaRouter,OptimizationHints,WebUIReloadButton,WebUIOmniboxPopup,WebUIOmniboxAimPopup,ProcessPerSiteUpToMainFrameThreshold,IsolateSandboxedIframes,Foo,Bar,Qux"
            ],
            "one switch, the user's features after the defaults, Translate enabled by the user"
        );
        assert_eq!(
            switches("--enable-features="),
            ["--enable-features=PdfOopif,Translate,Baz"]
        );
        assert!(args.iter().any(|arg| arg == "--no-zygote"));
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
