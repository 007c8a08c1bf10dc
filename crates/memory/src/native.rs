//! Native contexts (one per realm: a page, an iframe, an extension world) and which of them
//! each object belongs to; plus the summary statistics.

use crate::snapshot::*;

impl HeapSnapshot {
    pub(crate) fn calculate_native_context_attribution(&mut self) {
        let count = self.node_count;
        let mut attribution = vec![NO_NATIVE_CONTEXT; count];
        let mut fixed = vec![false; count];
        let (native_context_of, map_of) = self.init_edge_targets();
        let mut ordinals = Vec::new();
        for ordinal in 0..count {
            if self.is_native_context(ordinal) {
                ordinals.push(ordinal as u32);
                attribution[ordinal] = ordinal as i32;
                fixed[ordinal] = true;
            } else {
                // An object's map's map (the meta map) names its native context.
                let map = map_of[ordinal];
                if map >= 0 {
                    let meta_map = map_of[map as usize];
                    if meta_map >= 0 {
                        let owner = native_context_of[meta_map as usize];
                        if owner >= 0 {
                            attribution[ordinal] = owner;
                            fixed[ordinal] = true;
                        }
                    }
                }
            }
        }
        // Spread owners along strong edges; objects reached from two contexts are shared.
        let mut queue: Vec<usize> = (0..count).filter(|&o| fixed[o]).collect();
        let mut head = 0;
        while head < queue.len() {
            let ordinal = queue[head];
            head += 1;
            let current = attribution[ordinal];
            for ei in self.edge_indexes(ordinal * self.nf) {
                let kind = self.edge_type(ei);
                if kind == self.et.shortcut || kind == self.et.weak {
                    continue;
                }
                let child = self.edge_to(ei) / self.nf;
                if child == ordinal || fixed[child] {
                    continue;
                }
                let merged = merge_owner(attribution[child], current);
                if merged != attribution[child] {
                    attribution[child] = merged;
                    queue.push(child);
                }
            }
        }
        self.native_attribution = attribution;
        self.native_context_ordinals = ordinals;
    }

    /// Per node: the target of its first internal `native_context` edge that is a native
    /// context, and of its first internal `map` edge.
    fn init_edge_targets(&self) -> (Vec<i32>, Vec<i32>) {
        let mut native_context = vec![-1i32; self.node_count];
        let mut map = vec![-1i32; self.node_count];
        let native_context_name = self.strings.iter().position(|s| s == "native_context");
        let map_name = self.strings.iter().position(|s| s == "map");
        for ordinal in 0..self.node_count {
            for ei in self.edge_indexes(ordinal * self.nf) {
                if self.edge_type(ei) != self.et.internal {
                    continue;
                }
                let name = Some(self.edge_name_or_index(ei) as usize);
                let child = self.edge_to(ei) / self.nf;
                if name == native_context_name
                    && native_context[ordinal] == -1
                    && self.is_native_context(child)
                {
                    native_context[ordinal] = child as i32;
                } else if name == map_name && map[ordinal] == -1 {
                    map[ordinal] = child as i32;
                }
            }
        }
        (native_context, map)
    }

    pub(crate) fn calculate_native_context_sizes(&mut self) {
        let mut contexts: Vec<NativeContextInfo> = self
            .native_context_ordinals
            .iter()
            .map(|&ordinal| {
                let ni = ordinal as usize * self.nf;
                NativeContextInfo {
                    node_id: self.node_id(ni),
                    node_name: self.node_name(ni),
                    attributed_size: 0,
                    retained_size: self.retained_size(ni),
                    self_size: self.self_size(ni),
                }
            })
            .collect();
        let position: std::collections::HashMap<u32, usize> = self
            .native_context_ordinals
            .iter()
            .enumerate()
            .map(|(i, &ordinal)| (ordinal, i))
            .collect();
        let mut shared = 0;
        let mut none = 0;
        for ordinal in 0..self.node_count {
            let size = self.self_size(ordinal * self.nf);
            match self.native_attribution[ordinal] {
                SHARED_NATIVE_CONTEXT => shared += size,
                NO_NATIVE_CONTEXT => none += size,
                owner => {
                    if let Some(&i) = position.get(&(owner as u32)) {
                        contexts[i].attributed_size += size;
                    }
                }
            }
        }
        self.native_context_sizes = NativeContextSizes {
            native_contexts: contexts,
            shared_size: shared,
            no_attribution_size: none,
        };
    }

    /// The root's retained size plus the bytes V8 reports outside its heap.
    pub(crate) fn total_size(&self) -> f64 {
        self.retained_size(self.root) as f64 + self.extra_native_bytes
    }

    pub(crate) fn calculate_statistics(&mut self) {
        let mut native = self.extra_native_bytes;
        let mut typed_arrays = 0.0;
        let mut code = 0.0;
        let mut strings = 0.0;
        let mut js_arrays = 0.0;
        let mut system = 0.0;
        for ordinal in 0..self.node_count {
            let ni = ordinal * self.nf;
            let size = self.self_size(ni) as f64;
            let kind = self.raw_type(ni);
            if kind == self.nt.hidden {
                system += size;
                continue;
            }
            if kind == self.nt.native {
                native += size;
                if self.raw_name(ni) == "system / JSArrayBufferData" {
                    typed_arrays += size;
                }
            } else if kind == self.nt.code {
                code += size;
            } else if kind == self.nt.cons_string
                || kind == self.nt.sliced_string
                || kind == self.nt.string
            {
                strings += size;
            } else if self.raw_name(ni) == "Array" {
                js_arrays += self.array_size(ni) as f64;
            }
        }
        let total = self.total_size();
        self.statistics = Statistics {
            total,
            native: NativeStatistics {
                total: native,
                typed_arrays,
            },
            v8heap: V8Statistics {
                total: total - native,
                code,
                js_arrays,
                strings,
                system,
            },
        };
    }

    /// An array's own size plus its `elements` store when nothing else holds that store.
    fn array_size(&self, ni: usize) -> u64 {
        let mut size = self.self_size(ni);
        for ei in self.edge_indexes(ni) {
            if self.edge_type(ei) != self.et.internal || self.edge_name_str(ei) != Some("elements")
            {
                continue;
            }
            let elements = self.edge_to(ei);
            if self.retainer_count_of(elements) == 1 {
                size += self.self_size(elements);
            }
            break;
        }
        size
    }
}

fn merge_owner(current: i32, incoming: i32) -> i32 {
    if current == SHARED_NATIVE_CONTEXT || incoming == SHARED_NATIVE_CONTEXT {
        return SHARED_NATIVE_CONTEXT;
    }
    if current == NO_NATIVE_CONTEXT || current == incoming {
        return incoming;
    }
    SHARED_NATIVE_CONTEXT
}
