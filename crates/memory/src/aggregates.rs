//! Per-class aggregates (count, self size, retained size) and the class diff of two
//! snapshots, with DevTools' ordering rules (first-seen class order, stable sorts).

use crate::names::{ClassKey, InterfaceMatcher};
use crate::snapshot::HeapSnapshot;
use indexmap::IndexMap;

#[derive(Debug, Clone)]
pub struct Aggregate {
    pub name: String,
    pub count: u64,
    pub self_size: u64,
    /// DevTools' `maxRet`: the retained size of the class's outermost instances.
    pub retained_size: u64,
    /// Node indexes, in node order.
    pub indexes: Vec<u32>,
}

/// One class in the base snapshot, for diffs: ids and self sizes sorted by id.
#[derive(Debug, Clone, Default)]
pub(crate) struct BaseClass {
    pub name: String,
    pub ids: Vec<u32>,
    pub self_sizes: Vec<u64>,
}

#[derive(Debug, Clone)]
pub struct ClassDiff {
    pub name: String,
    pub added_count: i64,
    pub removed_count: i64,
    pub added_size: i64,
    pub removed_size: i64,
    pub count_delta: i64,
    pub size_delta: i64,
    pub added_ids: Vec<u32>,
    pub added_self_sizes: Vec<u64>,
    pub deleted_ids: Vec<u32>,
    pub deleted_self_sizes: Vec<u64>,
}

impl HeapSnapshot {
    /// Aggregates by class text key (DevTools' `aggregatesWithFilter`), keeping the nodes
    /// with a non-zero self size that pass `mask`.
    pub fn aggregates(&self, mask: Option<&[bool]>) -> IndexMap<String, Aggregate> {
        let by_key = self.aggregates_by_key(mask, |ni| (self.class_key(ni), None));
        let mut out: IndexMap<String, Aggregate> = IndexMap::new();
        for (key, aggregate) in by_key {
            // Two internal keys with one text: the later replaces the earlier in place.
            out.insert(self.class_key_text(&key), aggregate);
        }
        out
    }

    fn aggregates_by_key(
        &self,
        mask: Option<&[bool]>,
        class_of: impl Fn(usize) -> (ClassKey, Option<String>),
    ) -> IndexMap<ClassKey, Aggregate> {
        let mut map: IndexMap<ClassKey, Aggregate> = IndexMap::new();
        // The aggregate slot of each counted node; u32::MAX for nodes not counted.
        let mut slots: Vec<u32> = vec![u32::MAX; self.node_count];
        // Plain class-index keys (almost every node) are found without hashing.
        let mut index_slots: Vec<u32> = vec![u32::MAX; self.strings.len()];
        for (ordinal, slot_of_node) in slots.iter_mut().enumerate() {
            let ni = ordinal * self.nf;
            if mask.is_some_and(|mask| !mask[ordinal]) {
                continue;
            }
            let size = self.self_size(ni);
            if size == 0 {
                continue;
            }
            let (key, name) = class_of(ni);
            let known = match &key {
                ClassKey::Index(index) => index_slots[*index as usize],
                other => map.get_index_of(other).map_or(u32::MAX, |slot| slot as u32),
            };
            let slot = if known != u32::MAX {
                let aggregate = &mut map[known as usize];
                aggregate.count += 1;
                aggregate.self_size += size;
                aggregate.indexes.push(ni as u32);
                known
            } else {
                let slot = map.len() as u32;
                if let ClassKey::Index(index) = &key {
                    index_slots[*index as usize] = slot;
                }
                map.insert(
                    key,
                    Aggregate {
                        name: name.unwrap_or_else(|| self.class_name(ni).to_string()),
                        count: 1,
                        self_size: size,
                        retained_size: 0,
                        indexes: vec![ni as u32],
                    },
                );
                slot
            };
            *slot_of_node = slot;
        }
        self.classes_retained_size(&mut map, &slots);
        map
    }

    /// Adds each class's retained size, counting an instance only when no dominator of it is
    /// already counted for the same class (a walk of the dominator tree).
    fn classes_retained_size(&self, map: &mut IndexMap<ClassKey, Aggregate>, slots: &[u32]) {
        let mut list: Vec<u32> = vec![self.root as u32];
        let mut sizes: Vec<isize> = vec![-1];
        let mut class_stack: Vec<usize> = Vec::new();
        let mut seen = vec![false; map.len()];
        while let Some(ni) = list.pop() {
            let ni = ni as usize;
            let ordinal = ni / self.nf;
            let from = self.first_dominated[ordinal] as usize;
            let to = self.first_dominated[ordinal + 1] as usize;
            let slot = slots[ordinal] as usize;
            if slot != u32::MAX as usize && !seen[slot] {
                map[slot].retained_size += self.retained[ordinal];
                if from != to {
                    seen[slot] = true;
                    sizes.push(list.len() as isize);
                    class_stack.push(slot);
                }
            }
            list.extend_from_slice(&self.dominated[from..to]);
            let length = list.len() as isize;
            while sizes.last() == Some(&length) {
                sizes.pop();
                if let Some(slot) = class_stack.pop() {
                    seen[slot] = false;
                }
            }
        }
    }

