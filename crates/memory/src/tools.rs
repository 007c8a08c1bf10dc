//! The response text of each heap tool, line by line as chrome-devtools-mcp 1.11.0 writes
//! it (`## Heap Snapshot Data`, then the tool's sections).

use crate::aggregates::Aggregate;
use crate::contexts::{ContextReport, ScopeReport};
use crate::filters::NodeFilter;
use crate::format::{self, MAX_NAME_LENGTH, kb, kb_u, name, paginate, signed_count, signed_kb};
use crate::queries::{EdgeItem, EdgeSort, NodeItem, ObjectQuery, PathEdge};
use crate::snapshot::{ATTACHED, DETACHED, HeapSnapshot};
use crate::{HeapError, LoadedSnapshot};
use indexmap::IndexMap;

const HEADER: &str = "## Heap Snapshot Data";

/// Pagination and name length, as most tools take them.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListOptions {
    pub page_idx: Option<u64>,
    pub page_size: Option<u64>,
    pub max_name_length: Option<u64>,
}

impl ListOptions {
    fn max(&self) -> usize {
        max_len(self.max_name_length)
    }
}

fn max_len(value: Option<u64>) -> usize {
    value.map_or(MAX_NAME_LENGTH, |v| {
        usize::try_from(v).unwrap_or(usize::MAX)
    })
}

fn node_index(snapshot: &HeapSnapshot, node_id: f64) -> Result<usize, HeapError> {
    snapshot.node_index_for_id(node_id).ok_or_else(|| {
        HeapError::Query(format!(
            "Node with ID {} not found",
            format::js_number(node_id)
        ))
    })
}

/// `get_heapsnapshot_summary`.
pub fn summary(
    loaded: &LoadedSnapshot,
    max_name_length: Option<u64>,
) -> Result<Vec<String>, HeapError> {
    let s = &loaded.snapshot;
    let max = max_len(max_name_length);
    let mut lines = vec![HEADER.to_string()];
    let stats = &s.statistics;
    lines.push(format!(
        "Statistics: {{\n  \"total\": {},\n  \"native\": {{\n    \"total\": {},\n    \"typedArrays\": {}\n  }},\n  \"v8heap\": {{\n    \"total\": {},\n    \"code\": {},\n    \"jsArrays\": {},\n    \"strings\": {},\n    \"system\": {}\n  }}\n}}",
        format::js_number(stats.total),
        format::js_number(stats.native.total),
        format::js_number(stats.native.typed_arrays),
        format::js_number(stats.v8heap.total),
        format::js_number(stats.v8heap.code),
        format::js_number(stats.v8heap.js_arrays),
        format::js_number(stats.v8heap.strings),
        format::js_number(stats.v8heap.system),
    ));
    lines.push(format!(
        "Static Data: {{\n  \"nodeCount\": {},\n  \"rootNodeIndex\": {},\n  \"totalSize\": {},\n  \"maxJSObjectId\": {}\n}}",
        s.node_count,
        s.root,
        format::js_number(s.total_size()),
        s.max_js_object_id()
    ));
    lines.push("### Native Contexts".into());
    let sizes = &s.native_context_sizes;
    let mut table = vec!["nodeId,nodeName,selfSize,retainedSize,attributedSize".to_string()];
    let mut contexts: Vec<_> = sizes.native_contexts.iter().collect();
    contexts.sort_by_key(|context| std::cmp::Reverse(context.attributed_size));
    for context in contexts {
        table.push(format!(
            "{},{},{},{},{}",
            context.node_id,
            name(&context.node_name, max),
            kb_u(context.self_size),
            kb_u(context.retained_size),
            kb_u(context.attributed_size)
        ));
    }
    table.push(format!("Shared Size: {}", kb_u(sizes.shared_size)));
    table.push(format!(
        "Unattributed Size: {}",
        kb_u(sizes.no_attribution_size)
    ));
    lines.push(table.join("\n"));
    lines.push("### Retained by Context Summary".into());
    let summary = s.retained_by_context_summary();
    lines.push(
        [
            format!("Context count: {}", summary.0),
            format!(
                "Retained by context size: {} ({} objects)",
                kb_u(summary.1),
                summary.2
            ),
            format!(
                "Not retained by context size: {} ({} objects)",
                kb_u(summary.3),
                summary.4
            ),
            format!("Total size: {}", kb_u(summary.1 + summary.3)),
        ]
        .join("\n"),
    );
    Ok(lines)
}

