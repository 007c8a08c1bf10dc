//! `devtools:tool/heap`: heap-snapshot analysis. The guest names a file; the host checks the
//! path against the sandbox itself (a plugin may pass anything), loads the snapshot once per
//! session and runs every analysis on a blocking thread, so the async workers stay free and
//! the call's wall-clock budget still bounds the wait.

use super::CallState;
use crate::heap_analysis::{self, check_extension};
use crate::plugin::bindings::devtools::tool::heap::{self, ListOptions, NodeFilter, ObjectQuery};
use crate::plugin::capability::Capability;
use devtools_heapsnapshot::format::parse_byte_size_range;
use devtools_heapsnapshot::tools::{self, ListOptions as EngineListOptions};
use devtools_heapsnapshot::{EdgeSort, HeapError, LoadedSnapshot, QuerySort};
use std::path::Path;
use std::sync::Arc;

type Lines = wasmtime::Result<Result<Vec<String>, String>>;

fn options(options: &ListOptions) -> EngineListOptions {
    EngineListOptions {
        page_idx: options.page_idx,
        page_size: options.page_size,
        max_name_length: options.max_name_length,
    }
}

fn filter(
    snapshot: &LoadedSnapshot,
    filter: &Option<NodeFilter>,
) -> Result<Option<devtools_heapsnapshot::NodeFilter>, HeapError> {
    match filter {
        None => Ok(None),
        Some(filter) => devtools_heapsnapshot::NodeFilter::from_params(
            &snapshot.snapshot,
            Some(&filter.name),
            filter.object_id,
        ),
    }
}

/// Reads a file the sandbox resolved, with Node's wording for a missing file (the
/// reference's), through the sandbox's root handles.
fn open(sandbox: &crate::sandbox::Sandbox, path: &str) -> Result<std::fs::File, String> {
    sandbox
        .open_read(Path::new(path))
        .map_err(|error| match error {
            crate::sandbox::SandboxError::Io { source, .. }
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                format!("ENOENT: no such file or directory, open '{path}'")
            }
            other => other.to_string(),
        })
}

impl CallState {
    /// The loaded snapshot for `path` (checked, loaded on first use) and any notes to add.
    async fn heap_snapshot(
        &mut self,
        path: &str,
    ) -> Result<(Arc<LoadedSnapshot>, Vec<String>), String> {
        let session = self.session()?;
        let resolved = session
            .sandbox
            .resolve(path)
            .map_err(|error| error.to_string())?;
        check_extension(&resolved)?;
        if let Some(snapshot) = session.heap.get(&resolved) {
            return Ok((snapshot, Vec::new()));
        }
        let file = open(&session.sandbox, &resolved)?;
        let length = file.metadata().map(|m| m.len()).unwrap_or(0);
        let reservation = session.heap.reserve(&resolved, length)?;
        let display = resolved.clone();
        let loaded = tokio::task::spawn_blocking(move || LoadedSnapshot::load(file))
            .await
            .map_err(|error| format!("Loading the heap snapshot failed: {error}"))?
            .map_err(|error| format!("Cannot load {display}: {error}"))?;
        let loaded = Arc::new(loaded);
        self.session()?.heap.insert(resolved, loaded.clone());
        Ok((loaded, heap_analysis::eviction_lines(&reservation.evicted)))
    }

    /// Loads `path` if needed and runs `query` on a blocking thread.
    async fn heap_query(
        &mut self,
        function: &'static str,
        path: &str,
        query: impl FnOnce(&LoadedSnapshot) -> Result<Vec<String>, HeapError> + Send + 'static,
    ) -> Lines {
        self.require(Capability::Memory, function)?;
        let (snapshot, mut notes) = match self.heap_snapshot(path).await {
            Ok(found) => found,
            Err(error) => return Ok(Err(error)),
        };
        let lines = tokio::task::spawn_blocking(move || query(&snapshot)).await;
        Ok(match lines {
            Ok(Ok(mut lines)) => {
                lines.append(&mut notes);
                Ok(lines)
            }
            Ok(Err(error)) => Err(error.to_string()),
            Err(error) => Err(format!("The heap snapshot query failed: {error}")),
        })
    }
}

impl heap::Host for CallState {
    async fn heap_summary(&mut self, file_path: String, max_name_length: Option<u64>) -> Lines {
        self.heap_query("heap-summary", &file_path, move |s| {
            tools::summary(s, max_name_length)
        })
        .await
    }

    async fn heap_details(
        &mut self,
        file_path: String,
        node_filter: Option<NodeFilter>,
        list: ListOptions,
    ) -> Lines {
        self.heap_query("heap-details", &file_path, move |s| {
            tools::details(s, filter(s, &node_filter)?.as_ref(), options(&list))
        })
        .await
    }

    async fn heap_class_nodes(
        &mut self,
        file_path: String,
        class_id: f64,
        node_filter: Option<NodeFilter>,
        list: ListOptions,
    ) -> Lines {
        self.heap_query("heap-class-nodes", &file_path, move |s| {
            tools::class_nodes(
                s,
                class_id,
                filter(s, &node_filter)?.as_ref(),
                options(&list),
            )
        })
        .await
    }

    async fn heap_retainers(
        &mut self,
        file_path: String,
        node_id: f64,
        list: ListOptions,
    ) -> Lines {
        self.heap_query("heap-retainers", &file_path, move |s| {
            tools::retainers(s, node_id, options(&list))
        })
        .await
    }

