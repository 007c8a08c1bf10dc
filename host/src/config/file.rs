//! `--config FILE`: a JSON object of options named like the flags (camelCase, as the
//! reference 1.11.0 reads it). The file's options become flags before the command line's, so
//! the command line wins and every value goes through the same parsing and checks.

use super::Args;
use clap::CommandFactory;
use serde_json::{Map, Value};
use std::path::Path;

/// The options of the file, refusing anything but a JSON object of known option names.
pub fn read(path: &Path) -> Result<Map<String, Value>, String> {
    let invalid = |reason: String| format!("Invalid JSON config file {}: {reason}", path.display());
    let text = std::fs::read_to_string(path).map_err(|error| invalid(error.to_string()))?;
    let value: Value = serde_json::from_str(&text).map_err(|error| invalid(error.to_string()))?;
    let Value::Object(options) = value else {
        return Err(invalid("Config must be a JSON object".into()));
    };
    let known = known_names();
    if let Some(unknown) = options
        .keys()
        .find(|key| !known.contains(&super::kebab(key)))
    {
        return Err(invalid(format!("Unknown argument: {unknown}")));
    }
    if options.contains_key("config") {
        return Err(invalid("a config file cannot name another one".into()));
    }
    Ok(options)
}

/// `argv` with the file's options appended as flags, except those the command line sets
/// itself (the command line wins).
pub fn with_options(argv: Vec<String>, options: &Map<String, Value>) -> Vec<String> {
    let given: Vec<String> = argv
        .iter()
        .filter_map(|arg| arg.strip_prefix("--"))
        .map(|flag| {
            let name = super::kebab(flag.split('=').next().unwrap_or(flag));
            name.strip_prefix("no-").map(str::to_string).unwrap_or(name)
        })
        .collect();
    let mut out = argv;
    for (key, value) in options {
        let name = super::kebab(key);
        if given.contains(&name) {
            continue;
        }
        for text in values(value) {
            out.push(format!("--{name}={text}"));
        }
    }
    out
}

/// The first line of a clap error, without its `error: ` prefix.
pub fn first_line(message: &str) -> String {
    let line = message.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

fn values(value: &Value) -> Vec<String> {
    match value {
        Value::Null => Vec::new(),
        Value::String(text) => vec![text.clone()],
        Value::Array(items) => items.iter().flat_map(values).collect(),
        // `wsHeaders` may be written as an object rather than as JSON text.
        Value::Object(_) | Value::Bool(_) | Value::Number(_) => vec![value.to_string()],
    }
}

/// Every long flag name and alias, kebab-case.
fn known_names() -> Vec<String> {
    let command = Args::command();
    command
        .get_arguments()
        .flat_map(|argument| {
            let mut names: Vec<String> =
                argument.get_long().map(String::from).into_iter().collect();
            names.extend(
                argument
                    .get_all_aliases()
                    .unwrap_or_default()
                    .into_iter()
                    .map(String::from),
            );
            names
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn options(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_command_line_wins_over_the_file() {
        let argv = ["devtools-mcp", "--no-category-network", "--headless"].map(String::from);
        let merged = with_options(
            argv.to_vec(),
            &options(
                json!({"categoryNetwork": true, "screenshotFormat": "jpeg", "workspace": ["/a", "/b"]}),
            ),
        );
        assert_eq!(
            merged[3..],
            [
                "--screenshot-format=jpeg",
                "--workspace=/a",
                "--workspace=/b"
            ]
        );
    }

    #[test]
    fn unknown_options_and_non_objects_are_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("config.json");
        std::fs::write(&file, r#"{"bogusOption": true}"#).expect("write");
        let error = read(&file).expect_err("unknown option");
        assert!(error.ends_with("Unknown argument: bogusOption"), "{error}");
        std::fs::write(&file, "[1]").expect("write");
        let error = read(&file).expect_err("not an object");
        assert!(error.ends_with("Config must be a JSON object"), "{error}");
        std::fs::write(
            &file,
            r#"{"memoryDebugging": true, "experimentalMemory": true}"#,
        )
        .expect("write");
        assert!(read(&file).is_ok());
    }
}