/// Aggregates under a filter, sorted by retained size, with the reference's class ids.
fn class_list(
    loaded: &LoadedSnapshot,
    filter: Option<&NodeFilter>,
) -> Result<Vec<(usize, Aggregate)>, HeapError> {
    let s = &loaded.snapshot;
    let aggregates: IndexMap<String, Aggregate> = match filter {
        None => loaded.all_aggregates.clone(),
        Some(filter) => s.aggregates(Some(&s.filter_mask(filter))),
    };
    let mut list = Vec::with_capacity(aggregates.len());
    for (key, aggregate) in aggregates {
        let id =
            loaded.class_ids.get(&key).copied().ok_or_else(|| {
                HeapError::Query(format!("No class ID found for class key {key}"))
            })?;
        list.push((id, aggregate));
    }
    list.sort_by_key(|(_, aggregate)| std::cmp::Reverse(aggregate.retained_size));
    Ok(list)
}

/// `get_heapsnapshot_details`.
pub fn details(
    loaded: &LoadedSnapshot,
    filter: Option<&NodeFilter>,
    options: ListOptions,
) -> Result<Vec<String>, HeapError> {
    let list = class_list(loaded, filter)?;
    let max = options.max();
    let objects: u64 = list.iter().map(|(_, a)| a.count).sum();
    let self_total: u64 = list.iter().map(|(_, a)| a.self_size).sum();
    let mut lines = vec![
        HEADER.to_string(),
        format!("Objects: {objects}"),
        format!("Total shallow size: {}", kb_u(self_total)),
    ];
    let page = paginate(list.len(), options.page_idx, options.page_size);
    lines.extend(page.info);
    let mut table = vec!["id,className,count,selfSize,retainedSize".to_string()];
    for (id, aggregate) in &list[page.start..page.end] {
        table.push(format!(
            "{id},{},{},{},{}",
            name(&aggregate.name, max),
            aggregate.count,
            kb_u(aggregate.self_size),
            kb_u(aggregate.retained_size)
        ));
    }
    lines.push(table.join("\n"));
    Ok(lines)
}

/// `get_heapsnapshot_class_nodes`.
pub fn class_nodes(
    loaded: &LoadedSnapshot,
    class_id: f64,
    filter: Option<&NodeFilter>,
    options: ListOptions,
) -> Result<Vec<String>, HeapError> {
    let s = &loaded.snapshot;
    let key = (class_id.fract() == 0.0 && class_id >= 1.0)
        .then(|| loaded.class_keys.get(class_id as usize - 1))
        .flatten()
        .ok_or_else(|| {
            HeapError::Query(format!(
                "Class with ID {} not found in heap snapshot",
                format::js_number(class_id)
            ))
        })?;
    let aggregate = match filter {
        None => loaded.all_aggregates.get(key).cloned(),
        Some(filter) => s.aggregates(Some(&s.filter_mask(filter))).get(key).cloned(),
    }
    .ok_or_else(|| {
        HeapError::Query("Cannot read properties of undefined (reading 'idxs')".into())
    })?;
    let mut indexes: Vec<usize> = aggregate.indexes.iter().map(|&ni| ni as usize).collect();
    if filter.is_none()
        && loaded
            .all_sorted_by_id
            .load(std::sync::atomic::Ordering::Relaxed)
    {
        indexes.sort_by_key(|&ni| s.node_id(ni));
    }
    Ok(node_list(s.node_items(&indexes), options))
}

/// A node list as the reference prints it: sorted by retained size, then paginated.
fn node_list(mut items: Vec<NodeItem>, options: ListOptions) -> Vec<String> {
    items.sort_by_key(|item| std::cmp::Reverse(item.retained_size));
    let page = paginate(items.len(), options.page_idx, options.page_size);
    let max = options.max();
    let mut table = Vec::new();
    if !items.is_empty() {
        table.push("nodeId,nodeName,type,distance,selfSize,retainedSize".to_string());
    }
    for item in &items[page.start..page.end] {
        table.push(format!(
            "{},{},{},{},{},{}",
            item.id,
            name(&item.name, max),
            item.kind,
            item.distance,
            kb_u(item.self_size),
            kb_u(item.retained_size)
        ));
    }
    let mut lines = vec![HEADER.to_string(), table.join("\n")];
    lines.extend(page.info);
    lines
}

