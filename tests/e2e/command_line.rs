//! The command line a newcomer meets, run as the real binary: `--version`, the helps, what a
//! missing browser and a profile already in use answer.

use crate::support::{chromium_path, devtools_mcp};

/// `devtools-mcp 0.1.0 (commit 9d725b8, contract devtools:tool@0.3.0 and 0.2.0,
/// x86_64-unknown-linux-gnu)`: the commit is this checkout's, the contracts the `wit/` folders.
#[test]
fn version_names_the_commit_the_contracts_and_the_target() {
    let (ok, text) = devtools_mcp(&["--version"]);
    assert!(ok, "{text}");
    let line = text.trim();
    let prefix = format!("devtools-mcp {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(line.starts_with(&prefix), "{line}");
    let inner = line[prefix.len()..].trim_end_matches(')');
    let parts: Vec<&str> = inner.split(", contract ").collect();
    assert_eq!(parts.len(), 2, "{line}");
    let commit = parts[0];
    let head = crate::support::command("git")
        .args(["rev-parse", "--short=7", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string());
    match head {
        Some(head) => assert_eq!(commit, head, "{line}"),
        None => assert_eq!(commit, "unknown", "not a checkout: {line}"),
    }
    let (contracts, target) = parts[1].rsplit_once(", ").expect("the target last");
    let mut folders: Vec<Vec<u64>> =
        std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../wit"))
            .expect("wit/")
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let version = name.strip_prefix("since_v")?.to_string();
                version.split('.').map(|part| part.parse().ok()).collect()
            })
            .collect();
    folders.sort();
    let newest = folders.last().expect("a contract folder");
    let newest = newest
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".");
    assert!(
        contracts.starts_with(&format!("devtools:tool@{newest}")),
        "{line}"
    );
    for folder in &folders {
        let version = folder
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(".");
        assert!(contracts.contains(&version), "{version} missing: {line}");
    }
    assert!(
        target.starts_with(std::env::consts::ARCH) && target.contains(std::env::consts::OS),
        "{line}"
    );
}

#[test]
fn help_says_what_the_program_is_and_each_subcommand_its_options() {
    let (ok, top) = devtools_mcp(&["--help"]);
    assert!(ok, "{top}");
    assert!(
        top.starts_with("Lets an AI agent drive a real Chrome"),
        "{top}"
    );
    let (ok, serve) = devtools_mcp(&["serve", "--help"]);
    assert!(
        ok && serve.contains("--tenants") && serve.contains("--http"),
        "{serve}"
    );
    assert_ne!(serve, top);
    let (ok, help_serve) = devtools_mcp(&["help", "serve"]);
    assert!(ok);
    assert_eq!(help_serve, serve);
    let (ok, call) = devtools_mcp(&["call", "--help"]);
    assert!(
        ok && call.contains("<TOOL>") && call.contains("--browser-url"),
        "{call}"
    );
    let (ok, tenant) = devtools_mcp(&["tenant", "--help"]);
    assert!(
        ok && tenant.contains("hash-token") && tenant != top,
        "{tenant}"
    );
}

/// No browser where it was asked for: an answer that says what to install or pass, not a
/// failed launch.
#[test]
fn a_missing_browser_says_what_to_install() {
    let missing = "/nonexistent/devtools-mcp/chrome";
    let cache = crate::support::cache_dir().to_string_lossy().into_owned();
    let (ok, text) = devtools_mcp(&[
        "call",
        "list_pages",
        "--executablePath",
        missing,
        "--cache-dir",
        &cache,
    ]);
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!("does not exist: {missing}")) && text.contains("Chromium"),
        "{text}"
    );
    assert!(!text.contains("Failed to launch"), "{text}");
    if !std::path::Path::new("/opt/google/chrome-canary/chrome").exists() {
        let (ok, text) = devtools_mcp(&[
            "call",
            "list_pages",
            "--channel",
            "canary",
            "--cache-dir",
            &cache,
        ]);
        assert!(!ok, "{text}");
        assert!(
            text.contains("Could not find Google Chrome Canary")
                && text.contains("/opt/google/chrome-canary/chrome")
                && text.contains("--executablePath"),
            "{text}"
        );
    }
}

/// A profile a live Chromium holds (its `SingletonLock`, a symlink to `<host>-<pid>`): 1.11.0's
/// answer, not Chromium's `zygote ... Broken pipe`; a stale lock (the process gone) holds
/// nothing, as in Chromium.
#[test]
fn a_profile_in_use_says_so_as_1_11_0_does() {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname");
    let folder = tempfile::tempdir().expect("profile folder");
    let profile = folder.path().join("profile");
    std::fs::create_dir(&profile).expect("profile");
    let lock = profile.join("SingletonLock");
    // This test's own process: alive on this host.
    std::os::unix::fs::symlink(format!("{}-{}", host.trim(), std::process::id()), &lock)
        .expect("lock");
    let profile_arg = profile.to_string_lossy().into_owned();
    let chromium = chromium_path();
    let cache = crate::support::cache_dir().to_string_lossy().into_owned();
    let call = [
        "call",
        "list_pages",
        "--executablePath",
        &chromium,
        "--userDataDir",
        &profile_arg,
        "--cache-dir",
        &cache,
        "--chromeArg=--disable-gpu",
    ];
    let (ok, text) = devtools_mcp(&call);
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "The browser is already running for {profile_arg}. Use --isolated to run multiple browser instances."
        )),
        "{text}"
    );
    assert!(!text.contains("zygote"), "{text}");
    std::fs::remove_file(&lock).expect("unlock");
    std::os::unix::fs::symlink(format!("{}-2147483646", host.trim()), &lock).expect("lock");
    let (ok, text) = devtools_mcp(&call);
    assert!(ok, "a stale lock holds nothing: {text}");
}

/// `--experimentalDevtools`: the browser opens DevTools for every tab (1.11.0's
/// `--auto-open-devtools-for-tabs`), and those windows are listed as pages, as 1.11.0 lists
/// them; without the flag, neither.
#[tokio::test]
#[ignore = "fails: headless, the DevTools window of a tab opened over CDP is not listed within 10 s; to investigate"]
async fn experimental_devtools_lists_the_devtools_windows() {
    for (flags, listed) in [(&["--experimentalDevtools"][..], true), (&[][..], false)] {
        let server = crate::support::McpServer::start(flags).await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut pages = String::new();
        while std::time::Instant::now() < deadline {
            pages = server.call("list_pages", serde_json::json!({})).await.text;
            if !listed || pages.contains("devtools://devtools/") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        assert_eq!(
            pages.contains("devtools://devtools/"),
            listed,
            "{flags:?}: {pages}"
        );
        assert!(pages.contains("about:blank"), "{pages}");
        server.shutdown().await;
    }
}
