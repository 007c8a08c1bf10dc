//! The server's tool set, made from its plugin folders at start-up and, with `--watch`, made
//! again when components are added, changed or removed. A broken new version never replaces a
//! working one: the reload keeps what was loaded and logs why.

use crate::pipeline::ToolSet;
use crate::policy::plugins::Origin;
use crate::runtime::embedded;
use crate::runtime::{LoadError, LoadedTool, Loader, wasm_files};
use futures::StreamExt;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod background;
pub use background::{finish_in_background, watch};

/// Events closer together than this are one change (an editor or a copy writes in steps).
const SETTLE: Duration = Duration::from_millis(300);
/// Components compiled and described at once during a load.
const PARALLEL_LOADS: usize = 8;
/// The whole start-up load (every plugin's compile and definition) must end within this.
pub const STARTUP_BUDGET: Duration = Duration::from_secs(60);
/// How long a serving start-up waits for a plugin whose code is not compiled (a Rust tool's
/// compile fits; a JavaScript or Python engine's does not, and goes on in the background).
const DEFER_GRACE: Duration = Duration::from_millis(1500);

/// A plugin's load, started on a task of its own.
type LoadTask = tokio::task::JoinHandle<Result<LoadedTool, LoadError>>;

/// The error of a load task that did not finish (it panicked or was cancelled).
fn task_failed(file: &Path, error: tokio::task::JoinError) -> LoadError {
    LoadError::Definition {
        file: file.to_path_buf(),
        reason: format!("the load task failed: {error}"),
    }
}

/// What loading the folders again did: the new tool set if it changed, and why a component
/// was not loaded (its previous version, if any, kept).
pub struct Reload {
    pub tools: Option<ToolSet>,
    pub failures: Vec<String>,
}

pub struct ToolFolders {
    loader: Loader,
    dirs: Vec<(PathBuf, Origin)>,
    flags: Map<String, Value>,
    flags_json: String,
    slim: bool,
    page_id_routing: bool,
    /// Load the built-in tools embedded in the binary first (unless `--builtinPlugins` names
    /// a folder instead).
    embedded_builtins: bool,
    /// What is loaded, file by file, in folder order.
    loaded: Vec<LoadedTool>,
    /// The next load leaves the plugins whose code is not compiled yet for
    /// [`ToolFolders::finish_pending`] (a server answers `initialize` without waiting for them).
    defer_uncompiled: bool,
    /// Plugins the start-up load left compiling in the background, with their load tasks.
    pending: Vec<(PathBuf, LoadTask)>,
}

impl ToolFolders {
    pub fn new(
        loader: Loader,
        dirs: Vec<(PathBuf, Origin)>,
        flags: Map<String, Value>,
        slim: bool,
        page_id_routing: bool,
    ) -> ToolFolders {
        let flags_json = Value::Object(flags.clone()).to_string();
        ToolFolders {
            loader,
            dirs,
            flags,
            flags_json,
            slim,
            page_id_routing,
            embedded_builtins: false,
            loaded: Vec::new(),
            defer_uncompiled: false,
            pending: Vec::new(),
        }
    }

    /// Loads the built-in tools embedded in the binary before the folders.
    pub fn with_embedded_builtins(mut self) -> ToolFolders {
        self.embedded_builtins = true;
        self
    }

    /// The start-up load waits at most [`DEFER_GRACE`] for plugins whose code is not in the
    /// compiled-code cache (a JavaScript or Python engine takes seconds to compile): the rest
    /// go on compiling, for [`ToolFolders::finish_pending`]. A plugin that fails within the
    /// grace still stops the start; one that fails later is logged and not served.
    pub fn deferring_uncompiled(mut self) -> ToolFolders {
        self.defer_uncompiled = true;
        self
    }

