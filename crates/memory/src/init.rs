//! The analyses run once per loaded snapshot, in the DevTools frontend's order (the order
//! matters: DOM state renames detached nodes, shallow sizes move bytes between nodes before
//! retained sizes are summed, and so on).

use crate::HeapError;
use crate::snapshot::*;

impl HeapSnapshot {
    /// Runs the analyses in order; `check` between them stops a load whose caller has gone.
    pub(crate) fn initialize(
        &mut self,
        check: &dyn Fn() -> Result<(), HeapError>,
    ) -> Result<(), HeapError> {
        self.build_edge_indexes();
        self.build_retainers();
        check()?;
        self.init_detachedness();
        self.propagate_dom_state();
        self.calculate_flags();
        check()?;
        let essential = self.essential_edges();
        self.calculate_shallow_sizes();
        check()?;
        self.calculate_dominators_and_retained_sizes(&essential)?;
        check()?;
        self.build_dominated_nodes()?;
        self.calculate_distances();
        check()?;
        self.calculate_object_names();
        let definitions = self.infer_interface_definitions();
        self.apply_interface_definitions(definitions);
        check()?;
        self.calculate_native_context_attribution();
        self.calculate_native_context_sizes();
        self.calculate_statistics();
        Ok(())
    }

    fn build_edge_indexes(&mut self) {
        let mut first = Vec::with_capacity(self.node_count + 1);
        let mut edge_index: u64 = 0;
        for node in self.nodes.chunks_exact(self.nf) {
            first.push(edge_index as u32);
            edge_index += u64::from(node[self.o_edge_count]) * self.ef as u64;
        }
        first.push(self.edges.len() as u32);
        self.first_edge = first;
    }

    /// Retainers per node, filled back to front as DevTools does (so the order of a node's
    /// retainers is the reverse of the edge order).
    fn build_retainers(&mut self) {
        let edge_count = self.edges.len() / self.ef;
        let mut retaining_nodes = vec![0u32; edge_count];
        let mut retaining_edges = vec![0u32; edge_count];
        let mut first = vec![0u32; self.node_count + 1];
        for edge in self.edges.chunks_exact(self.ef) {
            first[edge[self.e_to] as usize / self.nf] += 1;
        }
        let mut slot = 0u32;
        for entry in first.iter_mut().take(self.node_count) {
            let count = *entry;
            *entry = slot;
            if (slot as usize) < edge_count {
                retaining_nodes[slot as usize] = count;
            }
            slot += count;
        }
        first[self.node_count] = edge_count as u32;
        for src in 0..self.node_count {
            let src_index = (src * self.nf) as u32;
            for ei in
                (self.first_edge[src] as usize..self.first_edge[src + 1] as usize).step_by(self.ef)
            {
                let to = self.edges[ei + self.e_to] as usize / self.nf;
                let first_slot = first[to] as usize;
                retaining_nodes[first_slot] -= 1;
                let next = first_slot + retaining_nodes[first_slot] as usize;
                retaining_nodes[next] = src_index;
                retaining_edges[next] = ei as u32;
            }
        }
        self.retaining_nodes = retaining_nodes;
        self.retaining_edges = retaining_edges;
        self.first_retainer = first;
    }

    fn init_detachedness(&mut self) {
        self.class_index = vec![0; self.node_count];
        self.detachedness = vec![UNKNOWN; self.node_count];
        match self.o_detachedness {
            Some(offset) => {
                for ordinal in 0..self.node_count {
                    // DevTools keeps the class index in the upper bits of the same word.
                    self.detachedness[ordinal] = (self.nodes[ordinal * self.nf + offset] & 3) as u8;
                }
            }
            None => {
                for ordinal in 0..self.node_count {
                    let ni = ordinal * self.nf;
                    if self.raw_type(ni) == self.nt.native
                        && self.node_name(ni).starts_with("Detached ")
                    {
                        self.detachedness[ordinal] = DETACHED;
                    }
                }
            }
        }
    }

