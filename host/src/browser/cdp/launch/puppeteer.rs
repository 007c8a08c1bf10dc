//! Puppeteer 24's default Chromium flags, the ones chrome-devtools-mcp 1.11.0 launches the
//! browser with (`ChromeLauncher.defaultArgs`). Data only: the bench's "Chromium alone" floor
//! includes this file too, so it launches the browser exactly as the server does.

/// The flags, in Puppeteer's order; the two feature lists follow them as `--disable-features=`
/// and `--enable-features=` switches.
pub const ARGS: [&str; 26] = [
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
];

/// The Chromium features Puppeteer 24 turns off by default.
pub const DISABLED_FEATURES: [&str; 9] = [
    "Translate",
    "AcceptCHFrame",
    "MediaRouter",
    "OptimizationHints",
    "WebUIReloadButton",
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
    "ProcessPerSiteUpToMainFrameThreshold",
    "IsolateSandboxedIframes",
];

/// The Chromium features Puppeteer 24 turns on by default.
pub const ENABLED_FEATURES: [&str; 1] = ["PdfOopif"];

/// Headless mode, as Puppeteer adds it.
pub const HEADLESS_ARGS: [&str; 3] = ["--headless=new", "--hide-scrollbars", "--mute-audio"];