    /// Whether plugins were left to compile in the background.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The start-up load: any bad component stops the server, naming the file. Components
    /// load together (compiling on the blocking pool, definitions concurrently), so start-up
    /// costs about the slowest plugin's budget, not the sum; the whole load is bounded by
    /// [`STARTUP_BUDGET`].
    pub async fn load(&mut self) -> Result<ToolSet, String> {
        let mut loaded: Vec<LoadedTool> = Vec::new();
        if self.embedded_builtins {
            if embedded::tools().is_empty() {
                return Err("this program embeds no built-in tools (built with DEVTOOLS_MCP_SKIP_PLUGIN_BUILD, or not the devtools-mcp binary); pass --builtin-plugins DIR".into());
            }
            match self.loader.remembered_builtins(&self.flags_json) {
                Some(tools) => loaded.extend(tools.map_err(|error| error.to_string())?),
                None => {
                    let builtins = self.describe_builtins().await?;
                    self.loader.remember_builtins(&self.flags_json, &builtins);
                    loaded.extend(builtins);
                }
            }
        }
        let mut files = Vec::new();
        for (dir, origin) in &self.dirs {
            for file in wasm_files(dir).map_err(|error| error.to_string())? {
                files.push((file, *origin));
            }
        }
        // Plugins whose code is not compiled start at once, each on a task of its own; those
        // not described within DEFER_GRACE are left for `finish_pending`.
        let defer = std::mem::take(&mut self.defer_uncompiled);
        let mut early: Vec<Option<LoadTask>> = files
            .iter()
            .map(|(file, origin)| {
                let uncompiled = defer
                    && std::fs::read(file).is_ok_and(|bytes| !self.loader.is_compiled(&bytes));
                uncompiled.then(|| {
                    let (loader, flags_json) = (self.loader.clone(), self.flags_json.clone());
                    let (file, origin) = (file.clone(), *origin);
                    tokio::spawn(async move { loader.load_file(&file, origin, &flags_json).await })
                })
            })
            .collect();
        let grace = tokio::time::Instant::now() + DEFER_GRACE;
        let loads: Vec<_> = files
            .iter()
            .zip(&early)
            .filter(|(_, task)| task.is_none())
            .map(|((file, origin), _)| {
                let (loader, flags_json) = (self.loader.clone(), self.flags_json.clone());
                let (file, origin) = (file.clone(), *origin);
                async move { loader.load_file(&file, origin, &flags_json).await }
            })
            .collect();
        let results = tokio::time::timeout(STARTUP_BUDGET, on_workers(loads, PARALLEL_LOADS))
            .await
            .map_err(|_| {
                format!(
                    "Loading the plugins took longer than {} s; a plugin's definition() is too slow (see --plugin-timeout).",
                    STARTUP_BUDGET.as_secs()
                )
            })?;
        let mut results = results.into_iter();
        let mut pending = Vec::new();
        for ((file, _), task) in files.into_iter().zip(early.iter_mut()) {
            let result = match task.take() {
                None => results
                    .next()
                    .ok_or_else(|| "a plugin's load gave no result".to_string())?,
                Some(mut task) => match tokio::time::timeout_at(grace, &mut task).await {
                    Ok(joined) => joined.unwrap_or_else(|error| Err(task_failed(&file, error))),
                    Err(_) => {
                        pending.push((file, task));
                        continue;
                    }
                },
            };
            let tool = result.map_err(|error| error.to_string())?;
            if let Some(error) = clash(&loaded, &tool, &file) {
                return Err(error.to_string());
            }
            loaded.push(tool);
        }
        self.pending = pending;
        self.loaded = loaded;
        self.tool_set()
    }

    /// Compiles and describes the plugins the start-up load left: each that loads joins the
    /// set, which is returned (to be installed, telling clients the list changed); `None` when
    /// nothing was left. A plugin that fails is the error, as it would have been at start:
    /// configuration fails closed, whenever its failure shows.
    pub async fn finish_pending(&mut self) -> Result<Option<ToolSet>, String> {
        let pending = std::mem::take(&mut self.pending);
        if pending.is_empty() {
            return Ok(None);
        }
        let deadline = tokio::time::Instant::now() + STARTUP_BUDGET;
        let previous = self.loaded.clone();
        let mut errors = Vec::new();
        for (file, mut task) in pending {
            let result = match tokio::time::timeout_at(deadline, &mut task).await {
                Ok(joined) => joined.unwrap_or_else(|error| Err(task_failed(&file, error))),
                Err(_) => {
                    task.abort();
                    errors.push(format!(
                        "Loading the plugin {} took longer than {} s",
                        file.display(),
                        STARTUP_BUDGET.as_secs()
                    ));
                    continue;
                }
            };
            match result {
                Ok(tool) => match clash(&self.loaded, &tool, &file) {
                    Some(error) => errors.push(error.to_string()),
                    None => self.loaded.push(tool),
                },
                Err(error) => errors.push(error.to_string()),
            }
        }
        if !errors.is_empty() {
            self.loaded = previous;
            return Err(errors.join("\n"));
        }
        if self.loaded.len() == previous.len() {
            return Ok(None);
        }
        match self.tool_set() {
            Ok(tools) => {
                tracing::info!(
                    plugins = self.loaded.len() - previous.len(),
                    "plugins compiled in the background are served"
                );
                Ok(Some(tools))
            }
            Err(error) => {
                self.loaded = previous;
                Err(error.to_string())
            }
        }
    }