    /// Spreads attached/detached from the nodes V8 marked to the native nodes they hold
    /// (not through hidden, invisible or weak edges); detached ones get a `Detached ` name.
    fn propagate_dom_state(&mut self) {
        if self.o_detachedness.is_none() {
            return;
        }
        let mut visited = vec![false; self.node_count];
        let mut attached: Vec<usize> = Vec::new();
        let mut detached: Vec<usize> = Vec::new();
        let mut renamed: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
        let process = |snapshot: &mut HeapSnapshot,
                       visited: &mut Vec<bool>,
                       attached: &mut Vec<usize>,
                       detached: &mut Vec<usize>,
                       renamed: &mut std::collections::HashMap<u32, u32>,
                       ordinal: usize,
                       state: u8| {
            if visited[ordinal] {
                return;
            }
            let ni = ordinal * snapshot.nf;
            if snapshot.raw_type(ni) != snapshot.nt.native {
                visited[ordinal] = true;
                return;
            }
            snapshot.detachedness[ordinal] = state;
            if state == ATTACHED {
                attached.push(ordinal);
            } else if state == DETACHED {
                let old = snapshot.nodes[ni + snapshot.o_name];
                let new = match renamed.get(&old) {
                    Some(&new) => new,
                    None => {
                        let name = format!("Detached {}", snapshot.strings[old as usize]);
                        snapshot.strings.push(name);
                        let new = (snapshot.strings.len() - 1) as u32;
                        renamed.insert(old, new);
                        new
                    }
                };
                snapshot.nodes[ni + snapshot.o_name] = new;
                detached.push(ordinal);
            }
            visited[ordinal] = true;
        };
        for ordinal in 0..self.node_count {
            let state = self.detachedness[ordinal];
            if state == UNKNOWN {
                continue;
            }
            process(
                self,
                &mut visited,
                &mut attached,
                &mut detached,
                &mut renamed,
                ordinal,
                state,
            );
        }
        let skip = [self.et.hidden, self.et.invisible, self.et.weak];
        while let Some(parent) = attached.pop() {
            for ei in self.edge_indexes(parent * self.nf) {
                if skip.contains(&self.edge_type(ei)) {
                    continue;
                }
                let child = self.edge_to(ei) / self.nf;
                process(
                    self,
                    &mut visited,
                    &mut attached,
                    &mut detached,
                    &mut renamed,
                    child,
                    ATTACHED,
                );
            }
        }
        while let Some(parent) = detached.pop() {
            if self.detachedness[parent] == ATTACHED {
                continue;
            }
            for ei in self.edge_indexes(parent * self.nf) {
                if skip.contains(&self.edge_type(ei)) {
                    continue;
                }
                let child = self.edge_to(ei) / self.nf;
                process(
                    self,
                    &mut visited,
                    &mut attached,
                    &mut detached,
                    &mut renamed,
                    child,
                    DETACHED,
                );
            }
        }
    }

    fn calculate_flags(&mut self) {
        self.flags = vec![0; self.node_count];
        for ordinal in 0..self.node_count {
            let ni = ordinal * self.nf;
            if self.raw_type(ni) == self.nt.native && self.detachedness[ordinal] == DETACHED {
                self.flags[ordinal] |= FLAG_DETACHED_DOM;
            }
        }
        // Objects reachable from user roots through ordinary references.
        let mut list: Vec<usize> = self
            .edge_indexes(self.root)
            .map(|ei| self.edge_to(ei))
            .filter(|&ni| self.is_user_root(ni))
            .map(|ni| ni / self.nf)
            .collect();
        let skip = [
            self.et.hidden,
            self.et.invisible,
            self.et.internal,
            self.et.weak,
        ];
        while let Some(ordinal) = list.pop() {
            if self.flags[ordinal] & FLAG_CAN_BE_QUERIED != 0 {
                continue;
            }
            self.flags[ordinal] |= FLAG_CAN_BE_QUERIED;
            for ei in self.edge_indexes(ordinal * self.nf) {
                let child = self.edge_to(ei) / self.nf;
                if self.flags[child] & FLAG_CAN_BE_QUERIED != 0
                    || skip.contains(&self.edge_type(ei))
                {
                    continue;
                }
                list.push(child);
            }
        }
        // Page-owned objects: from the root's shortcut edges and the document DOM trees.
        let mut stack: Vec<usize> = Vec::new();
        for ei in self.edge_indexes(self.root) {
            let kind = self.edge_type(ei);
            let ni = self.edge_to(ei);
            if kind == self.et.element {
                if !self.is_document_dom_trees_root(ni) {
                    continue;
                }
            } else if kind != self.et.shortcut {
                continue;
            }
            stack.push(ni / self.nf);
            self.flags[ni / self.nf] |= FLAG_PAGE_OBJECT;
        }
        while let Some(ordinal) = stack.pop() {
            for ei in self.edge_indexes(ordinal * self.nf) {
                let child = self.edge_to(ei) / self.nf;
                if self.flags[child] & FLAG_PAGE_OBJECT != 0 || self.edge_type(ei) == self.et.weak {
                    continue;
                }
                stack.push(child);
                self.flags[child] |= FLAG_PAGE_OBJECT;
            }
        }
    }

