//! `--config FILE` while serving: the file is applied again whenever it changes, through the
//! same parse as at start-up, and the tool set is rebuilt from the result.

use super::Args;
use super::config_file::first_line;
use crate::catalog::Catalog;
use crate::pipeline::Pipeline;
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