    /// The built-in tools, each described by running its code.
    async fn describe_builtins(&self) -> Result<Vec<LoadedTool>, String> {
        // Owned futures, collected first: a stream over an iterator borrowing `self` is not
        // `Send` for every lifetime, which `tokio::spawn` (the watcher, config reload) needs.
        let loads: Vec<_> = embedded::tools()
            .iter()
            .map(|tool| {
                let (loader, flags_json) = (self.loader.clone(), self.flags_json.clone());
                async move { loader.describe_builtin(tool, &flags_json).await }
            })
            .collect();
        on_workers(loads, 2)
            .await
            .into_iter()
            .map(|result| result.map_err(|error| error.to_string()))
            .collect()
    }

    /// Loads the folders again, keeping every unchanged component and the working version of
    /// every component whose new version fails (each failure logged and returned). No tool set
    /// when it did not change.
    pub async fn reload(&mut self) -> Reload {
        let mut failures = Vec::new();
        let tools = self.reload_into(&mut failures).await;
        Reload { tools, failures }
    }

    async fn reload_into(&mut self, failures: &mut Vec<String>) -> Option<ToolSet> {
        // Embedded tools never change while the binary runs.
        let mut next: Vec<LoadedTool> = self
            .loaded
            .iter()
            .filter(|tool| embedded::is_embedded(&tool.source))
            .cloned()
            .collect();
        for (dir, origin) in &self.dirs {
            let files = match wasm_files(dir) {
                Ok(files) => files,
                Err(error) => {
                    tracing::warn!(%error, "plugin folder unreadable; keeping its tools");
                    next.extend(self.in_dir(dir));
                    continue;
                }
            };
            for file in files {
                let previous = self.loaded.iter().find(|tool| tool.source == file);
                let candidate = match (previous, file_sha256(&file)) {
                    (Some(previous), Some(sha256)) if previous.sha256 == sha256 => {
                        Some(previous.clone())
                    }
                    _ => match self
                        .loader
                        .load_file(&file, *origin, &self.flags_json)
                        .await
                    {
                        Ok(tool) => Some(tool),
                        Err(error) => {
                            tracing::error!(%error, kept_previous = previous.is_some(), "plugin not reloaded");
                            failures.push(error.to_string());
                            previous.cloned()
                        }
                    },
                };
                let Some(candidate) = candidate else { continue };
                if let Some(error) = clash(&next, &candidate, &file) {
                    tracing::error!("{error}");
                    failures.push(error.to_string());
                    continue;
                }
                next.push(candidate);
            }
        }
        if identity(&next) == identity(&self.loaded) {
            return None;
        }
        let previous = std::mem::replace(&mut self.loaded, next);
        match self.tool_set() {
            Ok(tools) => Some(tools),
            Err(error) => {
                tracing::error!(%error, "reloaded tools rejected; keeping the previous set");
                failures.push(error);
                self.loaded = previous;
                None
            }
        }
    }

