//! A client this project did not write: the official Python MCP SDK drives the server.

use crate::fixtures;
use serde_json::Value;
use std::process::Command;

#[tokio::test]
async fn the_python_sdk_lists_and_calls_tools() {
    let pages = fixtures::server();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/python/mcp_client.py");
    let url = pages.url("/");
    let output = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg(script)
            .arg(env!("CARGO_BIN_EXE_devtools-mcp"))
            .arg(url)
            .args(crate::support::browser_args())
            .output()
    })
    .await
    .expect("join")
    .expect("run python3 (install the SDK with `pip install mcp`)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "python client failed: {stderr}");
    let report: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"));
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(
        tools.contains(&"take_snapshot") && tools.contains(&"new_page"),
        "{report}"
    );
    assert_eq!(report["calls"]["new_page"]["isError"], false, "{report}");
    let snapshot = report["calls"]["take_snapshot"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(snapshot.contains("RootWebArea \"Fixture\""), "{report}");
    assert_eq!(
        report["calls"]["evaluate_script"]["text"],
        "Script ran on page and returned:\n```json\n\"Fixture\"\n```"
    );
}
