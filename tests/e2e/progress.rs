//! Long calls as a real client follows them (issue 46): the official Python SDK asks for
//! progress and hears it while the call runs; it gives up on a call (its read timeout sends
//! `notifications/cancelled`) and the page is free at once, the script stopped in Chromium.

use crate::fixtures;
use serde_json::Value;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/python/progress_cancel.py"
);

/// Runs tests/python/progress_cancel.py in `mode` against the binary on `url`.
async fn run_script(mode: &str, url: String) -> Value {
    let mode = mode.to_owned();
    let output = tokio::task::spawn_blocking(move || {
        let mut command = crate::support::command("python3");
        command
            .env("MCP_CLIENT_MODE", mode)
            .arg(SCRIPT)
            .arg(env!("CARGO_BIN_EXE_devtools-mcp"))
            .arg(url)
            .args(crate::support::browser_args());
        command.output()
    })
    .await
    .expect("join")
    .expect("run python3 (install the SDK with `pip install mcp`)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "python client failed: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"))
}

async fn progress_and_cancellation(mode: &str) {
    let pages = fixtures::server();
    let report = run_script(mode, pages.url("/")).await;
    assert_eq!(report["opened"]["isError"], false, "{report}");
    assert_eq!(
        report["slow"]["text"], "Script ran on page and returned:\n```json\n\"done\"\n```",
        "{report}"
    );
    // A 3.5-s call reports about every second, each value larger than the last.
    let heard: Vec<f64> = report["progress"]
        .as_array()
        .map(|list| list.iter().filter_map(|entry| entry[0].as_f64()).collect())
        .unwrap_or_default();
    assert!(heard.len() >= 2, "progress heard: {report}");
    assert!(
        heard.windows(2).all(|pair| pair[0] < pair[1]),
        "progress must increase: {heard:?}"
    );
    // Each message names the tool and the host function the call is in (the script runs in
    // `script.*`, which the one gate recorded as it started).
    assert!(
        report["progress"][0][2].as_str().is_some_and(|message| {
            message.starts_with("evaluate_script is running (")
                && message.contains("s): in script.")
        }),
        "{report}"
    );
    assert!(
        !report["cancelled"].is_null(),
        "the busy call was given up: {report}"
    );
    // The page answers at once: the 60-s script was stopped, not waited for.
    let after = report["afterSeconds"].as_f64().unwrap_or(f64::MAX);
    assert!(
        after < 15.0,
        "the call after a cancellation took {after:.1} s: {report}"
    );
    assert_eq!(
        report["after"]["text"], "Script ran on page and returned:\n```json\n\"Fixture\"\n```",
        "{report}"
    );
}

#[tokio::test]
async fn a_2026_07_28_client_hears_progress_and_cancels_a_busy_script() {
    progress_and_cancellation("auto").await;
}

#[tokio::test]
async fn a_legacy_client_hears_progress_and_cancels_a_busy_script() {
    progress_and_cancellation("legacy").await;
}
