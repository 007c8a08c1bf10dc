//! `devtools:tool/memory` (`memory`): heap snapshots taken of a page, and their analysis. The guest names a file; the host checks the
//! path against the sandbox itself (a plugin may pass anything), loads the snapshot once per
//! session and runs every load and analysis as an engine job (`crate::engine`): off the
//! async workers, charged with what the load allocates against the session's budget, and
//! stopped when the call ends.

use super::function::{HostFunction as F, Marks as M};
use super::{Call, CallState, PageHandle, or_return};
use crate::browser::features::memory as browser_memory;
use crate::memory_analysis::{self, check_extension};
use crate::policy::capability::Capability::FilesWrite;
use crate::runtime::calling::bindings::v0_3::devtools::tool::memory::{
    self, EdgeSort as WitEdgeSort, ListOptions, NodeFilter, NodeSort, ObjectQuery,
};
use devtools_memory::format::parse_byte_size_range;
use devtools_memory::tools::{self, ListOptions as EngineListOptions};
use devtools_memory::{EdgeSort, HeapError, LoadBudget, LoadedSnapshot, QuerySort};
use std::sync::Arc;
use wasmtime::component::Resource;

type Lines = wasmtime::Result<Result<Vec<String>, String>>;

fn options(options: &ListOptions) -> EngineListOptions {
    EngineListOptions {
        page_idx: options.page_idx,
        page_size: options.page_size,
        max_name_length: options.max_name_length,
    }
}

/// The reference's `filterName` of a filter, and the engine's filter for it.
fn filter(
    snapshot: &LoadedSnapshot,
    filter: &Option<NodeFilter>,
) -> Result<Option<devtools_memory::NodeFilter>, HeapError> {
    let (name, object_id) = match filter {
        None => return Ok(None),
        Some(NodeFilter::RetainedByDetachedDomNodes) => ("objectsRetainedByDetachedDomNodes", None),
        Some(NodeFilter::RetainedByConsole) => ("objectsRetainedByConsole", None),
        Some(NodeFilter::RetainedByEventHandlers) => ("objectsRetainedByEventHandlers", None),
        Some(NodeFilter::RetainedByContexts) => ("objectsRetainedByContexts", None),
        Some(NodeFilter::SharedNativeContext) => ("sharedNativeContext", None),
        Some(NodeFilter::NoNativeContext) => ("noNativeContext", None),
        Some(NodeFilter::AttributedToSpecificNativeContext(id)) => {
            ("attributedToSpecificNativeContext", Some(*id))
        }
    };
    devtools_memory::NodeFilter::from_params(&snapshot.snapshot, Some(name), object_id)
}

/// The engine's numbers as the WIT record.
fn statistics(loaded: &LoadedSnapshot) -> memory::HeapStatistics {
    let numbers = loaded.snapshot.numbers();
    let stats = &numbers.statistics;
    memory::HeapStatistics {
        node_count: numbers.node_count,
        total_size: numbers.total_size,
        v8_heap: stats.v8heap.total,
        code: stats.v8heap.code,
        js_arrays: stats.v8heap.js_arrays,
        strings: stats.v8heap.strings,
        system: stats.v8heap.system,
        native: stats.native.total,
        typed_arrays: stats.native.typed_arrays,
        classes: numbers
            .classes
            .into_iter()
            .map(|class| memory::ClassAggregate {
                name: class.name,
                count: class.count,
                self_size: class.self_size,
                retained_size: class.retained_size,
            })
            .collect(),
    }
}

/// Every heap function reads the snapshot files it names, through the file gateway.
const fn heap_fn(name: &'static str) -> F {
    F::new("memory", name, M::READS.and(M::PAGE_CONTENT))
}