fn edge_list(items: Vec<EdgeItem>, options: ListOptions) -> Vec<String> {
    let page = paginate(items.len(), options.page_idx, options.page_size);
    let max = options.max();
    let mut table = Vec::new();
    if !items.is_empty() {
        table.push("name,type,nodeId,nodeName,selfSize,retainedSize".to_string());
    }
    for item in &items[page.start..page.end] {
        table.push(format!(
            "{},{},{},{},{},{}",
            name(&item.name, max),
            item.kind,
            item.node.id,
            name(&item.node.name, max),
            kb_u(item.node.self_size),
            kb_u(item.node.retained_size)
        ));
    }
    let mut lines = vec![HEADER.to_string(), table.join("\n")];
    lines.extend(page.info);
    lines
}

/// `get_heapsnapshot_retainers`.
pub fn retainers(
    loaded: &LoadedSnapshot,
    node_id: f64,
    options: ListOptions,
) -> Result<Vec<String>, HeapError> {
    let s = &loaded.snapshot;
    let ni = node_index(s, node_id)?;
    Ok(edge_list(s.retainers_of(ni), options))
}

/// `get_heapsnapshot_edges`.
pub fn edges(
    loaded: &LoadedSnapshot,
    node_id: f64,
    sort: EdgeSort,
    min_retained: Option<u64>,
    exclude_primitives: bool,
    options: ListOptions,
) -> Result<Vec<String>, HeapError> {
    let s = &loaded.snapshot;
    let ni = node_index(s, node_id)?;
    Ok(edge_list(
        s.edges_of(ni, sort, min_retained, exclude_primitives),
        options,
    ))
}

/// `get_heapsnapshot_retaining_paths`.
pub fn retaining_paths(
    loaded: &LoadedSnapshot,
    node_id: f64,
    max_depth: Option<f64>,
    max_nodes: Option<f64>,
    max_siblings: Option<f64>,
    max_name_length: Option<u64>,
) -> Result<Vec<String>, HeapError> {
    let s = &loaded.snapshot;
    let ni = node_index(s, node_id)?;
    let result = s.retaining_paths(
        ni,
        max_depth.unwrap_or(30.0),
        max_nodes.unwrap_or(5000.0),
        max_siblings.unwrap_or(100.0),
    );
    let max = max_len(max_name_length);
    let mut lines = vec![HEADER.to_string(), "### Retaining Paths".to_string()];
    if result.paths.is_empty() {
        lines.push("No retaining paths found.".into());
    } else {
        // Depth first with a stack of its own (a path can be as deep as the walk allowed).
        let mut text = Vec::new();
        let mut pending: Vec<(&PathEdge, usize)> =
            result.paths.iter().rev().map(|path| (path, 0)).collect();
        while let Some((edge, depth)) = pending.pop() {
            text.push(format!(
                "{}<- @{} {} via {} {} (distance: {})",
                "  ".repeat(depth),
                edge.node_id,
                name(&edge.node_name, max),
                edge.edge_type,
                name(&edge.edge_name, max),
                edge.distance
            ));
            pending.extend(edge.children.iter().rev().map(|child| (child, depth + 1)));
        }
        lines.push(text.join("\n"));
    }
    if !result.limits_reached.is_empty() {
        lines.push(format!(
            "Note: results are truncated, the following limits were reached: {}.",
            result.limits_reached.join(", ")
        ));
    }
    Ok(lines)
}

/// `get_heapsnapshot_dominators`.
pub fn dominators(
    loaded: &LoadedSnapshot,
    node_id: f64,
    max_name_length: Option<u64>,
) -> Result<Vec<String>, HeapError> {
    let s = &loaded.snapshot;
    let ni = node_index(s, node_id)?;
    let max = max_len(max_name_length);
    let chain = s.dominators_of(ni);
    let mut lines = vec![HEADER.to_string(), "### Dominator Chain".to_string()];
    if chain.is_empty() {
        lines.push("No dominators found.".into());
    } else {
        let mut table = vec!["nodeId,nodeName,selfSize,retainedSize".to_string()];
        for item in chain {
            table.push(format!(
                "{},{},{},{}",
                item.node_id,
                name(&item.node_name, max),
                kb_u(item.self_size),
                kb_u(item.retained_size)
            ));
        }
        lines.push(table.join("\n"));
    }
    Ok(lines)
}

