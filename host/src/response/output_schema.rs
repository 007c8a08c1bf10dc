//! The `outputSchema` every tool declares: the shape of the `structuredContent` the response
//! assembly gives it. Every tool's answer (built-in or plugin) is assembled by the one
//! [`super::Assembly`], so one schema describes them all; `--slim` answers have their own.
//! It is strict at the top (no key the assembly does not write) so a new key that is not
//! declared here fails the contract test that validates every tool's answer against it.
//!
//! Declared where a client can use it: under protocol 2026-07-28 always, and under older
//! revisions with 1.11.0's `--experimentalStructuredContent` (without it the list stays
//! 1.11.0's, which declares none).

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};
use std::sync::{Arc, LazyLock};

/// A download of `## Downloads`.
fn download_row() -> Value {
    json!({
        "type": "object",
        "required": ["name", "url", "state"],
        "properties": {
            "name": {"type": "string"},
            "url": {"type": "string"},
            "state": {"enum": ["completed", "failed", "inProgress"]},
            "size": {"type": "integer", "minimum": 0},
            "type": {"type": "string"},
            "path": {"type": "string"},
            "error": {"type": "string"}
        },
        "additionalProperties": false
    })
}

/// A page row of `## Pages` / `## New pages` / `## Extension Pages`.
fn page_row() -> Value {
    json!({
        "type": "object",
        "required": ["id", "url", "title", "selected"],
        "properties": {
            "id": {"type": "integer", "minimum": 0},
            "url": {"type": "string"},
            "title": {"type": "string", "description": "Written by the page."},
            "selected": {"type": "boolean"},
            "isolatedContext": {"type": "string"}
        },
        "additionalProperties": false
    })
}

/// `pageSize`/`pageIdx` pagination of a listing.
/// One match of `## Found in page` (kept apart: `json!` nests only so deep).
fn found_item() -> Value {
    let strings = json!({"type": "array", "items": {"type": "string"}});
    json!({
        "type": "object",
        "required": ["uid", "line", "path", "next"],
        "properties": {
            "uid": {"type": "string"},
            "line": {"type": "string"},
            "path": strings,
            "next": strings
        }
    })
}

fn pagination() -> Value {
    json!({
        "type": "object",
        "description": "Which part of the list this answer holds.",
        "additionalProperties": true
    })
}

fn object(description: &str) -> Value {
    json!({"type": "object", "description": description})
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// `outputBudget`: what `--maxOutputTokens` cut or left out of an answer.
fn output_budget() -> Value {
    json!({
        "type": "object",
        "description": "Under --maxOutputTokens: what the budget cut or left out of this answer, and how to get it.",
        "properties": {
            "leftOutLines": {"type": "integer", "minimum": 0},
            "leftOutTokens": {"type": "integer", "minimum": 0, "description": "Estimated, one token per 3 bytes."},
            "cursor": string("Call the same tool with {\"cursor\": this} for the next piece."),
            "resource": string("The whole text, by resources/read, in this session."),
            "omitted": {"type": "array", "items": {"type": "string"}, "description": "Keys of this structured content left out for size."},
            "continued": {"type": "boolean", "description": "This answer is a piece asked for by cursor."}
        },
        "additionalProperties": false
    })
}

/// The schema of a full (not `--slim`) answer's structured content.
fn full_schema() -> JsonObject {
    let mut properties = json!({
        "message": string("The tool's own lines, joined with newlines (the text's first part)."),
        "reconnected": {"type": "boolean", "description": "The browser was restarted or reconnected since the last call; page ids changed."},
        "untrustedContent": {
            "type": "object",
            "description": "Under --experimentalFencePageContent: the marker of this answer's fences and the keys whose text a page wrote.",
            "required": ["marker", "sections"],
            "properties": {
                "marker": {"type": "string"},
                "sections": {"type": "array", "items": {"type": "string"}}
            },
            "additionalProperties": false
        },
        "tabId": string("get_tab_id: the tab's id."),
        "navigatedToUrl": string("An action of this call navigated the page here."),
        "networkConditions": string("Emulated network conditions."),
        "navigationTimeout": {"type": "number", "description": "Default navigation timeout in ms under network emulation."},
        "geolocation": {
            "type": "object",
            "required": ["latitude", "longitude"],
            "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"}}
        },
        "viewport": object("Emulated viewport."),
        "userAgent": string("Emulated user agent."),
        "cpuThrottlingRate": {"type": "number", "minimum": 1},
        "colorScheme": string("Emulated color scheme."),
        "forcedColors": string("Emulated forced-colors."),
        "prefersContrast": string("Emulated prefers-contrast."),
        "prefersReducedMotion": string("Emulated prefers-reduced-motion."),
        "dialog": {
            "type": "object",
            "description": "The page's open dialog: handle it with handle_dialog.",
            "required": ["type", "message"],
            "properties": {
                "type": {"type": "string"},
                "message": {"type": "string"},
                "defaultValue": {"type": "string"}
            },
            "additionalProperties": false
        },
        "pages": {"type": "array", "items": page_row()},
        "newPages": {"type": "array", "items": page_row(), "description": "--experimentalNewPages: the pages this call opened."},
        "extensionPages": {"type": "array", "items": page_row()},
        "extensionServiceWorkers": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "url"],
                "properties": {"id": {"type": ["string", "integer"]}, "url": {"type": "string"}}
            }
        },
        "snapshot": object("The page's accessibility tree: {id, role, name, ...attributes, children}."),
        "snapshotFilePath": string("Where the snapshot was saved."),
        "found": {
            "type": "object",
            "required": ["total", "items"],
            "properties": {
                "total": {"type": "integer", "minimum": 0},
                "items": {"type": "array", "items": found_item()}
            }
        },
        "pagination": pagination(),
        "consoleMessages": {"type": "array", "items": {"type": "object"}},
        "consoleMessage": object("One console message or DevTools issue in detail."),
        "networkRequests": {"type": "array", "items": {"type": "object"}},
        "networkRequest": object("One network request in detail."),
        "errorMessage": string("Why the tool failed."),
        "outputBudget": output_budget()
    });
    properties["recovered"] = json!({
        "type": "string",
        "description": "--experimentalRecovery: the browser had stopped and was started again; the pages reopened, once."
    });
    properties["downloads"] = json!({
        "type": "array",
        "items": download_row(),
        "description": "--experimentalDownloads: the downloads that finished (or are still arriving) since the last answer."
    });
    let Value::Object(schema) = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false
    }) else {
        unreachable!("a JSON object literal")
    };
    schema
}

