//! Per-object queries: nodes and edges as the tools list them, retainers, retaining paths,
//! dominator chains, object details, duplicate strings and the object query.

use crate::HeapError;
use crate::names::js_cmp;
use crate::snapshot::*;
use std::cmp::Ordering;

/// A node as listed (`nodeId,nodeName,type,distance,selfSize,retainedSize`).
#[derive(Debug, Clone)]
pub struct NodeItem {
    pub id: u32,
    pub name: String,
    pub kind: String,
    pub distance: i32,
    pub self_size: u64,
    pub retained_size: u64,
}

/// An edge as listed (`name,type,nodeId,nodeName,selfSize,retainedSize`).
#[derive(Debug, Clone)]
pub struct EdgeItem {
    pub name: String,
    pub kind: String,
    pub node: NodeItem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeSort {
    RetainedSize,
    SelfSize,
    Name,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuerySort {
    RetainedSize,
    SelfSize,
    Id,
}

#[derive(Debug, Clone, Default)]
pub struct ObjectQuery {
    pub class_name: Option<String>,
    pub property_name: Option<String>,
    pub node_type: Option<String>,
    pub min_retained_size: Option<u64>,
    pub max_retained_size: Option<u64>,
    pub min_self_size: Option<u64>,
    pub max_self_size: Option<u64>,
    pub is_detached: Option<bool>,
    pub sort_by: Option<QuerySort>,
}

/// One step of a retaining path, with the paths that lead to it.
#[derive(Debug)]
pub struct PathEdge {
    pub node_id: u32,
    pub node_name: String,
    pub edge_type: String,
    pub edge_name: String,
    pub distance: i32,
    pub children: Vec<PathEdge>,
}

/// Dropped with a stack of its own: the derived drop would recurse once per step of a path.
impl Drop for PathEdge {
    fn drop(&mut self) {
        let mut pending = std::mem::take(&mut self.children);
        while let Some(mut edge) = pending.pop() {
            pending.append(&mut edge.children);
        }
    }
}

#[derive(Debug, Default)]
pub struct RetainingPaths {
    pub paths: Vec<PathEdge>,
    /// Limits hit, in the order they were first hit (`nodes`, `depth`, `siblings`).
    pub limits_reached: Vec<&'static str>,
}

#[derive(Debug, Clone)]
pub struct DominatorItem {
    pub node_id: u32,
    pub node_name: String,
    pub self_size: u64,
    pub retained_size: u64,
}

#[derive(Debug, Clone)]
pub struct ObjectInfo {
    pub id: u32,
    pub name: String,
    pub kind: String,
    pub detachedness: u8,
    pub self_size: u64,
    pub retained_size: u64,
    pub distance: i32,
    pub edge_count: usize,
    pub retainer_count: usize,
}

#[derive(Debug, Clone)]
pub struct StringGroup {
    pub value: String,
    pub count: u64,
    pub total_self_size: u64,
    pub total_retained_size: u64,
    pub truncated: bool,
    pub ids: Vec<u32>,
}

impl HeapSnapshot {
    pub(crate) fn node_item(&self, ni: usize) -> NodeItem {
        NodeItem {
            id: self.node_id(ni),
            name: self.node_name(ni),
            kind: self.type_name(ni).to_string(),
            distance: self.distance(ni),
            self_size: self.self_size(ni),
            retained_size: self.retained_size(ni),
        }
    }

    /// A node's outgoing edges (not invisible), optionally only targets retaining at least
    /// `min_retained`, and without primitives (numbers, `undefined`, `null`, booleans).
    pub fn edges_of(
        &self,
        ni: usize,
        sort: EdgeSort,
        min_retained: Option<u64>,
        exclude_primitives: bool,
    ) -> Vec<EdgeItem> {
        let mut edges: Vec<usize> = self
            .edge_indexes(ni)
            .filter(|&ei| {
                if self.edge_type(ei) == self.et.invisible {
                    return false;
                }
                let target = self.edge_to(ei);
                if min_retained.is_some_and(|min| self.retained_size(target) < min) {
                    return false;
                }
                if exclude_primitives {
                    let kind = self.raw_type(target);
                    if kind == self.nt.number {
                        return false;
                    }
                    if kind == self.nt.native
                        && matches!(
                            self.raw_name(target),
                            "undefined" | "null" | "true" | "false"
                        )
                    {
                        return false;
                    }
                }
                true
            })
            .collect();
        let by_name = |a: usize, b: usize| self.compare_edge_names(a, b);
        let by_node = |a: usize, b: usize, field: fn(&HeapSnapshot, usize) -> u64| {
            // Descending.
            field(self, self.edge_to(b)).cmp(&field(self, self.edge_to(a)))
        };
        edges.sort_by(|&a, &b| {
            let first = match sort {
                EdgeSort::RetainedSize => {
                    by_node(a, b, HeapSnapshot::retained_size).then_with(|| by_name(a, b))
                }
                EdgeSort::SelfSize => {
                    by_node(a, b, HeapSnapshot::self_size).then_with(|| by_name(a, b))
                }
                EdgeSort::Name => {
                    by_name(a, b).then_with(|| by_node(a, b, HeapSnapshot::retained_size))
                }
            };
            first.then(a.cmp(&b))
        });
        edges
            .into_iter()
            .map(|ei| self.edge_item(ei, self.edge_to(ei)))
            .collect()
    }

    /// DevTools' edge-name order: `__proto__` last, named edges before indexed ones, then by
    /// the name's text.
    fn compare_edge_names(&self, a: usize, b: usize) -> Ordering {
        let (name_a, name_b) = (self.edge_name(a), self.edge_name(b));
        if name_b == "__proto__" {
            return Ordering::Less;
        }
        if name_a == "__proto__" {
            return Ordering::Greater;
        }
        let (string_a, string_b) = (self.edge_has_string_name(a), self.edge_has_string_name(b));
        if string_a == string_b {
            js_cmp(&name_a, &name_b)
        } else if string_a {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    }

    fn edge_item(&self, ei: usize, node: usize) -> EdgeItem {
        EdgeItem {
            name: self.edge_name(ei),
            kind: self.edge_type_name(ei).to_string(),
            node: self.node_item(node),
        }
    }

    /// The edges that hold a node (not from the root, not weak, not invisible).
    pub fn retainers_of(&self, ni: usize) -> Vec<EdgeItem> {
        self.retainer_slots(ni)
            .filter_map(|slot| {
                let ei = self.retaining_edges[slot] as usize;
                let retainer = self.retaining_nodes[slot] as usize;
                let kind = self.edge_type(ei);
                (kind != self.et.invisible && !self.is_root(retainer) && kind != self.et.weak)
                    .then(|| self.edge_item(ei, retainer))
            })
            .collect()
    }

    pub fn retaining_paths(
        &self,
        ni: usize,
        max_depth: f64,
        max_nodes: f64,
        max_siblings: f64,
    ) -> RetainingPaths {
        let mut walk = PathWalk {
            snapshot: self,
            // Each step of a path is printed indented by its depth: past this bound the text
            // would grow with the square of a depth the caller picks.
            max_depth: max_depth.min(MAX_PATH_DEPTH),
            max_nodes,
            max_siblings,
            traversed: 0,
            visiting: std::collections::HashSet::new(),
            visited: std::collections::HashMap::new(),
            limits: Vec::new(),
        };
        let paths = walk.forest(ni);
        RetainingPaths {
            paths,
            limits_reached: walk.limits,
        }
    }

    pub fn dominators_of(&self, ni: usize) -> Vec<DominatorItem> {
        let mut chain = Vec::new();
        let mut current = ni;
        loop {
            chain.push(DominatorItem {
                node_id: self.node_id(current),
                node_name: self.node_name(current),
                self_size: self.self_size(current),
                retained_size: self.retained_size(current),
            });
            if current == self.root {
                break;
            }
            let next = self.dominators[current / self.nf] as usize * self.nf;
            if next == current || next >= self.nodes.len() {
                break;
            }
            current = next;
        }
        chain
    }

    pub fn object_info(&self, ni: usize) -> ObjectInfo {
        ObjectInfo {
            id: self.node_id(ni),
            name: self.node_name(ni),
            kind: self.type_name(ni).to_string(),
            detachedness: self.detachedness_of(ni),
            self_size: self.self_size(ni),
            retained_size: self.retained_size(ni),
            distance: self.distance(ni),
            edge_count: self.edge_count_of(ni),
            retainer_count: self.retainer_count_of(ni),
        }
    }

    /// Strings that occur more than once, grouped by value, largest retained total first.
    pub fn duplicate_strings(&self) -> Vec<StringGroup> {
        let mask = self.duplicated_strings_mask();
        let mut plain: indexmap::IndexMap<String, StringGroup> = indexmap::IndexMap::new();
        type TruncatedKey = (Option<i64>, Option<i64>);
        let mut truncated: indexmap::IndexMap<String, Vec<(TruncatedKey, StringGroup)>> =
            indexmap::IndexMap::new();
        for (ordinal, _) in mask
            .iter()
            .enumerate()
            .filter(|(_, duplicated)| **duplicated)
        {
            let ni = ordinal * self.nf;
            let name = self.node_name(ni);
            let group = if self.is_truncated_string(ni) {
                let key = (self.string_length(ni), self.string_hash(ni));
                let groups = truncated.entry(name.clone()).or_default();
                let at = match groups.iter().position(|(k, _)| *k == key) {
                    Some(at) => at,
                    None => {
                        groups.push((key, new_group(name, true)));
                        groups.len() - 1
                    }
                };
                &mut groups[at].1
            } else {
                plain
                    .entry(name.clone())
                    .or_insert_with(|| new_group(name, false))
            };
            group.count += 1;
            group.total_self_size += self.self_size(ni);
            group.total_retained_size += self.retained_size(ni);
            group.ids.push(self.node_id(ni));
        }
        let mut groups: Vec<StringGroup> = plain.into_values().collect();
        groups.extend(truncated.into_values().flatten().map(|(_, group)| group));
        groups.sort_by_key(|group| std::cmp::Reverse(group.total_retained_size));
        groups
    }

    /// Objects matching every given condition, sorted as asked (then, as the tool lists
    /// them, by retained size).
    pub fn query_objects(&self, query: &ObjectQuery) -> Result<Vec<usize>, HeapError> {
        let class_pattern = query
            .class_name
            .as_deref()
            .map(case_insensitive)
            .transpose()?;
        let property_pattern = query
            .property_name
            .as_deref()
            .map(case_insensitive)
            .transpose()?;
        let node_type = query.node_type.as_deref().map(str::to_lowercase);
        let mut matching = Vec::new();
        for ordinal in 0..self.node_count {
            let ni = ordinal * self.nf;
            let self_size = self.self_size(ni);
            if query.min_self_size.is_some_and(|min| self_size < min)
                || query.max_self_size.is_some_and(|max| self_size > max)
            {
                continue;
            }
            let retained = self.retained[ordinal];
            if query.min_retained_size.is_some_and(|min| retained < min)
                || query.max_retained_size.is_some_and(|max| retained > max)
            {
                continue;
            }
            if let Some(detached) = query.is_detached
                && (self.detachedness[ordinal] == DETACHED) != detached
            {
                continue;
            }
            if let Some(pattern) = &class_pattern
                && !pattern.is_match(&self.node_name(ni))
            {
                continue;
            }
            if let Some(wanted) = &node_type
                && self.type_name(ni).to_lowercase() != *wanted
            {
                continue;
            }
            if let Some(pattern) = &property_pattern
                && !self
                    .edge_indexes(ni)
                    .any(|ei| pattern.is_match(&self.edge_name(ei)))
            {
                continue;
            }
            matching.push(ni);
        }
        match query.sort_by.unwrap_or(QuerySort::RetainedSize) {
            QuerySort::RetainedSize => {
                matching.sort_by_key(|&ni| std::cmp::Reverse(self.retained_size(ni)))
            }
            QuerySort::SelfSize => {
                matching.sort_by_key(|&ni| std::cmp::Reverse(self.self_size(ni)))
            }
            QuerySort::Id => matching.sort_by_key(|&ni| self.node_id(ni)),
        }
        Ok(matching)
    }

    pub fn node_items(&self, indexes: &[usize]) -> Vec<NodeItem> {
        indexes.iter().map(|&ni| self.node_item(ni)).collect()
    }
}

fn new_group(value: String, truncated: bool) -> StringGroup {
    StringGroup {
        value,
        count: 0,
        total_self_size: 0,
        total_retained_size: 0,
        truncated,
        ids: Vec::new(),
    }
}

/// A `new RegExp(text, 'i')` equivalent; JavaScript-only syntax is refused with a clear error.
fn case_insensitive(text: &str) -> Result<regex::Regex, HeapError> {
    regex::RegexBuilder::new(text)
        .case_insensitive(true)
        .size_limit(1 << 20)
        .build()
        .map_err(|error| {
            HeapError::Query(format!("Invalid regular expression: /{text}/i: {error}"))
        })
}

struct PathWalk<'a> {
    snapshot: &'a HeapSnapshot,
    max_depth: f64,
    max_nodes: f64,
    max_siblings: f64,
    traversed: u64,
    visiting: std::collections::HashSet<usize>,
    visited: std::collections::HashMap<usize, u32>,
    limits: Vec<&'static str>,
}

impl PathWalk<'_> {
    fn hit(&mut self, limit: &'static str) {
        if !self.limits.contains(&limit) {
            self.limits.push(limit);
        }
    }

    /// The retaining paths into `start`, depth first like the reference's recursion but with
    /// an explicit stack: a chain as long as the file makes it costs heap, never call stack.
    fn forest(&mut self, start: usize) -> Vec<PathEdge> {
        let mut stack = match self.enter(start, 0) {
            Some(frame) => vec![frame],
            None => return Vec::new(),
        };
        loop {
            let Some(frame) = stack.last_mut() else {
                return Vec::new();
            };
            match self.advance(frame) {
                Step::Descend(retainer, depth) => {
                    if let Some(child) = self.enter(retainer, depth) {
                        stack.push(child);
                    }
                }
                Step::Done => {
                    let Some(done) = stack.pop() else {
                        return Vec::new();
                    };
                    self.visiting.remove(&done.current);
                    self.visited.insert(done.current, done.depth);
                    match stack.last_mut() {
                        Some(parent) => parent.adopt(self.snapshot, done.forest),
                        None => return done.forest,
                    }
                }
            }
        }
    }

    /// Starts the walk at `current`, or `None` when it has no paths to give (a limit, a root,
    /// a cycle or a node already walked at a lesser depth).
    fn enter(&mut self, current: usize, depth: u32) -> Option<Frame> {
        let s = self.snapshot;
        self.traversed += 1;
        if self.traversed as f64 > self.max_nodes {
            self.hit("nodes");
            return None;
        }
        if f64::from(depth) >= self.max_depth {
            self.hit("depth");
            return None;
        }
        if s.distance(current) <= ROOT_DISTANCE || self.visiting.contains(&current) {
            return None;
        }
        if self
            .visited
            .get(&current)
            .is_some_and(|&cached| depth >= cached)
        {
            return None;
        }
        self.visiting.insert(current);
        let mut retainers: Vec<(usize, i32, usize)> = Vec::new();
        for slot in s.retainer_slots(current) {
            let retainer = s.retaining_nodes[slot] as usize;
            let distance = s.distance(retainer);
            let ei = s.retaining_edges[slot] as usize;
            if s.edge_type(ei) == s.et.weak {
                continue;
            }
            if distance >= 0 {
                let remaining = self.max_depth - f64::from(depth);
                if f64::from(distance - ROOT_DISTANCE) < remaining {
                    retainers.push((slot, distance, retainer));
                } else {
                    self.hit("depth");
                }
            }
        }
        retainers.sort_by_key(|&(_, distance, _)| distance);
        if retainers.len() as f64 > self.max_siblings {
            self.hit("siblings");
        }
        Some(Frame {
            current,
            depth,
            retainers,
            next: 0,
            forest: Vec::new(),
        })
    }

    /// Takes the frame's next retainer: a root is added at once; any other is walked into.
    fn advance(&mut self, frame: &mut Frame) -> Step {
        let s = self.snapshot;
        while let Some(&(slot, distance, retainer)) = frame.retainers.get(frame.next) {
            if frame.next as f64 >= self.max_siblings {
                break;
            }
            frame.next += 1;
            if distance != ROOT_DISTANCE {
                return Step::Descend(retainer, frame.depth + 1);
            }
            self.traversed += 1;
            if self.traversed as f64 > self.max_nodes {
                self.hit("nodes");
                break;
            }
            let ei = s.retaining_edges[slot] as usize;
            frame
                .forest
                .push(path_edge(s, retainer, ei, distance, Vec::new()));
        }
        frame.next = frame.retainers.len();
        Step::Done
    }
}

const ROOT_DISTANCE: i32 = 2;
/// The deepest retaining path walked, whatever `maxDepth` asks (reached, it is reported as the
/// `depth` limit).
pub const MAX_PATH_DEPTH: f64 = 1_000.0;

/// One node being walked: its retainers, the next one to take, the paths found so far.
struct Frame {
    current: usize,
    depth: u32,
    retainers: Vec<(usize, i32, usize)>,
    next: usize,
    forest: Vec<PathEdge>,
}

enum Step {
    Descend(usize, u32),
    Done,
}

impl Frame {
    /// The paths through the retainer last descended into; one without any is left out.
    fn adopt(&mut self, s: &HeapSnapshot, children: Vec<PathEdge>) {
        if children.is_empty() {
            return;
        }
        let Some(&(slot, distance, retainer)) =
            self.next.checked_sub(1).and_then(|i| self.retainers.get(i))
        else {
            return;
        };
        let ei = s.retaining_edges[slot] as usize;
        self.forest
            .push(path_edge(s, retainer, ei, distance, children));
    }
}

fn path_edge(
    s: &HeapSnapshot,
    retainer: usize,
    ei: usize,
    distance: i32,
    children: Vec<PathEdge>,
) -> PathEdge {
    PathEdge {
        node_id: s.node_id(retainer),
        node_name: s.node_name(retainer),
        edge_type: s.edge_type_name(ei).to_string(),
        edge_name: s.edge_name(ei),
        distance,
        children,
    }
}