/// `get_heapsnapshot_object_details`.
pub fn object_details(
    loaded: &LoadedSnapshot,
    node_id: f64,
    max_name_length: Option<u64>,
) -> Result<Vec<String>, HeapError> {
    let s = &loaded.snapshot;
    let ni = node_index(s, node_id)?;
    let info = s.object_info(ni);
    let detachedness = match info.detachedness {
        ATTACHED => "attached",
        DETACHED => "detached",
        _ => "unknown",
    };
    Ok(vec![
        HEADER.to_string(),
        "### Object Details".to_string(),
        [
            format!("id: @{}", info.id),
            format!("name: {}", name(&info.name, max_len(max_name_length))),
            format!("type: {}", info.kind),
            format!("detachedness: {detachedness}"),
            format!("selfSize: {}", kb_u(info.self_size)),
            format!("retainedSize: {}", kb_u(info.retained_size)),
            format!("distance: {}", info.distance),
            format!("edgeCount: {}", info.edge_count),
            format!("retainerCount: {}", info.retainer_count),
        ]
        .join("\n"),
    ])
}

/// `get_heapsnapshot_duplicate_strings`.
pub fn duplicate_strings(
    loaded: &LoadedSnapshot,
    options: ListOptions,
) -> Result<Vec<String>, HeapError> {
    let groups = loaded.snapshot.duplicate_strings();
    let mut lines = vec![HEADER.to_string(), "### Duplicate Strings".to_string()];
    let page = paginate(groups.len(), options.page_idx, options.page_size);
    lines.extend(page.info);
    let max = options.max();
    let mut table =
        vec!["value,count,totalSelfSize,totalRetainedSize,truncated,nodeIds".to_string()];
    for group in &groups[page.start..page.end] {
        let ids: Vec<String> = group.ids.iter().map(|id| format!("@{id}")).collect();
        let value = serde_json::to_string(&format::truncate(&group.value, max)).unwrap_or_default();
        table.push(format!(
            "{value},{},{},{},{},{}",
            group.count,
            kb_u(group.total_self_size),
            kb_u(group.total_retained_size),
            group.truncated,
            ids.join(" ")
        ));
    }
    lines.push(table.join("\n"));
    Ok(lines)
}

/// `compare_heapsnapshots`: the class summary, or one class in detail.
pub fn compare(
    base: &LoadedSnapshot,
    current: &LoadedSnapshot,
    class_index: Option<f64>,
    options: ListOptions,
) -> Result<Vec<String>, HeapError> {
    let base_classes = base.snapshot.classes_for_diff(&current.snapshot);
    let mut diffs = current.snapshot.diff_classes(&base_classes);
    current
        .all_sorted_by_id
        .store(true, std::sync::atomic::Ordering::Relaxed);
    diffs.sort_by_key(|diff| std::cmp::Reverse(diff.size_delta));
    let max = options.max();
    let mut lines = vec![HEADER.to_string()];
    if let Some(index) = class_index {
        let diff = (index.fract() == 0.0 && index >= 0.0)
            .then(|| diffs.get(index as usize))
            .flatten()
            .ok_or_else(|| {
                HeapError::Query(format!(
                    "Invalid classIndex: {}. Total classes with changes: {}",
                    format::js_number(index),
                    diffs.len()
                ))
            })?;
        lines.push("### Heap Snapshot Detailed Diff".into());
        let mut text = vec![
            format!(
                "{}: # new: {}, # deleted: {}, # delta: {}, alloc size: {}, freed size: {}, size delta: {}",
                name(&diff.name, max),
                diff.added_count,
                diff.removed_count,
                signed_count(diff.count_delta),
                signed_kb(diff.added_size),
                signed_kb(diff.removed_size),
                signed_kb(diff.size_delta)
            ),
            "Objects:".to_string(),
        ];
        for (id, size) in diff.added_ids.iter().zip(&diff.added_self_sizes) {
            text.push(format!("  + @{id} (self_size: {})", kb_u(*size)));
        }
        for (id, size) in diff.deleted_ids.iter().zip(&diff.deleted_self_sizes) {
            text.push(format!("  - @{id} (self_size: {})", kb_u(*size)));
        }
        lines.push(text.join("\n"));
        return Ok(lines);
    }
    lines.push("### Heap Snapshot Diff".into());
    let total = |f: fn(&crate::aggregates::ClassDiff) -> i64| diffs.iter().map(f).sum::<i64>();
    lines.push(format!(
        "Total: # new: {}, # deleted: {}, # delta: {}, alloc size: {}, freed size: {}, size delta: {}",
        total(|d| d.added_count),
        total(|d| d.removed_count),
        signed_count(total(|d| d.count_delta)),
        signed_kb(total(|d| d.added_size)),
        signed_kb(total(|d| d.removed_size)),
        signed_kb(total(|d| d.size_delta))
    ));
    let page = paginate(diffs.len(), options.page_idx, options.page_size);
    lines.extend(page.info);
    let mut table = vec![
        "index,className,addedCount,removedCount,countDelta,addedSize,removedSize,sizeDelta"
            .to_string(),
    ];
    for (index, diff) in diffs.iter().enumerate().take(page.end).skip(page.start) {
        table.push(format!(
            "{index},{},{},{},{},{},{},{}",
            name(&diff.name, max),
            diff.added_count,
            diff.removed_count,
            diff.count_delta,
            kb(diff.added_size),
            kb(diff.removed_size),
            kb(diff.size_delta)
        ));
    }
    lines.push(table.join("\n"));
    Ok(lines)
}

