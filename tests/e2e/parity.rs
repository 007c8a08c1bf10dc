//! The default tool list against the reference's (kept as test data): same names and
//! parameters, except what README says we do not offer.

use crate::support::McpServer;
use serde_json::Value;

/// Tools of the reference's default set we do not offer, with the reason given in README.
const NOT_OFFERED: [&str; 0] = [];
/// Parameters we add on purpose (the issue asks every input tool to take includeSnapshot).
const EXTRA_PARAMETERS: [(&str, &str); 1] = [("type_text", "includeSnapshot")];

#[tokio::test]
async fn the_default_tools_match_the_reference() {
    let data: Value =
        serde_json::from_str(include_str!("../data/reference-tools.json")).expect("test data");
    let reference = data["tools"].as_object().expect("tools");
    let server = McpServer::start(&[]).await;
    let tools = server.list_tools().await;
    let ours: Vec<String> = tools.iter().map(|tool| tool.name.to_string()).collect();
    let expected: Vec<String> = reference
        .keys()
        .filter(|name| !NOT_OFFERED.contains(&name.as_str()))
        .cloned()
        .collect();
    assert_eq!(
        ours, expected,
        "tool names (sorted) differ from the reference's default set"
    );
    for tool in &tools {
        let parameters: Vec<String> = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default();
        let mut want: Vec<String> = reference[tool.name.as_ref()]
            .as_array()
            .map(|names| {
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        for (name, extra) in EXTRA_PARAMETERS {
            if name == tool.name {
                want.push(extra.to_string());
            }
        }
        assert_eq!(parameters, want, "parameters of {}", tool.name);
    }
    server.shutdown().await;
}
