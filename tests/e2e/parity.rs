//! The default tool list against chrome-devtools-mcp 1.11.0's (kept as test data, so this runs
//! without Node): same names, parameters in order, required parameters, descriptions and
//! annotations, except the differences the differential test lists. And the flags that change
//! the list do it as 1.11.0's do.

use crate::differential::DIFFERENCES_ON_PURPOSE;
use crate::support::McpServer;
use serde_json::{Value, json};

fn listed_as_difference(tool: &str) -> bool {
    let label = format!("tools/list {tool}");
    DIFFERENCES_ON_PURPOSE
        .iter()
        .any(|(listed, _)| *listed == label)
}

fn names(schema: &Value, key: &str) -> Vec<String> {
    match &schema[key] {
        Value::Object(properties) => properties.keys().cloned().collect(),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        _ => Vec::new(),
    }
}

#[tokio::test]
async fn the_default_tools_match_the_reference() {
    let data: Value =
        serde_json::from_str(include_str!("../data/reference-tools.json")).expect("test data");
    let reference = data["tools"].as_object().expect("tools");
    let server = McpServer::start_routed(&[]).await;
    let tools = server.list_tools().await;
    let ours: Vec<String> = tools.iter().map(|tool| tool.name.to_string()).collect();
    let expected: Vec<String> = reference
        .keys()
        .filter(|name| ours.contains(name) || !listed_as_difference(name))
        .cloned()
        .collect();
    assert_eq!(
        ours, expected,
        "tool names (sorted) differ from 1.11.0's default set"
    );
    for tool in &tools {
        let name = tool.name.to_string();
        if listed_as_difference(&name) {
            continue;
        }
        let want = &reference[&name];
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(
            names(&schema, "properties"),
            names(want, "parameters"),
            "parameters of {name}"
        );
        assert_eq!(
            names(&schema, "required"),
            names(want, "required"),
            "required parameters of {name}"
        );
        assert_eq!(
            schema["additionalProperties"],
            json!(false),
            "{name} must be strict"
        );
        assert_eq!(
            tool.description.as_deref(),
            want["description"].as_str(),
            "description of {name}"
        );
        let meta = tool.meta.as_ref().map(|meta| Value::Object(meta.0.clone()));
        let meta = meta.unwrap_or_default();
        assert_eq!(
            meta["category"], want["annotations"]["category"],
            "category of {name}"
        );
        assert_eq!(
            meta.get("conditions"),
            want["annotations"].get("conditions"),
            "conditions of {name}"
        );
        let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint);
        assert_eq!(
            read_only,
            want["annotations"]["readOnlyHint"].as_bool(),
            "readOnlyHint of {name}"
        );
    }
    server.shutdown().await;
}

#[tokio::test]
async fn flags_change_the_list_as_in_1_11_0() {
    let parameters = |tools: &[rmcp::model::Tool], name: &str| -> Vec<String> {
        tools
            .iter()
            .find(|tool| tool.name == name)
            .map(|tool| names(&Value::Object((*tool.input_schema).clone()), "properties"))
            .unwrap_or_default()
    };
    // The harness turns routing off for the older tests; the old flag name turns it back on.
    let routed = McpServer::start(&["--experimentalPageIdRouting"]).await;
    let tools = routed.list_tools().await;
    assert_eq!(parameters(&tools, "click")[0], "pageId");
    assert_eq!(parameters(&tools, "evaluate_script")[0], "pageId");
    assert!(
        !tools
            .iter()
            .any(|tool| ["screenshot", "navigate", "evaluate"].contains(&tool.name.as_ref()))
    );
    routed.shutdown().await;

    let unrouted = McpServer::start(&[]).await;
    let tools = unrouted.list_tools().await;
    assert_eq!(
        parameters(&tools, "click"),
        ["uid", "dblClick", "includeSnapshot"]
    );
    assert!(!parameters(&tools, "evaluate_script").contains(&"pageId".to_string()));
    unrouted.shutdown().await;

    let no_scripts = McpServer::start_routed(&["--no-javascript-evaluation"]).await;
    let tools = no_scripts.list_tools().await;
    assert!(!tools.iter().any(|tool| tool.name == "evaluate_script"));
    assert!(!parameters(&tools, "navigate_page").contains(&"initScript".to_string()));
    let refused = no_scripts
        .call(
            "navigate_page",
            json!({"pageId": 1, "url": "javascript:alert(1)"}),
        )
        .await;
    assert!(refused.is_error);
    assert_eq!(
        refused.text,
        "Error: Navigating to javascript: URLs is not allowed when JavaScript evaluation is disabled."
    );
    no_scripts.shutdown().await;

    let slim = McpServer::start(&["--slim"]).await;
    let tools: Vec<String> = slim
        .list_tools()
        .await
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert_eq!(tools, ["evaluate", "navigate", "screenshot"]);
    slim.shutdown().await;
}

/// `initialize` declares what 1.11.0 declares (tools whose list may change, logging), whatever
/// the flags, and `logging/setLevel` is accepted as 1.11.0 accepts it.
#[tokio::test]
async fn initialize_declares_the_capabilities_of_1_11_0() {
    if !crate::support::reference::reference_ready("the capabilities comparison with 1.11.0") {
        return;
    }
    let reference = crate::support::reference::start_reference(&[]).await;
    let ours = McpServer::start(&[]).await;
    assert_eq!(ours.capabilities(), reference.capabilities());
    assert_eq!(
        ours.capabilities(),
        serde_json::json!({"logging": {}, "tools": {"listChanged": true}})
    );
    assert_eq!(reference.set_log_level().await, Ok(()));
    assert_eq!(ours.set_log_level().await, Ok(()));
    reference.shutdown().await;
    ours.shutdown().await;
}

/// The four DevTools-comment tools (hidden `--devtoolsComments`) answer exactly as 1.11.0 does
/// on the same Chromium: before a DevTools window is open, on opening one, and after.
#[tokio::test]
async fn devtools_comment_tools_answer_as_1_11_0() {
    use crate::support::reference::{reference_ready, start_reference};
    if !reference_ready("the DevTools comments comparison with 1.11.0") {
        return;
    }
    let theirs = start_reference(&["--devtoolsComments"]).await;
    let ours = McpServer::start_routed(&["--devtoolsComments"]).await;
    let steps = [
        ("get_devtools_comments", serde_json::json!({"pageId": 1})),
        (
            "resolve_devtools_comment",
            serde_json::json!({"pageId": 1, "threadId": "comment-1", "replyText": "done"}),
        ),
        (
            "reveal_in_devtools",
            serde_json::json!({"pageId": 1, "panelName": "elements"}),
        ),
        ("open_devtools", serde_json::json!({"pageId": 1})),
        ("get_devtools_comments", serde_json::json!({"pageId": 1})),
        (
            "resolve_devtools_comment",
            serde_json::json!({"pageId": 1, "threadId": "comment-1"}),
        ),
        (
            "reveal_in_devtools",
            serde_json::json!({"pageId": 1, "reqid": 1}),
        ),
        ("open_devtools", serde_json::json!({"pageId": 1})),
    ];
    for (tool, arguments) in steps {
        let expected = theirs.call(tool, arguments.clone()).await;
        let answer = ours.call(tool, arguments).await;
        assert_eq!(
            (answer.is_error, answer.text.as_str()),
            (expected.is_error, expected.text.as_str()),
            "{tool}"
        );
    }
    theirs.shutdown().await;
    ours.shutdown().await;
}