    async fn heap_retaining_paths(
        &mut self,
        file_path: String,
        node_id: f64,
        max_depth: Option<f64>,
        max_nodes: Option<f64>,
        max_siblings: Option<f64>,
        max_name_length: Option<u64>,
    ) -> Lines {
        self.heap_query("heap-retaining-paths", &file_path, move |s| {
            tools::retaining_paths(
                s,
                node_id,
                max_depth,
                max_nodes,
                max_siblings,
                max_name_length,
            )
        })
        .await
    }

    async fn heap_edges(
        &mut self,
        file_path: String,
        node_id: f64,
        sort_by: Option<String>,
        retained_size: Option<String>,
        exclude_primitives: Option<bool>,
        list: ListOptions,
    ) -> Lines {
        self.require(Capability::Memory, "heap-edges")?;
        let sort = match sort_by.as_deref() {
            None | Some("retainedSize") => EdgeSort::RetainedSize,
            Some("selfSize") => EdgeSort::SelfSize,
            Some("name") => EdgeSort::Name,
            Some(other) => return Ok(Err(format!("Invalid sortBy: {other}"))),
        };
        // The reference applies only the lower bound here.
        let min = match retained_size
            .as_deref()
            .map(parse_byte_size_range)
            .transpose()
        {
            Ok(range) => range.map(|(min, _)| min),
            Err(error) => return Ok(Err(error)),
        };
        self.heap_query("heap-edges", &file_path, move |s| {
            tools::edges(
                s,
                node_id,
                sort,
                min,
                exclude_primitives.unwrap_or(true),
                options(&list),
            )
        })
        .await
    }

    async fn heap_dominators(
        &mut self,
        file_path: String,
        node_id: f64,
        max_name_length: Option<u64>,
    ) -> Lines {
        self.heap_query("heap-dominators", &file_path, move |s| {
            tools::dominators(s, node_id, max_name_length)
        })
        .await
    }

    async fn heap_object_details(
        &mut self,
        file_path: String,
        node_id: f64,
        max_name_length: Option<u64>,
    ) -> Lines {
        self.heap_query("heap-object-details", &file_path, move |s| {
            tools::object_details(s, node_id, max_name_length)
        })
        .await
    }

    async fn heap_duplicate_strings(&mut self, file_path: String, list: ListOptions) -> Lines {
        self.heap_query("heap-duplicate-strings", &file_path, move |s| {
            tools::duplicate_strings(s, options(&list))
        })
        .await
    }

    async fn heap_compare(
        &mut self,
        base_file_path: String,
        current_file_path: String,
        class_index: Option<f64>,
        list: ListOptions,
    ) -> Lines {
        self.require(Capability::Memory, "heap-compare")?;
        let (base, mut notes) = match self.heap_snapshot(&base_file_path).await {
            Ok(found) => found,
            Err(error) => return Ok(Err(error)),
        };
        self.heap_query("heap-compare", &current_file_path, move |current| {
            let mut lines = tools::compare(&base, current, class_index, options(&list))?;
            lines.append(&mut notes);
            Ok(lines)
        })
        .await
    }

    async fn heap_query_objects(
        &mut self,
        file_path: String,
        query: ObjectQuery,
        list: ListOptions,
    ) -> Lines {
        self.require(Capability::Memory, "heap-query-objects")?;
        let range = |text: &Option<String>| text.as_deref().map(parse_byte_size_range).transpose();
        let (retained, self_size) = match (range(&query.retained_size), range(&query.self_size)) {
            (Ok(retained), Ok(self_size)) => (retained, self_size),
            (Err(error), _) | (_, Err(error)) => return Ok(Err(error)),
        };
        let sort_by = match query.sort_by.as_deref() {
            None => None,
            Some("retainedSize") => Some(QuerySort::RetainedSize),
            Some("selfSize") => Some(QuerySort::SelfSize),
            Some("id") => Some(QuerySort::Id),
            Some(other) => return Ok(Err(format!("Invalid sortBy: {other}"))),
        };
        let engine_query = devtools_heapsnapshot::ObjectQuery {
            class_name: query.class_name,
            property_name: query.property_name,
            node_type: query.node_type,
            min_retained_size: retained.map(|(min, _)| min),
            max_retained_size: retained.and_then(|(_, max)| max),
            min_self_size: self_size.map(|(min, _)| min),
            max_self_size: self_size.and_then(|(_, max)| max),
            is_detached: query.is_detached,
            sort_by,
        };
        self.heap_query("heap-query-objects", &file_path, move |s| {
            tools::query(s, &engine_query, options(&list))
        })
        .await
    }

    async fn heap_analyze_contexts(
        &mut self,
        file_path: String,
        retained_size: Option<String>,
        scope_info_node_id: Option<i64>,
        list: ListOptions,
    ) -> Lines {
        self.require(Capability::Memory, "heap-analyze-contexts")?;
        let range = match retained_size
            .as_deref()
            .map(parse_byte_size_range)
            .transpose()
        {
            Ok(range) => range,
            Err(error) => return Ok(Err(error)),
        };
        self.heap_query("heap-analyze-contexts", &file_path, move |s| {
            tools::contexts(s, range, scope_info_node_id, options(&list))
        })
        .await
    }

    async fn heap_close(&mut self, file_path: String) -> Lines {
        self.require(Capability::Memory, "heap-close")?;
        let session = match self.session() {
            Ok(session) => session,
            Err(error) => return Ok(Err(error)),
        };
        let resolved = match session.sandbox.resolve(&file_path) {
            Ok(resolved) => resolved,
            Err(error) => return Ok(Err(error.to_string())),
        };
        if !session.heap.close(&resolved) {
            return Ok(Err(format!(
                "Failed to close heap snapshot: {resolved} was not loaded."
            )));
        }
        Ok(Ok(vec![format!("Closed heap snapshot: {resolved}")]))
    }
}
