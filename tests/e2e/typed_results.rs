//! Typed results (issue 46): every tool declares an `outputSchema` where a client can use it,
//! and every answer's `structuredContent` validates against the schema its tool declared.
//!
//! The contract test enumerates: it lists every tool with every category flag on, runs the
//! differential scenario (every default tool, on real pages, errors and dialogs included), then
//! calls each listed tool the scenario did not, and validates every answer. A tool added later
//! is called by this test without anyone listing it.

use crate::differential::{Side, fixture_pages, scenario, scenario_args, scenario_workspace};
use crate::support::McpServer;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// Every category and condition flag 1.11.0 has (tests/data's `all_flags`), and ours.
const EVERY_FLAG: &[&str] = &[
    "--categoryExtensions",
    "--categoryExperimentalThirdParty",
    "--categoryExperimentalWebmcp",
    "--categoryPwa",
    "--experimentalVision",
    "--memoryDebugging",
    "--devtoolsComments",
    "--experimentalInteropTools",
    "--experimentalNewPages",
    "--experimentalFencePageContent",
];

pub(crate) fn validators(tools: &[rmcp::model::Tool]) -> BTreeMap<String, jsonschema::Validator> {
    tools
        .iter()
        .map(|tool| {
            let schema = tool
                .output_schema
                .as_ref()
                .unwrap_or_else(|| panic!("{} declares no outputSchema", tool.name));
            let validator = jsonschema::validator_for(&Value::Object((**schema).clone()))
                .unwrap_or_else(|error| panic!("{}'s outputSchema: {error}", tool.name));
            (tool.name.to_string(), validator)
        })
        .collect()
}

/// Why `answer` of `tool` breaks its contract, if it does: a success must carry structured
/// content; any structured content must validate.
pub(crate) fn violation(
    validators: &BTreeMap<String, jsonschema::Validator>,
    tool: &str,
    answer: &Result<crate::support::ToolOutput, String>,
) -> Option<String> {
    let Ok(output) = answer else {
        return None;
    };
    let Some(structured) = &output.structured else {
        return (!output.is_error).then(|| {
            format!(
                "{tool}: a success without structuredContent: {}",
                output.text
            )
        });
    };
    let errors: Vec<String> = validators[tool]
        .iter_errors(structured)
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect();
    (!errors.is_empty()).then(|| format!("{tool}: {} ({structured})", errors.join("; ")))
}

#[tokio::test]
async fn every_tools_answer_validates_against_its_declared_output_schema() {
    let pages = fixture_pages();
    let workspace = scenario_workspace();
    let mut args = scenario_args();
    args.push("--experimentalStructuredContent".into());
    args.extend(EVERY_FLAG.iter().map(|flag| flag.to_string()));
    let server = McpServer::start_with(args, Vec::new())
        .await
        .unwrap_or_else(|message| panic!("{message}"));
    let tools = server.list_tools().await;
    assert!(
        tools.len() >= 50,
        "every flag on lists {} tools",
        tools.len()
    );
    let validators = validators(&tools);

    let mut side = Side::new("ours", server);
    let mut called = BTreeSet::new();
    let mut succeeded = BTreeSet::new();
    let mut violations = Vec::new();
    for step in scenario(&pages, workspace.path()) {
        side.run(&step).await;
        called.insert(step.tool.to_string());
        if matches!(&side.output, Ok(output) if !output.is_error) {
            succeeded.insert(step.tool.to_string());
        }
        violations.extend(violation(&validators, step.tool, &side.output));
    }
    // The tools the scenario does not reach: called with no arguments (an answer, success or
    // refusal, that must keep the contract all the same).
    for tool in validators.keys().filter(|tool| !called.contains(*tool)) {
        let answer = side.server.call_raw(tool, json!({})).await;
        violations.extend(violation(&validators, tool, &answer));
    }
    assert!(
        violations.is_empty(),
        "answers that break their tool's outputSchema:\n{}",
        violations.join("\n")
    );
    assert!(
        succeeded.len() >= 25,
        "the scenario must succeed with most default tools, not only fail: {succeeded:?}"
    );
    side.server.shutdown().await;
}

/// The default list stays 1.11.0's (no output schema, no structured content) for a client of
/// an older revision; the flag turns both on.
#[tokio::test]
async fn output_schemas_are_declared_only_where_a_client_gets_structured_content() {
    let pages = fixture_pages();
    let plain = McpServer::start(&[]).await;
    assert!(
        plain
            .list_tools()
            .await
            .iter()
            .all(|tool| tool.output_schema.is_none())
    );
    let answer = plain.call("new_page", json!({"url": pages.url("/")})).await;
    assert!(!answer.is_error, "{}", answer.text);
    assert_eq!(answer.structured, None);
    plain.shutdown().await;

    let typed = McpServer::start(&["--experimentalStructuredContent"]).await;
    let tools = typed.list_tools().await;
    assert!(tools.iter().all(|tool| tool.output_schema.is_some()));
    let answer = typed.call("new_page", json!({"url": pages.url("/")})).await;
    let pages_listed = &answer.structured.expect("structured content")["pages"];
    assert_eq!(pages_listed[1]["title"], "Fixture", "{pages_listed}");
    typed.shutdown().await;

    let slim = McpServer::start(&["--slim", "--experimentalStructuredContent"]).await;
    let tools = slim.list_tools().await;
    let validators = validators(&tools);
    let answer = slim
        .call_raw("navigate", json!({"url": pages.url("/")}))
        .await;
    assert_eq!(violation(&validators, "navigate", &answer), None);
    assert!(answer.expect("an answer").structured.is_some());
    slim.shutdown().await;
}
