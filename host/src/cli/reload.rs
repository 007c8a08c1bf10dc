//! `--config FILE` while serving: the file is applied again whenever it changes, through the
//! same parse as at start-up, and the tool set is rebuilt from the result.

use crate::config::Args;
use crate::config::file::first_line;
use crate::fswatch::SettledChanges;
use crate::pipeline::Pipeline;
use crate::pipeline::tools::folders::ToolFolders;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Events closer together than this are one change (editors save in steps).
const SETTLE: Duration = Duration::from_millis(200);
/// Options the reference 1.11.0 does not reload: they keep their start-up value.
const NOT_RELOADED: [&str; 3] = ["slim", "categoryExtensions", "viaCli"];

/// Applies the file again whenever its content changes: the tool-set options (categories,
/// experimental features and conditions, `pageIdRouting`, `javascriptEvaluation`...) take
/// effect at once and clients get `notifications/tools/list_changed`; a file that no longer
/// parses is reported and the running options stay. Browser options apply at start only.
pub fn watch(
    file: PathBuf,
    argv: Vec<String>,
    started: Args,
    tool_folders: Arc<tokio::sync::Mutex<ToolFolders>>,
    pipeline: Arc<Pipeline>,
) -> Result<(), String> {
    // The folder is watched, not the file: editors save by replacing it.
    let real = std::fs::canonicalize(&file)
        .map_err(|error| format!("cannot watch {}: {error}", file.display()))?;
    let folder = real.parent().map(Path::to_path_buf).unwrap_or_default();
    let name = real.file_name().map(|name| name.to_os_string());
    let mut changes = SettledChanges::watch(&[folder], SETTLE, move |event| {
        event.paths.is_empty()
            || event
                .paths
                .iter()
                .any(|path| path.file_name() == name.as_deref())
    })?;
    let mut content = std::fs::read_to_string(&real).ok();
    tokio::spawn(async move {
        while changes.next().await.is_some() {
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
                    let applied = tool_folders.lock().await.set_flags(flags, routing).await;
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
