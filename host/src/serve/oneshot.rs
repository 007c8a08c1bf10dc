//! The one-shot CLI: `devtools-mcp call <tool> '<json>'` and `devtools-mcp tools`, with the
//! reference's CLI semantics (disabled tools are listed and explain how to enable them).

use crate::pipeline::{CallError, Pipeline};
use crate::session::Session;
use rmcp::model::ContentBlock;
use serde_json::{Map, Value};
use std::time::Duration;

/// Runs one tool and prints its text; images are reported by type and size. Exit code 1 when
/// the tool answered with an error.
pub async fn call(
    pipeline: &Pipeline,
    session: &Session,
    tool: &str,
    params: Option<&str>,
) -> Result<bool, String> {
    let arguments = parse_params(params)?;
    let result = pipeline.call(session, tool, Some(arguments)).await;
    session.shutdown(Duration::from_millis(700)).await;
    let result = result.map_err(|error| match error {
        CallError::UnknownTool(name) => {
            format!("Tool {name} not found. Run `devtools-mcp tools` to list the tools.")
        }
    })?;
    print(&result);
    Ok(result.is_error != Some(true))
}

/// Prints a call's answer: its text, and each image by type and size.
pub fn print(result: &rmcp::model::CallToolResult) {
    for block in &result.content {
        match block {
            ContentBlock::Text(text) => println!("{}", text.text),
            ContentBlock::Image(image) => {
                println!(
                    "[image {}, {} base64 characters]",
                    image.mime_type,
                    image.data.len()
                )
            }
            _ => {}
        }
    }
}

/// One line per tool: name, category, and `enabled` or why it is disabled.
pub fn tools(pipeline: &Pipeline) {
    for tool in pipeline.tools.current().iter() {
        let category = tool
            .listing
            .meta
            .as_ref()
            .and_then(|meta| meta.0.get("category"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let status = match &tool.disabled {
            None => "enabled".to_string(),
            Some(message) => format!("disabled: {message}"),
        };
        println!("{}\t{category}\t{status}", tool.definition().name);
    }
}

pub fn parse_params(params: Option<&str>) -> Result<Map<String, Value>, String> {
    let Some(text) = params else {
        return Ok(Map::new());
    };
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(format!(
            "The parameters must be a JSON object, e.g. '{{\"url\": \"...\"}}'; got: {text}"
        )),
        Err(error) => Err(format!(
            "The parameters are not valid JSON ({error}): {text}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_params;

    #[test]
    fn parameters_must_be_a_json_object() {
        assert!(parse_params(None).is_ok_and(|map| map.is_empty()));
        assert!(parse_params(Some("{\"url\": \"x\"}")).is_ok_and(|map| map.len() == 1));
        assert!(
            parse_params(Some("[1]")).is_err_and(|error| error.contains("must be a JSON object"))
        );
        assert!(parse_params(Some("{oops")).is_err_and(|error| error.contains("not valid JSON")));
    }
}
