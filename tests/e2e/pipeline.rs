//! The per-call pipeline over MCP: argument checks, gating, the file sandbox, traps, page-id
//! routing, structured content and local telemetry.

use crate::fixtures::{self, uid_of};
use crate::support::{McpServer, PrivateTmp, browser_args};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn test_plugins() -> String {
    let binary = Path::new(env!("CARGO_BIN_EXE_devtools-mcp"));
    binary
        .parent()
        .map(|dir| dir.join("test-plugins"))
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

#[tokio::test]
async fn bad_arguments_are_refused_before_the_browser_starts() {
    // Without the background start, so that only a call could launch the browser.
    let server = McpServer::start(&["--background-launch=false"]).await;
    let unknown = server
        .call("click", json!({ "uid": "1_1", "bogus": true }))
        .await;
    assert!(unknown.is_error);
    assert_eq!(
        unknown.text,
        "Input validation error: Invalid arguments for tool click: Unrecognized key: \"bogus\""
    );
    let none_expected = server.call("list_pages", json!({ "a": 1, "b": 2 })).await;
    assert_eq!(
        none_expected.text,
        "Input validation error: Invalid arguments for tool list_pages: Unrecognized keys: \"a\", \"b\""
    );
    let wrong_type = server.call("click", json!({ "uid": 5 })).await;
    assert!(wrong_type.is_error);
    assert!(
        wrong_type
            .text
            .contains("uid: Invalid input: expected string, received number"),
        "{}",
        wrong_type.text
    );
    let missing = server.call("select_page", json!({})).await;
    assert!(
        missing
            .text
            .contains("pageId: Invalid input: expected number, received undefined"),
        "{}",
        missing.text
    );
    let no_tool = server.call_raw("no_such_tool", json!({})).await;
    assert!(no_tool.is_err_and(|error| error.contains("Tool no_such_tool not found")));
    assert!(
        crate::support::descendants(server.pid()).is_empty(),
        "refused calls must not launch the browser"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_disabled_category_is_hidden_over_mcp_and_explained_with_cli_semantics() {
    let plugins = test_plugins();
    let enabled = McpServer::start(&["--plugin-dir", &plugins]).await;
    let names: Vec<String> = enabled
        .list_tools()
        .await
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert!(names.contains(&"network_probe".to_string()), "{names:?}");
    assert_eq!(
        enabled.call("network_probe", json!({})).await.text,
        "Network category is on"
    );
    enabled.shutdown().await;

    let disabled = McpServer::start(&["--plugin-dir", &plugins, "--no-category-network"]).await;
    let names: Vec<String> = disabled
        .list_tools()
        .await
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert!(!names.contains(&"network_probe".to_string()), "{names:?}");
    assert!(
        disabled
            .call_raw("network_probe", json!({}))
            .await
            .is_err_and(|error| error.contains("not found"))
    );
    disabled.shutdown().await;

    let cli = McpServer::start(&[
        "--plugin-dir",
        &plugins,
        "--categoryNetwork=false",
        "--viaCli",
    ])
    .await;
    let names: Vec<String> = cli
        .list_tools()
        .await
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert!(names.contains(&"network_probe".to_string()), "{names:?}");
    let refused = cli.call("network_probe", json!({})).await;
    assert!(refused.is_error);
    assert_eq!(
        refused.text,
        "Tool network_probe is in category Network which is currently disabled. Enable it by running devtools-mcp --categoryNetwork=true. For more information check the README."
    );
    cli.shutdown().await;
}

#[tokio::test]
async fn file_paths_outside_the_roots_are_refused_and_nothing_is_written() {
    let pages = fixtures::server();
    let workspace = tempfile::tempdir().expect("workspace");
    // Outside every root: beside the server's own temp dir, which is always allowed.
    let private = PrivateTmp::new();
    private.assert_outside(&[workspace.path()]);
    let outside = private.outside();
    let workspace_path = workspace.path().to_string_lossy().into_owned();
    let mut args = browser_args();
    args.extend(["--workspace".to_string(), workspace_path.clone()]);
    let server = McpServer::start_with(args, private.env())
        .await
        .expect("start");
    server
        .call("navigate_page", json!({ "url": pages.url("/") }))
        .await;

    let escape = format!(
        "{workspace_path}/../..{}/snap.txt",
        outside
            .as_path()
            .canonicalize()
            .expect("canonical")
            .display()
    );
    for path in [
        "../../../../etc/devtools-mcp-escape.txt".to_string(),
        outside.as_path().join("abs.txt").display().to_string(),
        escape,
    ] {
        let refused = server
            .call("take_snapshot", json!({ "filePath": path }))
            .await;
        assert!(refused.is_error, "{path}: {}", refused.text);
        assert!(
            refused.text.starts_with("Error: Access denied: path "),
            "{path}: {}",
            refused.text
        );
        assert!(
            refused
                .text
                .contains("is not within any of the configured workspace roots."),
            "{}",
            refused.text
        );
    }
    // A symlink planted in the workspace that points out.
    std::os::unix::fs::symlink(outside.as_path(), workspace.path().join("link")).expect("symlink");
    let through_link = server
        .call("take_snapshot", json!({ "filePath": "link/snap.txt" }))
        .await;
    assert!(
        through_link
            .text
            .starts_with("Error: Access denied: path \"link/snap.txt\" (canonical: "),
        "{}",
        through_link.text
    );
    assert_eq!(
        std::fs::read_dir(outside.as_path())
            .expect("outside")
            .count(),
        0,
        "nothing may be written outside"
    );
    assert!(!Path::new("/etc/devtools-mcp-escape.txt").exists());

    let saved = server
        .call("take_snapshot", json!({ "filePath": "snapshots/page" }))
        .await;
    let file: PathBuf = workspace
        .path()
        .canonicalize()
        .expect("canonical")
        .join("snapshots/page.txt");
    assert_eq!(saved.text, format!("Saved snapshot to {}.", file.display()));
    let written = std::fs::read_to_string(&file).expect("snapshot file");
    assert!(written.starts_with("uid="), "{written}");
    server.shutdown().await;
}

#[tokio::test]
async fn a_trapping_plugin_is_an_error_and_the_server_keeps_serving() {
    let plugins = test_plugins();
    let server = McpServer::start(&["--plugin-dir", &plugins]).await;
    let crashed = server
        .call("crashing_tool", json!({ "mode": "crash" }))
        .await;
    assert!(crashed.is_error);
    assert!(
        crashed
            .text
            .starts_with("Before the crash\nError: The tool's plugin ("),
        "{}",
        crashed.text
    );
    assert!(
        crashed.text.contains("crashing_tool.wasm) crashed: "),
        "{}",
        crashed.text
    );
    // The crash line, then what the plugin's code reported as it crashed (its panic).
    assert!(
        crashed.text.contains(
            "The server is still running.\nIts code reported, as it crashed:\npanicked at "
        ) && crashed.text.ends_with("deliberate crash"),
        "{}",
        crashed.text
    );
    let failed = server
        .call("crashing_tool", json!({ "mode": "fail" }))
        .await;
    assert_eq!(failed.text, "Before the crash\nError: deliberate failure");
    // No state survives: a fresh instance per call.
    let fine = server.call("crashing_tool", json!({ "mode": "ok" })).await;
    assert_eq!(fine.text, "Before the crash\nNo crash");
    let listed = server.call("list_pages", json!({})).await;
    assert_eq!(listed.text, "## Pages\n1: about:blank [selected]");
    server.shutdown().await;
}

#[tokio::test]
async fn page_id_routing_targets_pages_and_structured_content_mirrors_the_text() {
    let pages = fixtures::server();
    let server = McpServer::start(&[
        "--experimentalPageIdRouting",
        "--experimentalStructuredContent",
    ])
    .await;
    let tools = server.list_tools().await;
    let snapshot_tool = tools
        .iter()
        .find(|tool| tool.name == "take_snapshot")
        .expect("take_snapshot");
    let schema = Value::Object((*snapshot_tool.input_schema).clone());
    assert_eq!(schema["required"], json!(["pageId"]));
    assert_eq!(
        schema["properties"]
            .as_object()
            .and_then(|p| p.keys().next().cloned())
            .as_deref(),
        Some("pageId")
    );
    let evaluate = tools
        .iter()
        .find(|tool| tool.name == "evaluate_script")
        .expect("evaluate_script");
    assert!(
        evaluate.input_schema["required"]
            .as_array()
            .is_some_and(|r| r.contains(&json!("pageId")))
    );
    let list = tools
        .iter()
        .find(|tool| tool.name == "list_pages")
        .expect("list_pages");
    assert!(!list.input_schema.contains_key("required"));

    server
        .call("new_page", json!({ "url": pages.url("/") }))
        .await;
    let second = server
        .call("new_page", json!({ "url": pages.url("/next") }))
        .await;
    let pages_data = second
        .structured
        .as_ref()
        .map(|data| data["pages"].clone())
        .expect("structured pages");
    assert_eq!(pages_data[2]["title"], "Next");
    assert_eq!(pages_data[2]["selected"], true);
    let first_id = pages_data[1]["id"].as_u64().expect("id");

    let routed = server
        .call("take_snapshot", json!({ "pageId": first_id }))
        .await;
    assert!(
        routed.text.contains("RootWebArea \"Fixture\""),
        "{}",
        routed.text
    );
    let structured = routed.structured.expect("structured content");
    assert_eq!(structured["snapshot"]["role"], "RootWebArea");
    assert_eq!(structured["snapshot"]["name"], "Fixture");
    let button = uid_of(&routed.text, "button \"Add item\"");
    let clicked = server
        .call("click", json!({ "pageId": first_id, "uid": button }))
        .await;
    assert!(!clicked.is_error, "{}", clicked.text);
    let counted = server
        .call("evaluate_script", json!({ "pageId": first_id, "function": "() => document.querySelectorAll('li').length" }))
        .await;
    assert!(counted.text.contains("```json\n1\n```"), "{}", counted.text);
    let unknown_page = server
        .call("take_snapshot", json!({ "pageId": 4242 }))
        .await;
    assert!(unknown_page.is_error);
    assert_eq!(unknown_page.text, "Error: No page found");
    server.shutdown().await;
}

#[tokio::test]
async fn telemetry_is_local_and_sanitized() {
    let directory = tempfile::tempdir().expect("temp dir");
    let file = directory.path().join("calls.jsonl");
    let file_arg = file.to_string_lossy().into_owned();
    let server = McpServer::start(&["--telemetryFile", &file_arg]).await;
    server.call("list_pages", json!({})).await;
    server
        .call(
            "evaluate_script",
            json!({ "function": "() => 'a secret value'" }),
        )
        .await;
    server
        .call("click", json!({ "uid": "1_1", "bogus": 1 }))
        .await;
    server.shutdown().await;
    let text = std::fs::read_to_string(&file).expect("telemetry file");
    let records: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("json line"))
        .collect();
    assert_eq!(records.len(), 3, "{text}");
    assert_eq!(records[0]["tool_name"], "list_pages");
    assert_eq!(records[0]["success"], true);
    assert!(
        [50, 100, 250, 500, 1000, 2500, 5000, 10000]
            .contains(&records[0]["latency_ms"].as_u64().unwrap_or(0))
    );
    assert_eq!(
        records[1]["tool_params"]["evaluate_script_params"]["function_length"],
        50
    );
    assert!(
        !text.contains("secret"),
        "values never reach telemetry: {text}"
    );
    assert_eq!(records[2]["success"], false);
}
