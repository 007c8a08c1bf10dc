//! The tool folders' life after start-up, beside the requests: their changes watched
//! (`--watch`), and the plugins left compiling when the server started.

use super::{SETTLE, ToolFolders};
use crate::fswatch::SettledChanges;
use crate::pipeline::Pipeline;
use futures::FutureExt;
use std::sync::Arc;

/// Watches the plugin folders and swaps the pipeline's tool set when they change; clients are
/// told through the registry's change channel. Runs until the process ends.
pub fn watch(
    tool_folders: Arc<tokio::sync::Mutex<ToolFolders>>,
    pipeline: Arc<Pipeline>,
) -> Result<(), String> {
    let dirs = tool_folders
        .try_lock()
        .map(|tool_folders| tool_folders.watched_dirs())
        .map_err(|_| "the tool tool_folders is busy".to_string())?;
    let mut changes = SettledChanges::watch(&dirs, SETTLE, |_| true)?;
    tokio::spawn(async move {
        while changes.next().await.is_some() {
            // A panic while reloading (a bug the loader's own guards missed) is logged and
            // the watcher keeps going with the tools it had.
            let reloaded =
                std::panic::AssertUnwindSafe(async { tool_folders.lock().await.reload().await })
                    .catch_unwind()
                    .await;
            let reloaded = reloaded.map(|reload| reload.tools).unwrap_or_else(|_| {
                tracing::error!("reloading the plugin folders failed; keeping the loaded tools");
                None
            });
            if let Some(tools) = reloaded {
                let names: Vec<String> = tools
                    .iter()
                    .map(|tool| tool.definition().name.clone())
                    .collect();
                tracing::info!(tools = %names.join(", "), "plugin folders changed; tool list updated");
                pipeline.tools.replace(tools);
            }
        }
    });
    Ok(())
}

/// Compiles the plugins the start-up load left ([`ToolFolders::finish_pending`]) while the
/// server answers: their tools join the set, clients hear `notifications/tools/list_changed`,
/// and calls waiting for one of them go on. The policy's names are checked again then (a
/// section naming none of the tools is an error in the log: the server already runs).
pub fn finish_in_background(
    tool_folders: Arc<tokio::sync::Mutex<ToolFolders>>,
    pipeline: Arc<Pipeline>,
) {
    pipeline.tools.loading();
    tokio::spawn(async move {
        let mut folders = tool_folders.lock().await;
        let finished = std::panic::AssertUnwindSafe(folders.finish_pending())
            .catch_unwind()
            .await
            .unwrap_or_else(|_| Err("compiling the plugins failed".to_string()));
        match finished {
            Ok(Some(tools)) => pipeline.tools.replace(tools),
            Ok(None) => {}
            // As a start with this plugin would have been refused: the server does not run
            // on without a tool its operator configured (the MCP client reads why on stderr).
            Err(error) => {
                eprintln!(
                    "devtools-mcp: {error}\nRefusing to run on without it: fix or remove the plugin, then start the server again."
                );
                std::process::exit(1);
            }
        }
        let known = crate::pipeline::tools::known_names::KnownNames::from_definitions(
            folders.definitions(),
        );
        for problem in crate::pipeline::tools::known_names::policy_problems(
            folders.loader.policy(),
            &known,
            false,
        ) {
            if let crate::pipeline::tools::known_names::Problem::Refused(reason) = problem {
                tracing::error!("The policy file is invalid: {reason}");
            }
        }
        drop(folders);
        pipeline.tools.loaded();
    });
}
