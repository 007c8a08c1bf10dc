//! Gating: which tools the server's flags enable, and the reference's message for a disabled
//! tool called with CLI semantics.

use crate::runtime::definition::category_info;
use crate::runtime::{Category, ToolDefinition};
use serde_json::{Map, Value};

/// `experimentalWebmcp` -> `categoryExperimentalWebmcp`.
pub fn category_flag(category: Category) -> String {
    let (name, _, _) = category_info(category);
    let mut characters = name.chars();
    match characters.next() {
        Some(first) => format!(
            "category{}{}",
            first.to_ascii_uppercase(),
            characters.as_str()
        ),
        None => "category".into(),
    }
}

fn truthy(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Bool(value)) => *value,
        Some(Value::String(value)) => !value.is_empty(),
        Some(Value::Number(value)) => value.as_f64().is_some_and(|n| n != 0.0),
        Some(Value::Array(values)) => !values.is_empty(),
        Some(Value::Object(_)) => true,
        Some(Value::Null) | None => false,
    }
}

/// `None` when the tool is enabled; otherwise the message a CLI caller gets.
pub fn disabled_message(definition: &ToolDefinition, flags: &Map<String, Value>) -> Option<String> {
    let category = definition.annotations.category;
    let (_, label, off_by_default) = category_info(category);
    let flag = category_flag(category);
    let value = flags.get(&flag);
    let category_disabled = if off_by_default {
        !truthy(value)
    } else {
        value == Some(&Value::Bool(false))
    };
    let (reason, flag) = if category_disabled {
        (format!("is in category {label} which"), flag)
    } else {
        let condition = definition
            .annotations
            .conditions
            .iter()
            .find(|condition| !truthy(flags.get(condition.as_str())))?;
        // The reference says "experimental feature" for --experimental* flags only.
        let kind = if condition.starts_with("experimental") {
            "experimental feature"
        } else {
            "flag"
        };
        (
            format!("requires {kind} --{condition} and"),
            condition.clone(),
        )
    };
    Some(format!(
        "Tool {} {reason} is currently disabled. Enable it by running devtools-mcp --{flag}=true. For more information check the README.",
        definition.name
    ))
}

/// The verdict for a session whose own flags (a tenant's) are laid over the server's: the
/// server's verdict stands, and the session's flags can only disable more, never enable a tool
/// the server's flags leave off (a tenant's tool set is the server's, narrowed).
pub fn narrowed(
    server_verdict: Option<&str>,
    definition: &ToolDefinition,
    session_flags: &Map<String, Value>,
) -> Option<String> {
    match server_verdict {
        Some(verdict) => Some(verdict.to_string()),
        None => disabled_message(definition, session_flags),
    }
}

/// Whether `flags` turn on what the flag `name` gates: a category (with its default, as
/// [`disabled_message`] reads it) or a condition (`memoryDebugging`, `experimentalX`).
pub fn enables(flags: &Map<String, Value>, name: &str) -> bool {
    let category = crate::runtime::definition::CATEGORIES
        .into_iter()
        .find(|category| category_flag(*category) == name);
    match category {
        Some(category) => {
            let (_, _, off_by_default) = category_info(category);
            let value = flags.get(name);
            if off_by_default {
                truthy(value)
            } else {
                value != Some(&Value::Bool(false))
            }
        }
        None => truthy(flags.get(name)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::bindings_for_tests::definition;
    use serde_json::json;

    fn flags(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn flag_names_follow_the_reference() {
        assert_eq!(
            category_flag(Category::ExperimentalWebmcp),
            "categoryExperimentalWebmcp"
        );
        assert_eq!(category_flag(Category::Network), "categoryNetwork");
    }

    #[test]
    fn on_by_default_categories_are_disabled_only_by_false() {
        let tool = definition("list_network_requests", Category::Network, &[]);
        assert_eq!(disabled_message(&tool, &flags(json!({}))), None);
        assert_eq!(
            disabled_message(&tool, &flags(json!({"categoryNetwork": true}))),
            None
        );
        assert_eq!(
            disabled_message(&tool, &flags(json!({"categoryNetwork": false}))).as_deref(),
            Some(
                "Tool list_network_requests is in category Network which is currently disabled. Enable it by running devtools-mcp --categoryNetwork=true. For more information check the README."
            )
        );
    }

    #[test]
    fn off_by_default_categories_need_their_flag() {
        let tool = definition("install_extension", Category::Extensions, &[]);
        assert!(disabled_message(&tool, &flags(json!({}))).is_some());
        assert_eq!(
            disabled_message(&tool, &flags(json!({"categoryExtensions": true}))),
            None
        );
    }

    #[test]
    fn conditions_name_the_experimental_flag() {
        let tool = definition("click_at", Category::Input, &["experimentalVision"]);
        assert_eq!(
            disabled_message(&tool, &flags(json!({}))).as_deref(),
            Some(
                "Tool click_at requires experimental feature --experimentalVision and is currently disabled. Enable it by running devtools-mcp --experimentalVision=true. For more information check the README."
            )
        );
        assert_eq!(
            disabled_message(&tool, &flags(json!({"experimentalVision": true}))),
            None
        );
    }

    #[test]
    fn other_conditions_name_the_flag() {
        let tool = definition(
            "evaluate_script",
            Category::Debugging,
            &["javascriptEvaluation"],
        );
        assert_eq!(
            disabled_message(&tool, &flags(json!({"javascriptEvaluation": false}))).as_deref(),
            Some(
                "Tool evaluate_script requires flag --javascriptEvaluation and is currently disabled. Enable it by running devtools-mcp --javascriptEvaluation=true. For more information check the README."
            )
        );
    }

    #[test]
    fn every_category_can_be_switched_off_as_in_1_11_0() {
        let tool = definition("click", Category::Input, &[]);
        assert_eq!(disabled_message(&tool, &flags(json!({}))), None);
        assert!(disabled_message(&tool, &flags(json!({"categoryInput": false}))).is_some());
    }
    #[test]
    fn a_session_flag_never_enables_what_the_server_leaves_off() {
        let tool = definition("install_extension", Category::Extensions, &[]);
        let server = disabled_message(&tool, &flags(json!({})));
        assert!(server.is_some());
        let widened = flags(json!({"categoryExtensions": true}));
        assert_eq!(narrowed(server.as_deref(), &tool, &widened), server);
        let heap = definition(
            "get_heapsnapshot_summary",
            Category::Memory,
            &["memoryDebugging"],
        );
        let server = disabled_message(&heap, &flags(json!({})));
        let widened = flags(json!({"memoryDebugging": true}));
        assert_eq!(narrowed(server.as_deref(), &heap, &widened), server);
        // Narrowing works: the server enables, the session's flags switch off.
        let click = definition("click", Category::Input, &[]);
        assert!(narrowed(None, &click, &flags(json!({"categoryInput": false}))).is_some());
        assert!(narrowed(None, &click, &flags(json!({}))).is_none());
    }

    #[test]
    fn enables_reads_categories_with_their_defaults_and_conditions_as_set() {
        let none = flags(json!({}));
        assert!(enables(&none, "categoryNetwork"));
        assert!(!enables(&none, "categoryExtensions"));
        assert!(!enables(&none, "memoryDebugging"));
        assert!(!enables(
            &flags(json!({"categoryNetwork": false})),
            "categoryNetwork"
        ));
        assert!(enables(
            &flags(json!({"memoryDebugging": true})),
            "memoryDebugging"
        ));
    }
}