    /// `<n> / part of key (… @a) -> value (… @b) pair in WeakMap (table @t)`: the part after
    /// the leading number and the table id, when the name has that shape.
    pub(crate) fn weak_map_edge_parts(&self, name: &str) -> Option<(String, u32)> {
        if !name.as_bytes().first().is_some_and(u8::is_ascii_digit)
            || !name.contains(" / part of key (")
        {
            return None;
        }
        static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        let pattern = PATTERN.get_or_init(|| {
            regex::Regex::new(
                r"^\d+(?<part> / part of key \(.*? @\d+\) -> value \(.*? @\d+\) pair in WeakMap \(table @(?<table>\d+)\))$",
            )
            .expect("a valid pattern")
        });
        let captures = pattern.captures(name)?;
        let table = captures.name("table")?.as_str().parse().unwrap_or(u32::MAX);
        Some((captures.name("part")?.as_str().to_string(), table))
    }

    /// Edges the dominator tree follows: not weak, not a self reference, not the WeakMap
    /// table's own ephemeron edges, no shortcuts except from the root, and not from
    /// non-page objects into page objects.
    fn essential_edges(&self) -> Vec<bool> {
        let edge_count = self.edges.len() / self.ef;
        let mut essential = vec![false; edge_count];
        // Per edge-name string: 0 not looked at yet, 1 not an ephemeron name, 2 one (table id
        // in `tables`).
        let mut weak_map_state = vec![0u8; self.strings.len()];
        let mut tables: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
        for ordinal in 0..self.node_count {
            let ni = ordinal * self.nf;
            for ei in self.edge_indexes(ni) {
                let kind = self.edge_type(ei);
                if kind == self.et.internal {
                    let name_index = self.edge_name_or_index(ei);
                    let state = &mut weak_map_state[name_index as usize];
                    if *state == 0 {
                        *state = match self.weak_map_edge_parts(&self.strings[name_index as usize])
                        {
                            Some((_, table)) => {
                                tables.insert(name_index, table);
                                2
                            }
                            None => 1,
                        };
                    }
                    let table = (*state == 2).then(|| tables[&name_index]);
                    if table == Some(self.node_id(ni)) {
                        continue;
                    }
                }
                if kind == self.et.weak {
                    continue;
                }
                let child = self.edge_to(ei);
                if child == ni {
                    continue;
                }
                if ni != self.root {
                    if kind == self.et.shortcut {
                        continue;
                    }
                    let node_flag = self.flags[ordinal] & FLAG_PAGE_OBJECT != 0;
                    let child_flag = self.flags[child / self.nf] & FLAG_PAGE_OBJECT != 0;
                    if child_flag && !node_flag {
                        continue;
                    }
                }
                essential[ei / self.ef] = true;
            }
        }
        essential
    }