/// The snapshot is written to a file: always `files.write` too.
const TAKE_SNAPSHOT: F = F::new(
    "memory",
    "take-snapshot",
    M::WRITES.and(M::PAGE_CONTENT).and(M::ON_PAGE),
)
.also(&[FilesWrite]);
pub(super) const HEAP_SUMMARY: F = heap_fn("summary");
const HEAP_STATISTICS: F = heap_fn("statistics");
pub(super) const HEAP_DETAILS: F = heap_fn("details");
pub(super) const HEAP_CLASS_NODES: F = heap_fn("class-nodes");
pub(super) const HEAP_RETAINERS: F = heap_fn("retainers");
pub(super) const HEAP_RETAINING_PATHS: F = heap_fn("retaining-paths");
pub(super) const HEAP_EDGES: F = heap_fn("edges");
pub(super) const HEAP_DOMINATORS: F = heap_fn("dominators");
pub(super) const HEAP_OBJECT_DETAILS: F = heap_fn("object-details");
pub(super) const HEAP_DUPLICATE_STRINGS: F = heap_fn("duplicate-strings");
pub(super) const HEAP_COMPARE: F = heap_fn("compare");
pub(super) const HEAP_QUERY_OBJECTS: F = heap_fn("query-objects");
pub(super) const HEAP_ANALYZE_CONTEXTS: F = heap_fn("analyze-contexts");
pub(super) const HEAP_CLOSE: F = F::new("memory", "close", M::PAGE_CONTENT);

pub(super) const FUNCTIONS: &[&F] = &[
    &TAKE_SNAPSHOT,
    &HEAP_SUMMARY,
    &HEAP_STATISTICS,
    &HEAP_DETAILS,
    &HEAP_CLASS_NODES,
    &HEAP_RETAINERS,
    &HEAP_RETAINING_PATHS,
    &HEAP_EDGES,
    &HEAP_DOMINATORS,
    &HEAP_OBJECT_DETAILS,
    &HEAP_DUPLICATE_STRINGS,
    &HEAP_COMPARE,
    &HEAP_QUERY_OBJECTS,
    &HEAP_ANALYZE_CONTEXTS,
    &HEAP_CLOSE,
];

/// The loaded snapshot for `path` (checked, loaded on first use, read through the file
/// gateway) and any notes to add.
async fn heap_snapshot(
    call: &mut Call<'_>,
    path: &str,
) -> Result<(Arc<LoadedSnapshot>, Vec<String>), String> {
    let session = call.session()?;
    let resolved = session
        .sandbox
        .resolve(path)
        .map_err(|error| error.to_string())?;
    check_extension(&resolved)?;
    if let Some(snapshot) = session.heap.get(&resolved) {
        return Ok((snapshot, Vec::new()));
    }
    let (file, length) = session.sandbox.open_regular(&resolved).map_err(|error| {
        if error.is_not_found() {
            format!("ENOENT: no such file or directory, open '{resolved}'")
        } else {
            error.to_string()
        }
    })?;
    let reservation = session.heap.reserve(&resolved, length)?;
    let display = resolved.clone();
    let max_bytes = reservation.max_bytes;
    // An engine job: charged with what it allocates, stopped when this call ends.
    let deadline = call.wall_clock();
    let loaded = crate::engine::run("loading the heap snapshot", deadline, move |cancel| {
        let budget = LoadBudget {
            max_bytes,
            file_len: Some(length),
            cancel: Some(cancel),
        };
        LoadedSnapshot::load_with(file, budget)
    })
    .await
    .map_err(|error| format!("Cannot load {display}: {error}"))?
    .map_err(|error| format!("Cannot load {display}: {error}"))?;
    let loaded = Arc::new(loaded);
    call.session()?.heap.insert(resolved, loaded.clone());
    Ok((
        loaded,
        memory_analysis::eviction_lines(&reservation.evicted),
    ))
}

/// Loads `path` if needed and runs `query` on a blocking thread.
/// Loads `path` (once per session) and runs `query` as an engine job; `notes_into` adds the
/// load's notes to the answer.
async fn heap_data<T: Send + 'static>(
    call: &mut Call<'_>,
    path: &str,
    query: impl FnOnce(&LoadedSnapshot) -> Result<T, HeapError> + Send + 'static,
    notes_into: impl FnOnce(&mut T, Vec<String>),
) -> wasmtime::Result<Result<T, String>> {
    let (snapshot, notes) = or_return!(heap_snapshot(call, path).await);
    let deadline = call.wall_clock();
    let answer = crate::engine::run("the heap snapshot query", deadline, move |_| {
        query(&snapshot)
    })
    .await;
    Ok(match answer {
        Ok(Ok(mut answer)) => {
            notes_into(&mut answer, notes);
            Ok(answer)
        }
        Ok(Err(error)) => Err(error.to_string()),
        Err(error) => Err(error.to_string()),
    })
}