    /// New flags (a changed `--config` file): every definition is computed again for them,
    /// since descriptions and parameters depend on flags. On failure the previous flags and
    /// tools stay.
    pub async fn set_flags(
        &mut self,
        flags: Map<String, Value>,
        page_id_routing: bool,
    ) -> Result<ToolSet, String> {
        let previous = (
            std::mem::replace(&mut self.flags, flags),
            self.flags_json.clone(),
            self.page_id_routing,
        );
        self.flags_json = Value::Object(self.flags.clone()).to_string();
        self.page_id_routing = page_id_routing;
        let loaded = self.loaded.clone();
        match self.load().await {
            Ok(tools) => Ok(tools),
            Err(error) => {
                (self.flags, self.flags_json, self.page_id_routing) = previous;
                self.loaded = loaded;
                Err(error)
            }
        }
    }

    /// The definition of every loaded tool, whatever the mode (`--slim` serves some of them).
    pub fn definitions(&self) -> impl Iterator<Item = &crate::runtime::ToolDefinition> {
        self.loaded.iter().map(|tool| &tool.definition)
    }

    /// The tool loaded from `file`, if one is.
    pub fn loaded_from(&self, file: &Path) -> Option<&LoadedTool> {
        self.loaded.iter().find(|tool| {
            tool.source == file
                || (tool.source.file_name() == file.file_name()
                    && tool.source.canonicalize().ok() == file.canonicalize().ok())
        })
    }

    fn in_dir<'a>(&'a self, dir: &'a Path) -> impl Iterator<Item = LoadedTool> + 'a {
        self.loaded
            .iter()
            .filter(move |tool| tool.source.parent() == Some(dir))
            .cloned()
    }

    fn tool_set(&self) -> Result<ToolSet, String> {
        let mut tools = self.loaded.clone();
        // As in the reference 1.11.0, the slim tools (condition `slim`) and the others never
        // share a server: only the current mode's tools exist, even with CLI semantics.
        tools.retain(|tool| {
            let slim_tool = tool
                .definition
                .annotations
                .conditions
                .iter()
                .any(|c| c == "slim");
            slim_tool == self.slim
        });
        ToolSet::new(tools, &self.flags, self.page_id_routing)
    }

    fn watched_dirs(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|(dir, _)| dir.clone()).collect()
    }
}

/// Runs the loads as tasks on the runtime's workers, at most `limit` at a time, and
/// returns their results in order. Describing a component is CPU work (deserialising code,
/// instantiating, running `definition()`): polled in one task the loads would take turns on
/// one core; as tasks they use every core, which is most of a cold start.
async fn on_workers<T, F>(loads: Vec<F>, limit: usize) -> Vec<Result<T, LoadError>>
where
    T: Send + 'static,
    F: std::future::Future<Output = Result<T, LoadError>> + Send + 'static,
{
    futures::stream::iter(loads)
        .map(|load| tokio::spawn(load))
        .buffered(limit.max(1))
        .map(|joined| {
            joined.unwrap_or_else(|error| {
                Err(LoadError::Definition {
                    file: PathBuf::from("<load task>"),
                    reason: format!("the load task failed: {error}"),
                })
            })
        })
        .collect()
        .await
}

/// A tool whose name another loaded tool has, or looks like (the same confusable skeleton:
/// case, `I l 1`, `O 0`, `- _ .`), which reads as the same tool to a person or a model.
fn clash(loaded: &[LoadedTool], tool: &LoadedTool, file: &Path) -> Option<LoadError> {
    let name = &tool.definition.name;
    let looks = crate::runtime::definition::skeleton(name);
    let existing = loaded
        .iter()
        .find(|other| crate::runtime::definition::skeleton(&other.definition.name) == looks)?;
    Some(if existing.definition.name == *name {
        LoadError::Duplicate {
            name: name.clone(),
            first: existing.source.clone(),
            second: file.to_path_buf(),
        }
    } else {
        LoadError::Confusable {
            name: name.clone(),
            existing: existing.definition.name.clone(),
            file: file.to_path_buf(),
            first: existing.source.clone(),
        }
    })
}

/// Which file holds which content: equal identities mean an equal tool set.
fn identity(tools: &[LoadedTool]) -> HashSet<(PathBuf, String)> {
    tools
        .iter()
        .map(|tool| (tool.source.clone(), tool.sha256.clone()))
        .collect()
}

fn file_sha256(file: &Path) -> Option<String> {
    std::fs::read(file)
        .ok()
        .map(|bytes| hex::encode(Sha256::digest(bytes)))
}
