//! Contract 0.3.1: a plugin's structured result, checked before the answer leaves. A tool that
//! declared an output schema must set a result on success, and the result must validate
//! against that schema (with the host's one bounded validator, as arguments are); a tool that
//! declared none may not set one. Each failure is the call's error, addressed to the author.

use crate::pipeline::tools::ToolEntry;
use crate::response::ResponseDraft;
use serde_json::Value;

/// How many validation errors a refusal lists.
const ERRORS_SHOWN: usize = 5;

/// Validates the result `draft` carries and moves it to `draft.result`; the error says why not.
pub async fn check(tool: &ToolEntry, draft: &mut ResponseDraft) -> Option<String> {
    let name = tool.definition().name.as_str();
    let plugin = tool.loaded.source.display();
    let text = draft.structured_result.take();
    let (validator, text) = match (&tool.result_validator, text) {
        (None, None) => return None,
        (None, Some(_)) => {
            return Some(format!(
                "The plugin {plugin} set a structured result for {name}, but it declared no output schema. Declare one in its definition (response.declare-output-schema, or the SDK's output type), or stop setting a result."
            ));
        }
        (Some(_), None) => {
            return Some(format!(
                "The plugin {plugin} declares an output schema for {name}, but its handler set no structured result. Set one on every success (response.set-structured-result, or the SDK's structured answer)."
            ));
        }
        (Some(validator), Some(text)) => (validator.clone(), text),
    };
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => {
            return Some(format!(
                "The plugin {plugin} set a structured result for {name} that is not JSON ({error}). Set a JSON object."
            ));
        }
    };
    // Off the async workers and under a deadline, as costly argument checks are.
    let checked = value.clone();
    let problems = crate::engine::run(
        "validating a structured result",
        crate::schema::VALIDATION_DEADLINE,
        move |_| problems(&validator, &checked),
    )
    .await
    .unwrap_or_else(|_| {
        vec![format!(
            "validating it took longer than {} s",
            crate::schema::VALIDATION_DEADLINE.as_secs()
        )]
    });
    if !problems.is_empty() {
        return Some(format!(
            "The plugin {plugin} set a structured result for {name} that does not match its output schema: {}. Fix the result, or the schema it declares.",
            problems.join("; ")
        ));
    }
    draft.result = Some(value);
    None
}

/// The first validation errors, each with where in the result it is.
fn problems(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    let mut problems: Vec<String> = validator
        .iter_errors(value)
        .take(ERRORS_SHOWN)
        .map(|error| {
            let path = error.instance_path().to_string();
            let at = if path.is_empty() { "/" } else { &path };
            format!("at {at}: {error}")
        })
        .collect();
    if problems.len() == ERRORS_SHOWN {
        problems.push("(and maybe more)".into());
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn problems_name_where_the_result_is_wrong() {
        let Value::Object(schema) =
            json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}})
        else {
            unreachable!("a JSON object literal")
        };
        let validator = crate::schema::compile(&schema).expect("valid");
        assert!(problems(&validator, &json!({"n": 2})).is_empty());
        let found = problems(&validator, &json!({"n": "two"}));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("at /n: "), "{found:?}");
        let missing = problems(&validator, &json!({}));
        assert!(missing[0].starts_with("at /: "), "{missing:?}");
    }
}