/// [`heap_data`] for the text answers: the load's notes are appended lines.
async fn heap_query(
    call: &mut Call<'_>,
    path: &str,
    query: impl FnOnce(&LoadedSnapshot) -> Result<Vec<String>, HeapError> + Send + 'static,
) -> Lines {
    heap_data(call, path, query, |lines, mut notes| {
        lines.append(&mut notes)
    })
    .await
}

impl CallState {
    /// Dispatches `function`: loads `path` if needed and runs `query` on a blocking thread.
    async fn heap_run(
        &mut self,
        function: &'static F,
        path: &str,
        query: impl FnOnce(&LoadedSnapshot) -> Result<Vec<String>, HeapError> + Send + 'static,
    ) -> Lines {
        self.dispatch(function, async |call| heap_query(call, path, query).await)
            .await
    }
}

impl memory::Host for CallState {
    async fn take_snapshot(&mut self, handle: Resource<PageHandle>, file_path: String) -> Lines {
        self.dispatch(&TAKE_SNAPSHOT, async |call| {
            let (page, sandbox) = or_return!(call.page_and_sandbox(&handle).await?);
            Ok(browser_memory::save(page, &file_path, sandbox).await)
        })
        .await
    }

    async fn statistics(
        &mut self,
        file_path: String,
    ) -> wasmtime::Result<Result<memory::HeapStatistics, String>> {
        self.dispatch(&HEAP_STATISTICS, async |call| {
            // Notes (a snapshot loaded again, say) belong to text answers; data has none.
            heap_data(call, &file_path, |s| Ok(statistics(s)), |_, _| ()).await
        })
        .await
    }

    async fn summary(&mut self, file_path: String, max_name_length: Option<u64>) -> Lines {
        self.heap_run(&HEAP_SUMMARY, &file_path, move |s| {
            tools::summary(s, max_name_length)
        })
        .await
    }

    async fn details(
        &mut self,
        file_path: String,
        node_filter: Option<NodeFilter>,
        list: ListOptions,
    ) -> Lines {
        self.heap_run(&HEAP_DETAILS, &file_path, move |s| {
            tools::details(s, filter(s, &node_filter)?.as_ref(), options(&list))
        })
        .await
    }

    async fn class_nodes(
        &mut self,
        file_path: String,
        class_id: f64,
        node_filter: Option<NodeFilter>,
        list: ListOptions,
    ) -> Lines {
        self.heap_run(&HEAP_CLASS_NODES, &file_path, move |s| {
            tools::class_nodes(
                s,
                class_id,
                filter(s, &node_filter)?.as_ref(),
                options(&list),
            )
        })
        .await
    }

    async fn retainers(&mut self, file_path: String, node_id: f64, list: ListOptions) -> Lines {
        self.heap_run(&HEAP_RETAINERS, &file_path, move |s| {
            tools::retainers(s, node_id, options(&list))
        })
        .await
    }