    /// Moves the size of objects owned by exactly one other object (arrays, hidden and
    /// external-string data) onto that owner, as DevTools' "shallow size" view does.
    fn calculate_shallow_sizes(&mut self) {
        let has_user_roots = self
            .edge_indexes(self.root)
            .any(|ei| self.is_user_root(self.edge_to(ei)));
        if !has_user_roots {
            return;
        }
        const UNVISITED: u32 = u32::MAX;
        const MULTIPLE: u32 = u32::MAX - 1;
        let mut owners = vec![0u32; self.node_count];
        let mut worklist: Vec<u32> = Vec::new();
        for (ordinal, owner) in owners.iter_mut().enumerate() {
            let ni = ordinal * self.nf;
            let kind = self.raw_type(ni);
            if kind == self.nt.hidden
                || kind == self.nt.array
                || (kind == self.nt.native && self.raw_name(ni) == "system / ExternalStringData")
            {
                *owner = UNVISITED;
            } else {
                *owner = ordinal as u32;
                worklist.push(ordinal as u32);
            }
        }
        while let Some(id) = worklist.pop() {
            let owner = owners[id as usize];
            for ei in self.edge_indexes(id as usize * self.nf) {
                if self.edge_type(ei) == self.et.weak {
                    continue;
                }
                let target = (self.edge_to(ei) / self.nf) as u32;
                let current = owners[target as usize];
                if current == UNVISITED {
                    owners[target as usize] = owner;
                    worklist.push(target);
                } else if current == target || current == owner || current == MULTIPLE {
                } else {
                    owners[target as usize] = MULTIPLE;
                    worklist.push(target);
                }
            }
        }
        for (ordinal, &owner) in owners.iter().enumerate() {
            if owner == UNVISITED || owner == MULTIPLE || owner as usize == ordinal {
                continue;
            }
            let owner_index = owner as usize * self.nf;
            if self.is_synthetic(owner_index) || self.is_root(owner_index) {
                continue;
            }
            let owned_index = ordinal * self.nf;
            let size = self.nodes[owned_index + self.o_self];
            self.nodes[owned_index + self.o_self] = 0;
            self.nodes[owner_index + self.o_self] =
                self.nodes[owner_index + self.o_self].wrapping_add(size);
        }
    }

    /// Breadth-first distances from the user roots (then from the root for the rest),
    /// skipping weak edges and the edges DevTools does not count.
    fn calculate_distances(&mut self) {
        let mut distances = vec![NO_DISTANCE; self.node_count];
        let mut queue: Vec<u32> = Vec::with_capacity(self.node_count);
        let mut pending = std::collections::HashSet::new();
        for ei in self.edge_indexes(self.root) {
            let ni = self.edge_to(ei);
            if self.is_user_root(ni) {
                distances[ni / self.nf] = 1;
                queue.push(ni as u32);
            }
        }
        let had_user_roots = !queue.is_empty();
        self.bfs(&mut queue, &mut distances, &mut pending);
        distances[self.root / self.nf] = if had_user_roots {
            BASE_SYSTEM_DISTANCE
        } else {
            0
        };
        queue.clear();
        queue.push(self.root as u32);
        self.bfs(&mut queue, &mut distances, &mut pending);
        self.distances = distances;
    }

    fn bfs(
        &self,
        queue: &mut Vec<u32>,
        distances: &mut [i32],
        pending: &mut std::collections::HashSet<String>,
    ) {
        let mut head = 0;
        while head < queue.len() {
            let ni = queue[head] as usize;
            head += 1;
            let distance = distances[ni / self.nf] + 1;
            for ei in self.edge_indexes(ni) {
                if self.edge_type(ei) == self.et.weak {
                    continue;
                }
                let child = self.edge_to(ei);
                if distances[child / self.nf] != NO_DISTANCE {
                    continue;
                }
                if !self.distance_filter(ni, ei, pending) {
                    continue;
                }
                distances[child / self.nf] = distance;
                queue.push(child as u32);
            }
        }
    }

    /// The edges DevTools leaves out of distances: the native context's
    /// `sloppy_function_map`, every third map-descriptor slot, and the first half of each
    /// WeakMap ephemeron pair.
    fn distance_filter(
        &self,
        ni: usize,
        ei: usize,
        pending: &mut std::collections::HashSet<String>,
    ) -> bool {
        let kind = self.raw_type(ni);
        if kind == self.nt.hidden
            && self.raw_name(ni) == "system / NativeContext"
            && self.edge_name_matches(ei, "sloppy_function_map")
        {
            return false;
        }
        if kind == self.nt.array && self.raw_name(ni) == "(map descriptors)" {
            let index = js_parse_int(&self.edge_name(ei));
            return match index {
                Some(index) => index < 2 || index % 3 != 1,
                // `NaN % 3 !== 1` holds in JavaScript.
                None => true,
            };
        }
        if self.edge_type(ei) == self.et.internal
            && let Some((part, _)) =
                self.weak_map_edge_parts(&self.strings[self.edge_name_or_index(ei) as usize])
            && !pending.remove(&part)
        {
            pending.insert(part);
            return false;
        }
        true
    }
}
