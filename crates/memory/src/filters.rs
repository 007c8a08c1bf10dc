//! DevTools' named node filters ("objects retained by detached DOM nodes", by the console,
//! by event handlers, by closure contexts; native-context attribution). The "retained by X"
//! filters keep the nodes that become unreachable when X's edges are cut.

use crate::HeapError;
use crate::snapshot::*;

/// A filter name as the tools take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeFilter {
    RetainedByDetachedDom,
    RetainedByConsole,
    RetainedByEventHandlers,
    RetainedByContexts,
    SharedNativeContext,
    NoNativeContext,
    /// Attributed to the native context with this node index.
    NativeContext(usize),
}

impl NodeFilter {
    /// The filter for a tool's `filterName` (and `objectId` for a specific native context).
    pub fn from_params(
        snapshot: &HeapSnapshot,
        name: Option<&str>,
        object_id: Option<f64>,
    ) -> Result<Option<NodeFilter>, HeapError> {
        Ok(Some(match name {
            None => return Ok(None),
            Some("objectsRetainedByDetachedDomNodes") => NodeFilter::RetainedByDetachedDom,
            Some("objectsRetainedByConsole") => NodeFilter::RetainedByConsole,
            Some("objectsRetainedByEventHandlers") => NodeFilter::RetainedByEventHandlers,
            Some("objectsRetainedByContexts") => NodeFilter::RetainedByContexts,
            Some("sharedNativeContext") => NodeFilter::SharedNativeContext,
            Some("noNativeContext") => NodeFilter::NoNativeContext,
            Some("attributedToSpecificNativeContext") => {
                let id = object_id.ok_or_else(|| {
                    HeapError::Query(
                        "objectId is required when filterName is attributedToSpecificNativeContext"
                            .into(),
                    )
                })?;
                let ni = snapshot.node_index_for_id(id).ok_or_else(|| {
                    HeapError::Query(format!(
                        "Node with ID {} not found",
                        crate::format::js_number(id)
                    ))
                })?;
                NodeFilter::NativeContext(ni)
            }
            Some(_) => return Err(HeapError::Query("Invalid filter name".into())),
        }))
    }
}

impl HeapSnapshot {
    /// Which nodes pass `filter`, one flag per ordinal.
    pub(crate) fn filter_mask(&self, filter: &NodeFilter) -> Vec<bool> {
        match filter {
            NodeFilter::RetainedByContexts => {
                self.unreachable_when(|_, ei| !self.is_context_object(self.edge_to(ei)))
            }
            NodeFilter::RetainedByDetachedDom => {
                self.unreachable_when(|_, ei| self.detachedness_of(self.edge_to(ei)) != DETACHED)
            }
            NodeFilter::RetainedByConsole => self.unreachable_when(|ni, ei| {
                !(self.is_synthetic(ni)
                    && self.edge_has_string_name(ei)
                    && self.edge_name(ei).ends_with(" / DevTools console"))
            }),
            NodeFilter::RetainedByEventHandlers => {
                let handlers = self.event_handler_nodes();
                self.unreachable_when(|_, ei| !handlers[self.edge_to(ei) / self.nf])
            }
            NodeFilter::SharedNativeContext => self
                .native_attribution
                .iter()
                .map(|&owner| owner == SHARED_NATIVE_CONTEXT)
                .collect(),
            NodeFilter::NoNativeContext => self
                .native_attribution
                .iter()
                .map(|&owner| owner == NO_NATIVE_CONTEXT)
                .collect(),
            NodeFilter::NativeContext(ni) => {
                // DevTools compares with `nodeIndex / nodeFieldCount`, a fraction for an index
                // that is not a node's; such a filter matches nothing.
                let target = if ni % self.nf == 0 {
                    (ni / self.nf) as i32
                } else {
                    -3
                };
                self.native_attribution
                    .iter()
                    .map(|&owner| owner == target)
                    .collect()
            }
        }
    }

    /// Nodes reachable from the root (not through weak edges) only when `keep_edge` is
    /// ignored: the filter keeps what a breadth-first walk that honours `keep_edge` cannot
    /// reach, minus what is unreachable anyway.
    fn unreachable_when(&self, keep_edge: impl Fn(usize, usize) -> bool) -> Vec<bool> {
        let mut reached = vec![false; self.node_count];
        let mut queue: Vec<usize> = vec![self.root];
        reached[self.root / self.nf] = true;
        let mut head = 0;
        while head < queue.len() {
            let ni = queue[head];
            head += 1;
            for ei in self.edge_indexes(ni) {
                if self.edge_type(ei) == self.et.weak {
                    continue;
                }
                let child = self.edge_to(ei);
                if reached[child / self.nf] || !keep_edge(ni, ei) {
                    continue;
                }
                reached[child / self.nf] = true;
                queue.push(child);
            }
        }
        (0..self.node_count)
            .map(|ordinal| !reached[ordinal] && self.distances[ordinal] != NO_DISTANCE)
            .collect()
    }

    /// The functions registered as event listeners (`V8EventListener` objects' callbacks,
    /// or the first of their children that has code).
    fn event_handler_nodes(&self) -> Vec<bool> {
        let mut handlers = vec![false; self.node_count];
        for ordinal in 0..self.node_count {
            let ni = ordinal * self.nf;
            if self.raw_name(ni) != "V8EventListener" {
                continue;
            }
            let Some(callback) = self.edge_target(ni, "1") else {
                continue;
            };
            if self.edge_target(callback, "code").is_some() {
                handlers[callback / self.nf] = true;
                continue;
            }
            let child_with_code = self
                .edge_indexes(callback)
                .map(|ei| self.edge_to(ei))
                .find(|&child| self.edge_target(child, "code").is_some());
            match child_with_code {
                Some(child) => handlers[child / self.nf] = true,
                None => handlers[callback / self.nf] = true,
            }
        }
        handlers
    }

    /// DevTools' duplicated-strings filter: strings (not flat cons strings, not empty) whose
    /// value occurs more than once; truncated strings must also agree on length and hash.
    pub(crate) fn duplicated_strings_mask(&self) -> Vec<bool> {
        use std::collections::HashMap;
        let mut mask = vec![false; self.node_count];
        let mut seen: HashMap<String, usize> = HashMap::new();
        // Per value: (node index, length, hash) of the first of each length and hash.
        type Firsts = Vec<(usize, Option<i64>, Option<i64>)>;
        let mut truncated: HashMap<String, Firsts> = HashMap::new();
        for ordinal in 0..self.node_count {
            let ni = ordinal * self.nf;
            let kind = self.raw_type(ni);
            if kind != self.nt.string && kind != self.nt.cons_string {
                continue;
            }
            if self.is_flat_cons_string(ni) || self.self_size(ni) == 0 {
                continue;
            }
            let name = self.node_name(ni);
            if self.is_truncated_string(ni) {
                let length = self.string_length(ni);
                let hash = self.string_hash(ni);
                let entries = truncated.entry(name).or_default();
                match entries.iter().find(|(_, l, h)| *l == length && *h == hash) {
                    Some(&(first, _, _)) => {
                        mask[first / self.nf] = true;
                        mask[ordinal] = true;
                    }
                    None => entries.push((ni, length, hash)),
                }
            } else {
                match seen.get(&name) {
                    None => {
                        seen.insert(name, ni);
                    }
                    Some(&first) => {
                        mask[first / self.nf] = true;
                        mask[ordinal] = true;
                    }
                }
            }
        }
        mask
    }
}
