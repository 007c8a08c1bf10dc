//! `--config FILE`: a JSON object of options named like the flags (camelCase, as the
//! reference 1.11.0 reads it). The file's options become flags before the command line's, so
//! the command line wins and every value goes through the same parsing and checks.

use crate::catalog::Catalog;
use crate::cli::Args;
use crate::pipeline::Pipeline;
use clap::CommandFactory;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Events closer together than this are one change (editors save in steps).
const SETTLE: Duration = Duration::from_millis(200);
/// Options the reference 1.11.0 does not reload: they keep their start-up value.
const NOT_RELOADED: [&str; 3] = ["slim", "categoryExtensions", "viaCli"];

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
        .find(|key| !known.contains(&super::cli::kebab(key)))
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
            let name = super::cli::kebab(flag.split('=').next().unwrap_or(flag));
            name.strip_prefix("no-").map(str::to_string).unwrap_or(name)
        })
        .collect();
    let mut out = argv;
    for (key, value) in options {
        let name = super::cli::kebab(key);
        if given.contains(&name) {
            continue;
        }
        for text in values(value) {
            out.push(format!("--{name}={text}"));
        }
    }
    out
}

/// Applies the file again whenever its content changes: the tool-set options (categories,
/// experimental features and conditions, `pageIdRouting`, `javascriptEvaluation`...) take
/// effect at once and clients get `notifications/tools/list_changed`; a file that no longer
/// parses is reported and the running options stay. Browser options apply at start only.
pub fn watch(
    file: PathBuf,
    argv: Vec<String>,
    started: Args,
    catalog: Arc<tokio::sync::Mutex<Catalog>>,
    pipeline: Arc<Pipeline>,
) -> Result<(), String> {
    use notify::Watcher;
    // The folder is watched, not the file: editors save by replacing it.
    let real = std::fs::canonicalize(&file)
        .map_err(|error| format!("cannot watch {}: {error}", file.display()))?;
    let folder = real.parent().map(Path::to_path_buf).unwrap_or_default();
    let (events, mut changed) = tokio::sync::mpsc::unbounded_channel::<()>();
    let name = real.file_name().map(|name| name.to_os_string());
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let ours = event.is_ok_and(|event| {
            !event.kind.is_access()
                && (event.paths.is_empty()
                    || event
                        .paths
                        .iter()
                        .any(|path| path.file_name() == name.as_deref()))
        });
        if ours {
            let _closed = events.send(());
        }
    })
    .map_err(|error| format!("cannot watch {}: {error}", file.display()))?;
    watcher
        .watch(&folder, notify::RecursiveMode::NonRecursive)
        .map_err(|error| format!("cannot watch {}: {error}", folder.display()))?;
    let mut content = std::fs::read_to_string(&real).ok();
    tokio::spawn(async move {
        let _watcher = watcher;
        while changed.recv().await.is_some() {
            loop {
                match tokio::time::timeout(SETTLE, changed.recv()).await {
                    Ok(Some(())) => continue,
                    Ok(None) => return,
                    Err(_quiet) => break,
                }
            }
            let now = std::fs::read_to_string(&real).ok();
            if now.is_none() || now == content {
                continue;
            }
            content = now;
            match Args::try_parse_compatible(argv.clone()) {
                Err(error) => tracing::error!(
                    "Failed to apply {}: {}",
                    file.display(),
                    first_line(&error.to_string())
                ),
                Ok(next) => {
                    let mut flags = next.flags_json();
                    let kept = started.flags_json();
                    for name in NOT_RELOADED {
                        match kept.get(name) {
                            Some(value) => flags.insert(name.to_string(), value.clone()),
                            None => flags.remove(name),
                        };
                    }
                    let routing = next.page_id_routing() && !Args::enabled(started.slim);
                    let applied = catalog.lock().await.set_flags(flags, routing).await;
                    match applied {
                        Ok(tools) => {
                            tracing::info!("{} changed; options reloaded", file.display());
                            pipeline.tools.replace(tools);
                        }
                        Err(error) => {
                            tracing::error!("Failed to apply {}: {error}", file.display())
                        }
                    }
                }
            }
        }
    });
    Ok(())
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
    let command = super::cli::Args::command();
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