    async fn retaining_paths(
        &mut self,
        file_path: String,
        node_id: f64,
        max_depth: Option<f64>,
        max_nodes: Option<f64>,
        max_siblings: Option<f64>,
        max_name_length: Option<u64>,
    ) -> Lines {
        self.heap_run(&HEAP_RETAINING_PATHS, &file_path, move |s| {
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

    async fn edges(
        &mut self,
        file_path: String,
        node_id: f64,
        sort_by: Option<WitEdgeSort>,
        retained_size: Option<String>,
        exclude_primitives: Option<bool>,
        list: ListOptions,
    ) -> Lines {
        self.dispatch(&HEAP_EDGES, async |call| {
            let sort = match sort_by {
                None | Some(WitEdgeSort::RetainedSize) => EdgeSort::RetainedSize,
                Some(WitEdgeSort::SelfSize) => EdgeSort::SelfSize,
                Some(WitEdgeSort::Name) => EdgeSort::Name,
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
            heap_query(call, &file_path, move |s| {
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
        })
        .await
    }

    async fn dominators(
        &mut self,
        file_path: String,
        node_id: f64,
        max_name_length: Option<u64>,
    ) -> Lines {
        self.heap_run(&HEAP_DOMINATORS, &file_path, move |s| {
            tools::dominators(s, node_id, max_name_length)
        })
        .await
    }

    async fn object_details(
        &mut self,
        file_path: String,
        node_id: f64,
        max_name_length: Option<u64>,
    ) -> Lines {
        self.heap_run(&HEAP_OBJECT_DETAILS, &file_path, move |s| {
            tools::object_details(s, node_id, max_name_length)
        })
        .await
    }

    async fn duplicate_strings(&mut self, file_path: String, list: ListOptions) -> Lines {
        self.heap_run(&HEAP_DUPLICATE_STRINGS, &file_path, move |s| {
            tools::duplicate_strings(s, options(&list))
        })
        .await
    }

    async fn compare(
        &mut self,
        base_file_path: String,
        current_file_path: String,
        class_index: Option<f64>,
        list: ListOptions,
    ) -> Lines {
        self.dispatch(&HEAP_COMPARE, async |call| {
            let (base, mut notes) = or_return!(heap_snapshot(call, &base_file_path).await);
            heap_query(call, &current_file_path, move |current| {
                let mut lines = tools::compare(&base, current, class_index, options(&list))?;
                lines.append(&mut notes);
                Ok(lines)
            })
            .await
        })
        .await
    }

    async fn query_objects(
        &mut self,
        file_path: String,
        query: ObjectQuery,
        list: ListOptions,
    ) -> Lines {
        self.dispatch(&HEAP_QUERY_OBJECTS, async |call| {
            let range =
                |text: &Option<String>| text.as_deref().map(parse_byte_size_range).transpose();
            let (retained, self_size) = match (range(&query.retained_size), range(&query.self_size))
            {
                (Ok(retained), Ok(self_size)) => (retained, self_size),
                (Err(error), _) | (_, Err(error)) => return Ok(Err(error)),
            };
            let sort_by = query.sort_by.map(|sort| match sort {
                NodeSort::RetainedSize => QuerySort::RetainedSize,
                NodeSort::SelfSize => QuerySort::SelfSize,
                NodeSort::Id => QuerySort::Id,
            });
            let engine_query = devtools_memory::ObjectQuery {
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
            heap_query(call, &file_path, move |s| {
                tools::query(s, &engine_query, options(&list))
            })
            .await
        })
        .await
    }

    async fn analyze_contexts(
        &mut self,
        file_path: String,
        retained_size: Option<String>,
        scope_info_node_id: Option<i64>,
        list: ListOptions,
    ) -> Lines {
        self.dispatch(&HEAP_ANALYZE_CONTEXTS, async |call| {
            let range = match retained_size
                .as_deref()
                .map(parse_byte_size_range)
                .transpose()
            {
                Ok(range) => range,
                Err(error) => return Ok(Err(error)),
            };
            heap_query(call, &file_path, move |s| {
                tools::contexts(s, range, scope_info_node_id, options(&list))
            })
            .await
        })
        .await
    }

    async fn close(&mut self, file_path: String) -> Lines {
        self.dispatch(&HEAP_CLOSE, async |call| {
            let session = or_return!(call.session());
            let resolved = or_return!(
                session
                    .sandbox
                    .resolve(&file_path)
                    .map_err(|error| error.to_string())
            );
            if !session.heap.close(&resolved) {
                return Ok(Err(format!(
                    "Failed to close heap snapshot: {resolved} was not loaded."
                )));
            }
            Ok(Ok(vec![format!("Closed heap snapshot: {resolved}")]))
        })
        .await
    }
}
