//! A client this project did not write: the official Python MCP SDK drives the server.

use crate::fixtures;
use serde_json::Value;

#[tokio::test]
async fn the_python_sdk_lists_and_calls_tools() {
    let pages = fixtures::server();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/python/mcp_client.py");
    let url = pages.url("/");
    // A root outside the temp dir (which is always allowed): only the client's roots open it.
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("root dir");
    let root_path = root.path().canonicalize().expect("canonical root");
    let root_env = root_path.clone();
    let output = tokio::task::spawn_blocking(move || {
        crate::support::command("python3")
            .env("MCP_CLIENT_ROOT", root_env)
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
    let saved = root_path.join("from-python.txt");
    assert_eq!(
        report["calls"]["save_snapshot"]["text"],
        format!("Saved snapshot to {}.", saved.display()),
        "{report}"
    );
    let written = std::fs::read_to_string(&saved).expect("snapshot saved into the client's root");
    assert!(written.contains("RootWebArea \"Fixture\""), "{written}");
}