    /// The base side of a diff: aggregates under the *current* snapshot's interfaces, keyed
    /// by text, with ids sorted; names come from this snapshot's own interfaces.
    pub(crate) fn classes_for_diff(&self, other: &HeapSnapshot) -> IndexMap<String, BaseClass> {
        let matcher = InterfaceMatcher::new(&other.interface_definitions);
        let by_key = self.aggregates_by_key(None, |ni| {
            let (key, name) = self.class_key_with(ni, &matcher);
            (key, Some(name))
        });
        let mut out: IndexMap<String, BaseClass> = IndexMap::new();
        for (key, aggregate) in by_key {
            let mut indexes = aggregate.indexes;
            self.sort_by_id(&mut indexes);
            let last = indexes.last().copied().unwrap_or_default() as usize;
            let class = BaseClass {
                name: self.class_name(last).to_string(),
                ids: indexes
                    .iter()
                    .map(|&ni| self.node_id(ni as usize))
                    .collect(),
                self_sizes: indexes
                    .iter()
                    .map(|&ni| self.self_size(ni as usize))
                    .collect(),
            };
            let text = match &key {
                crate::names::ClassKey::Interface(name) => format!(",{name}"),
                other => self.class_key_text(other),
            };
            out.insert(text, class);
        }
        out
    }

    pub(crate) fn sort_by_id(&self, indexes: &mut [u32]) {
        indexes.sort_by_key(|&ni| self.node_id(ni as usize));
    }

    /// Per-class differences between `base` and this snapshot, in DevTools' order (base
    /// classes first, then new ones), without the classes that did not change.
    pub(crate) fn diff_classes(&self, base: &IndexMap<String, BaseClass>) -> Vec<ClassDiff> {
        let mut current = self.aggregates(None);
        for aggregate in current.values_mut() {
            self.sort_by_id(&mut aggregate.indexes);
        }
        let mut diffs = Vec::new();
        for (key, base_class) in base {
            if let Some(diff) = self.diff_class(base_class, current.get(key)) {
                diffs.push(diff);
            }
        }
        let empty = BaseClass::default();
        for (key, aggregate) in &current {
            if base.contains_key(key) {
                continue;
            }
            if let Some(diff) = self.diff_class(&empty, Some(aggregate)) {
                diffs.push(diff);
            }
        }
        diffs
    }

    fn diff_class(&self, base: &BaseClass, current: Option<&Aggregate>) -> Option<ClassDiff> {
        let indexes: &[u32] = current.map_or(&[], |aggregate| &aggregate.indexes);
        let mut diff = ClassDiff {
            name: current.map_or_else(|| base.name.clone(), |aggregate| aggregate.name.clone()),
            added_count: 0,
            removed_count: 0,
            added_size: 0,
            removed_size: 0,
            count_delta: 0,
            size_delta: 0,
            added_ids: Vec::new(),
            added_self_sizes: Vec::new(),
            deleted_ids: Vec::new(),
            deleted_self_sizes: Vec::new(),
        };
        let (mut i, mut j) = (0, 0);
        let add = |diff: &mut ClassDiff, ni: usize| {
            let size = self.self_size(ni);
            diff.added_ids.push(self.node_id(ni));
            diff.added_self_sizes.push(size);
            diff.added_count += 1;
            diff.added_size += size as i64;
        };
        let remove = |diff: &mut ClassDiff, i: usize| {
            diff.deleted_ids.push(base.ids[i]);
            diff.deleted_self_sizes.push(base.self_sizes[i]);
            diff.removed_count += 1;
            diff.removed_size += base.self_sizes[i] as i64;
        };
        while i < base.ids.len() && j < indexes.len() {
            let base_id = base.ids[i];
            let current_id = self.node_id(indexes[j] as usize);
            if base_id < current_id {
                remove(&mut diff, i);
                i += 1;
            } else if base_id > current_id {
                add(&mut diff, indexes[j] as usize);
                j += 1;
            } else {
                i += 1;
                j += 1;
            }
        }
        while i < base.ids.len() {
            remove(&mut diff, i);
            i += 1;
        }
        while j < indexes.len() {
            add(&mut diff, indexes[j] as usize);
            j += 1;
        }
        diff.count_delta = diff.added_count - diff.removed_count;
        diff.size_delta = diff.added_size - diff.removed_size;
        (diff.added_count != 0 || diff.removed_count != 0).then_some(diff)
    }
}
