//! The browser this server launches gets the flags chrome-devtools-mcp 1.11.0 launches it with
//! (Puppeteer 24's defaults, the user's `--chromeArg`s with their feature lists merged in), read
//! from the running Chromium's command line, not from our code.

use crate::support::reference::{reference_ready, start_reference};
use crate::support::{McpServer, browser_args, descendants};
use serde_json::json;
use std::collections::BTreeSet;

/// Flags only one side gives, each for a reason: `(flag or its prefix, why)`.
const OURS_ONLY: &[(&str, &str)] = &[
    (
        "--disable-component-update",
        "Chromium must not call home from a sandboxed network",
    ),
    (
        "--no-startup-window",
        "the session opens its first page itself, at once",
    ),
    (
        "--remote-debugging-port=0",
        "chromiumoxide's WebSocket (it cannot use the pipe) and short side connections",
    ),
    (
        "--remote-debugging-pipe=cbor",
        "the pipe in CBOR, the browser's own form: large replies skip the JSON conversion",
    ),
    (
        "--user-data-dir=",
        "a temporary profile of each server's own naming",
    ),
];
const THEIRS_ONLY: &[(&str, &str)] = &[
    (
        "about:blank",
        "Puppeteer's start page, where ours opens no window",
    ),
    ("--remote-debugging-pipe", "the pipe in JSON"),
    (
        "--user-data-dir=",
        "a temporary profile of each server's own naming",
    ),
];

/// The launched browser's flags: the command line of the one process below `server` that is
/// Chromium's browser process (it holds the DevTools pipe; its children have a `--type=`),
/// whatever the binary is called.
fn browser_flags(server: u32) -> BTreeSet<String> {
    let mut found = Vec::new();
    for pid in descendants(server) {
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmdline
            .split(|byte| *byte == 0)
            .filter(|arg| !arg.is_empty())
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect();
        let has = |prefix: &str| args.iter().any(|arg| arg.starts_with(prefix));
        if has("--remote-debugging-pipe") && !has("--type=") {
            found.push(args[1..].to_vec());
        }
    }
    assert_eq!(
        found.len(),
        1,
        "one browser process below {server}: {found:?}"
    );
    found.remove(0).into_iter().collect()
}

fn unexplained(
    flags: &BTreeSet<String>,
    other: &BTreeSet<String>,
    explained: &[(&str, &str)],
) -> Vec<String> {
    flags
        .difference(other)
        .filter(|flag| {
            !explained.iter().any(|(known, _)| {
                flag.as_str() == *known || (known.ends_with('=') && flag.starts_with(known))
            })
        })
        .cloned()
        .collect()
}

#[tokio::test]
async fn the_browser_gets_the_flags_1_11_0_launches_it_with() {
    if !reference_ready("the launch-flag comparison with chrome-devtools-mcp 1.11.0") {
        return;
    }
    // A user's own feature lists, one feature enabled that a default disables.
    let user = [
        "--chromeArg=--disable-features=BackForwardCache",
        "--chromeArg=--enable-features=Translate",
        "--ignoreDefaultChromeArg=--disable-infobars",
    ];
    let theirs = start_reference(&user).await;
    let mut args = browser_args();
    args.extend(user.map(String::from));
    let ours = match McpServer::start_with(args, Vec::new()).await {
        Ok(server) => server,
        Err(message) => panic!("{message}"),
    };
    let mut flags = Vec::new();
    for server in [&ours, &theirs] {
        let pages = server.call("list_pages", json!({})).await;
        assert!(!pages.is_error, "{}", pages.text);
        flags.push(browser_flags(server.pid()));
    }
    ours.shutdown().await;
    theirs.shutdown().await;
    let (ours, theirs) = (&flags[0], &flags[1]);

    assert!(
        ours.contains("--disable-features=AcceptCHFrame,MediaRouter,OptimizationHints,WebUIReloadButton,WebUIOmniboxPopup,WebUIOmniboxAimPopup,ProcessPerSiteUpToMainFrameThreshold,IsolateSandboxedIframes,BackForwardCache"),
        "the user's disabled feature joins the defaults, Translate left enabled: {ours:?}"
    );
    assert!(
        ours.contains("--enable-features=PdfOopif,Translate"),
        "{ours:?}"
    );
    assert!(!ours.contains("--disable-infobars"), "{ours:?}");
    let ours_only = unexplained(ours, theirs, OURS_ONLY);
    let theirs_only = unexplained(theirs, ours, THEIRS_ONLY);
    assert!(
        ours_only.is_empty() && theirs_only.is_empty(),
        "the browsers' flags differ\n  only ours: {ours_only:?}\n  only 1.11.0's: {theirs_only:?}"
    );
}

/// `DEVTOOLS_MCP_CPU` (compile_settings.rs): a machine below the level the built-in tools were
/// precompiled for (x86-64-v2) is simulated with `x86-64`; the server compiles the tools
/// there and answers as usual. A level it does not know is refused at start, naming the ones
/// there are.
#[cfg(target_arch = "x86_64")]
#[tokio::test]
async fn an_older_cpu_level_compiles_the_tools_and_an_unknown_one_is_refused() {
    use crate::support::{McpServer, browser_args};
    let env = |level: &str| vec![("DEVTOOLS_MCP_CPU".to_string(), level.to_string())];
    // Into an empty compiled-code cache each: this machine's level (the build's), then x86-64.
    let mut written = Vec::new();
    for level in ["x86-64-v2", "x86-64"] {
        let cache = tempfile::tempdir().expect("cache");
        let mut args = browser_args();
        args.extend([
            "--cache-dir".to_string(),
            cache.path().display().to_string(),
        ]);
        let server = McpServer::start_with(args, env(level))
            .await
            .unwrap_or_else(|error| panic!("starts at {level}: {error}"));
        let listed = server.call("list_pages", serde_json::json!({})).await;
        assert!(!listed.is_error, "{}", listed.text);
        server.shutdown().await;
        written.push(walkdir(cache.path()));
    }
    // At x86-64 the build's code is refused and the tools it ran were compiled (and cached).
    assert!(
        written[1] > written[0],
        "cache files at v2 and v1: {written:?}"
    );

    let args = browser_args();
    let refused = McpServer::start_with(args, env("x86-64-v9"))
        .await
        .err()
        .expect("an unknown level is refused");
    assert!(
        refused.contains("DEVTOOLS_MCP_CPU=\"x86-64-v9\" is not a CPU level this build knows: use x86-64-v2, x86-64 or native"),
        "{refused}"
    );
}

/// Files under `dir`, recursively.
fn walkdir(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => walkdir(&entry.path()),
            _ => 1,
        })
        .sum()
}