/// The schema of a `--slim` answer: its text item again.
fn slim_schema() -> JsonObject {
    let Value::Object(schema) = json!({
        "type": "object",
        "required": ["type", "text"],
        "properties": {
            "type": {"const": "text"},
            "text": {"type": "string"}
        },
        "additionalProperties": false
    }) else {
        unreachable!("a JSON object literal")
    };
    schema
}

static FULL: LazyLock<Arc<JsonObject>> = LazyLock::new(|| Arc::new(full_schema()));
static SLIM: LazyLock<Arc<JsonObject>> = LazyLock::new(|| Arc::new(slim_schema()));

/// The output schema of every answer the server assembles (`slim`: under `--slim`).
pub fn of_answers(slim: bool) -> Arc<JsonObject> {
    match slim {
        true => SLIM.clone(),
        false => FULL.clone(),
    }
}

/// `tools` as listed to a client that gets structured content: each with its output schema.
/// A plugin that declared its own (contract 0.3.1; carried in the listing's `output_schema`)
/// gets the host's schema with its own under `result`: the host's keys (pages, downloads,
/// the budget's notes...) stay beside it and neither can shadow the other. `result` is not
/// required, since an error answer has none; the host refuses a success without it.
pub fn declared(tools: Vec<Tool>, slim: bool) -> Vec<Tool> {
    let schema = of_answers(slim);
    tools
        .into_iter()
        .map(|tool| match tool.output_schema.clone() {
            Some(own) => tool.with_raw_output_schema(Arc::new(with_result(&schema, &own))),
            None => tool.with_raw_output_schema(schema.clone()),
        })
        .collect()
}

/// `tools` as listed to a client that gets no structured content: no output schema at all,
/// a plugin's own included (the list stays 1.11.0's).
pub fn undeclared(tools: Vec<Tool>) -> Vec<Tool> {
    tools
        .into_iter()
        .map(|mut tool| {
            tool.output_schema = None;
            tool
        })
        .collect()
}

/// The host's answer schema with a plugin's result schema as its `result` property.
fn with_result(answers: &JsonObject, own: &JsonObject) -> JsonObject {
    let mut schema = answers.clone();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.insert("result".into(), Value::Object(own.clone()));
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_schemas_are_objects_a_validator_accepts() {
        for slim in [false, true] {
            let schema = of_answers(slim);
            assert_eq!(schema["type"], "object", "MCP requires an object schema");
            let text = Value::Object((*schema).clone()).to_string();
            crate::schema::parse(&text).expect("the host's validator accepts it");
        }
    }

    #[test]
    fn a_plugin_schema_sits_under_result_beside_the_hosts_keys() {
        let own =
            json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}});
        let Value::Object(own) = own else {
            unreachable!("a JSON object literal")
        };
        for slim in [false, true] {
            let combined = Value::Object(with_result(&of_answers(slim), &own));
            let validator = jsonschema::validator_for(&combined).expect("a valid schema");
            let base = match slim {
                true => json!({"type": "text", "text": "x"}),
                false => json!({"message": "x"}),
            };
            let mut good = base.clone();
            good["result"] = json!({"n": 3});
            assert!(validator.is_valid(&good), "{good}");
            let mut bad = base.clone();
            bad["result"] = json!({"n": "three"});
            assert!(!validator.is_valid(&bad), "{bad}");
        }
    }

    #[test]
    fn an_undeclared_key_is_refused() {
        let validator = jsonschema::validator_for(&Value::Object((*of_answers(false)).clone()))
            .expect("a valid schema");
        assert!(validator.is_valid(&json!({"message": "ok", "pages": []})));
        assert!(!validator.is_valid(&json!({"message": "ok", "surprise": 1})));
        assert!(!validator.is_valid(&json!({"pages": [{"id": 1}]})));
    }
}
