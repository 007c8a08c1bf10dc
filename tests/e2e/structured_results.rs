//! Contract 0.3.1 end to end, with a real MCP client: a plugin declares an output schema and
//! returns a structured result beside its text; the host lists the schema and validates the
//! result before the answer leaves. And the contract grows without adapters: a component built
//! against 0.3.0 (kept as a binary) loads in this 0.3.1 server and answers.

use crate::support::{McpServer, binary_dir, browser_args};
use serde_json::{Value, json};
use std::path::Path;

/// A plugin folder holding only `file`.
fn folder_with(file: &Path) -> tempfile::TempDir {
    let folder = tempfile::tempdir().expect("temp dir");
    let name = file.file_name().expect("a file name");
    std::fs::copy(file, folder.path().join(name)).expect("copy the plugin");
    folder
}

async fn start(plugins: &Path, structured: bool) -> McpServer {
    let mut args = browser_args();
    args.extend(["--plugin-dir".to_string(), plugins.display().to_string()]);
    if structured {
        args.push("--experimentalStructuredContent".into());
    }
    McpServer::start_with(args, Vec::new())
        .await
        .unwrap_or_else(|message| panic!("{message}"))
}

#[tokio::test]
async fn a_plugins_structured_result_is_declared_validated_and_returned() {
    let plugins = folder_with(&binary_dir().join("test-plugins/structured_tool.wasm"));
    let server = start(plugins.path(), true).await;
    let tools = server.list_tools().await;
    let tool = tools
        .iter()
        .find(|tool| tool.name == "count_words")
        .expect("count_words is listed");
    let schema = Value::Object(
        (**tool
            .output_schema
            .as_ref()
            .expect("count_words declares an outputSchema"))
        .clone(),
    );
    let own = &schema["properties"]["result"];
    assert_eq!(own["type"], "object", "{schema}");
    assert_eq!(own["properties"]["words"]["type"], "integer", "{schema}");
    assert!(
        schema["properties"]["pages"].is_object(),
        "the host's own keys stay beside the result: {schema}"
    );
    // A built-in tool keeps the host's schema, with no `result`.
    let list_pages = tools
        .iter()
        .find(|tool| tool.name == "list_pages")
        .expect("list_pages");
    let plain = list_pages.output_schema.as_ref().expect("a schema");
    assert!(plain["properties"].get("result").is_none());

    let answer = server
        .call("count_words", json!({"text": "one three fivefive"}))
        .await;
    assert!(!answer.is_error, "{}", answer.text);
    assert!(answer.text.contains("3 words."), "{}", answer.text);
    let structured = answer.structured.expect("structuredContent");
    assert_eq!(
        structured["result"],
        json!({"words": 3, "longest": "fivefive"})
    );
    assert_eq!(structured["message"], "3 words.");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    assert!(validator.is_valid(&structured), "{structured}");

    // The result the schema refuses: the call fails and says where and what to fix.
    let wrong = server
        .call(
            "count_words",
            json!({"text": "a b", "answer": "wrong-type"}),
        )
        .await;
    assert!(wrong.is_error, "{}", wrong.text);
    assert!(
        wrong.text.contains("does not match its output schema")
            && wrong.text.contains("at /words")
            && wrong.text.contains("Fix the result"),
        "{}",
        wrong.text
    );
    assert!(
        wrong
            .structured
            .as_ref()
            .is_none_or(|structured| structured.get("result").is_none()),
        "an invalid result never leaves: {:?}",
        wrong.structured
    );
    // No result at all, though the tool declared one.
    let missing = server
        .call("count_words", json!({"text": "a", "answer": "none"}))
        .await;
    assert!(missing.is_error, "{}", missing.text);
    assert!(
        missing.text.contains("set no structured result"),
        "{}",
        missing.text
    );
    server.shutdown().await;
}