/// `query_heapsnapshot_objects`.
pub fn query(
    loaded: &LoadedSnapshot,
    query: &ObjectQuery,
    options: ListOptions,
) -> Result<Vec<String>, HeapError> {
    let s = &loaded.snapshot;
    let indexes = s.query_objects(query)?;
    Ok(node_list(s.node_items(&indexes), options))
}

/// `analyze_heapsnapshot_contexts`.
pub fn contexts(
    loaded: &LoadedSnapshot,
    retained: Option<(u64, Option<u64>)>,
    scope_info_node_id: Option<i64>,
    options: ListOptions,
) -> Result<Vec<String>, HeapError> {
    let analysis = loaded.snapshot.analyze_contexts();
    let (min, max_size) = retained.unwrap_or((0, None));
    let mut ranked: Vec<(&ScopeReport, &ContextReport)> = Vec::new();
    for scope in &analysis.scopes {
        if scope_info_node_id.is_some_and(|id| i64::from(scope.scope_info_node_id) != id) {
            continue;
        }
        for context in &scope.contexts {
            let score = context.dead_fields_retained_size_sum;
            if score < min || max_size.is_some_and(|max| score > max) {
                continue;
            }
            ranked.push((scope, context));
        }
    }
    ranked.sort_by_key(|(_, context)| std::cmp::Reverse(context.dead_fields_retained_size_sum));
    let page = paginate(
        ranked.len(),
        Some(options.page_idx.unwrap_or(0)),
        options.page_size,
    );
    let max = options.max();
    let mut lines = vec![HEADER.to_string(), "### Context Analysis".to_string()];
    lines.extend(page.info);
    let mut text: Vec<String> = Vec::new();
    if page.start == page.end {
        text.push("No live contexts with dead fields were found.".into());
    }
    for (scope, context) in &ranked[page.start..page.end] {
        if !text.is_empty() {
            text.push(String::new());
        }
        let script = if scope.script_name.is_empty() {
            format!("script @{}", scope.script_node_id)
        } else {
            name(&scope.script_name, max)
        };
        let scope_name = match scope.scope_name.as_deref() {
            Some(scope_name) if !scope_name.is_empty() => {
                format!("{} ({script})", name(scope_name, max))
            }
            _ => script,
        };
        text.push(format!(
            "#### Context @{} in `{scope_name}` — {}",
            context.context_node_id,
            kb_u(context.dead_fields_retained_size_sum)
        ));
        text.push(format!(
            "Script @{}, ScopeInfo @{}, offsets {}-{}, {}",
            scope.script_node_id,
            scope.scope_info_node_id,
            scope.scope_start,
            scope.scope_end,
            count(scope.context_field_count, "context field")
        ));
        for field in &context.dead_fields {
            text.push(format!(
                "- `{}` ({} @{}) — {}",
                name(&field.name, max),
                name(&field.value_name, max),
                field.value_node_id,
                kb_u(field.retained_size)
            ));
        }
    }
    if !analysis.scripts_without_scopes.is_empty() {
        text.push(String::new());
        text.push("Scripts without scope metadata could not be analyzed:".into());
        for script in &analysis.scripts_without_scopes {
            let script_name = if script.script_name.is_empty() {
                format!("script @{}", script.script_node_id)
            } else {
                name(&script.script_name, max)
            };
            text.push(format!(
                "- `{script_name}` (@{}) — {}",
                script.script_node_id,
                count(script.context_count, "context")
            ));
        }
    }
    lines.push(text.join("\n"));
    Ok(lines)
}

fn count(count: usize, singular: &str) -> String {
    format!("{count} {singular}{}", if count == 1 { "" } else { "s" })
}