/// A 2025-11-25 client (the harness's `initialize` session) without
/// `--experimentalStructuredContent`: the list stays 1.11.0's (no output schema, the plugin's
/// included), yet the host still checks the result, so an author sees the mistake whoever calls.
#[tokio::test]
async fn a_client_without_structured_content_sees_no_schema_and_the_check_still_holds() {
    let plugins = folder_with(&binary_dir().join("test-plugins/structured_tool.wasm"));
    let server = start(plugins.path(), false).await;
    let tools = server.list_tools().await;
    let tool = tools
        .iter()
        .find(|tool| tool.name == "count_words")
        .expect("count_words is listed");
    assert!(tool.output_schema.is_none(), "{:?}", tool.output_schema);
    let answer = server.call("count_words", json!({"text": "a b"})).await;
    assert!(!answer.is_error, "{}", answer.text);
    assert!(answer.structured.is_none(), "{:?}", answer.structured);
    let wrong = server
        .call("count_words", json!({"text": "a", "answer": "wrong-type"}))
        .await;
    assert!(wrong.is_error, "{}", wrong.text);
    server.shutdown().await;
}

/// `tests/fixtures/contracts/sdk-v0.3.0/noop.wasm` was built by the Rust SDK against 0.3.0
/// before 0.3.1 existed. This server binds only 0.3.1 and (through its adapter) 0.2.0: the
/// component links by semver, with no adapter, and answers.
#[tokio::test]
async fn a_component_built_against_0_3_0_loads_and_answers_with_no_adapter() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/contracts/sdk-v0.3.0/noop.wasm");
    let bytes = std::fs::read(&fixture).expect("the frozen fixture");
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains("devtools:tool/response@0.3.0") && !text.contains("@0.3.1"),
        "the fixture must stay a 0.3.0 component"
    );
    let plugins = folder_with(&fixture);
    let server = start(plugins.path(), true).await;
    let tools = server.list_tools().await;
    assert!(
        tools.iter().any(|tool| tool.name == "noop"),
        "the 0.3.0 component is listed"
    );
    let answer = server.call("noop", json!({})).await;
    assert!(!answer.is_error, "{}", answer.text);
    let structured = answer.structured.expect("the host's structured content");
    assert!(structured.get("result").is_none(), "{structured}");
    server.shutdown().await;
}

/// A Python tool declares its output schema and returns a structured result through the
/// bindings componentize-py makes from the contract: listed, validated, returned.
#[tokio::test]
async fn a_python_plugins_structured_result_is_declared_and_returned() {
    let plugins = crate::python_plugin::built_fixture("word_count");
    let cache = crate::support::cache_dir().to_string_lossy().into_owned();
    // Compile CPython (20-50 s) into the cache before the server starts, as `python_plugin`
    // does: the server would list the tool only once compiled.
    let checked = crate::support::command(env!("CARGO_BIN_EXE_devtools-mcp"))
        .args(["--cache-dir", &cache, "plugin", "check"])
        .arg(plugins.join("word_count.wasm"))
        .output()
        .expect("plugin check");
    let report = String::from_utf8_lossy(&checked.stdout);
    assert!(report.contains("Tool word_count"), "{report}");
    assert!(
        report.contains("output schema (structured result"),
        "{report}"
    );
    let mut args = browser_args();
    args.extend(
        [
            "--plugin-dir",
            &plugins.to_string_lossy(),
            "--cache-dir",
            &cache,
            "--experimentalStructuredContent",
        ]
        .map(String::from),
    );
    let server = McpServer::start_with(args, Vec::new())
        .await
        .unwrap_or_else(|message| panic!("{message}"));
    // Listed once loaded: a component whose code is compiled still loads in the background
    // (CPython's start-up runs), and a client is told by `tools/list_changed` or its next list.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let tool = loop {
        let tools = server.list_tools().await;
        if let Some(tool) = tools.into_iter().find(|tool| tool.name == "word_count") {
            break tool;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "word_count is never listed: {}",
            server.stderr()
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    };
    let schema = tool.output_schema.as_ref().expect("an outputSchema");
    assert_eq!(
        schema["properties"]["result"]["required"],
        json!(["words"]),
        "{schema:?}"
    );
    let answer = server
        .call("word_count", json!({"text": "three little words"}))
        .await;
    assert!(!answer.is_error, "{}", answer.text);
    assert_eq!(answer.text, "3 words.");
    let structured = answer.structured.expect("structuredContent");
    assert_eq!(structured["result"], json!({"words": 3}));
    server.shutdown().await;
}
