//! Node names and class names: concatenated strings spelled out, plain objects named by
//! their properties (`{a, b, …}`), tag names folded (`<div>`), and the "interfaces" DevTools
//! infers for common shapes of plain objects.

use crate::snapshot::{HeapSnapshot, InterfaceDefinition};
use std::cmp::Ordering;
use std::collections::HashMap;

const MIN_INTERFACE_PROPERTY_COUNT: usize = 1;
const MAX_INTERFACE_NAME_LENGTH: usize = 120;
const MIN_OBJECT_COUNT_PER_INTERFACE: f64 = 2.0;
const MIN_OBJECT_PROPORTION_PER_INTERFACE: f64 = 1000.0;

/// Length in UTF-16 code units, as JavaScript counts.
pub(crate) fn js_len(text: &str) -> usize {
    if text.is_ascii() {
        text.len()
    } else {
        text.encode_utf16().count()
    }
}

/// JavaScript's string order (UTF-16 code units).
pub(crate) fn js_cmp(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.cmp(b)
    } else {
        a.encode_utf16().cmp(b.encode_utf16())
    }
}

/// A property name as DevTools writes it inside `{…}`: quoted when it holds `,'"{}`.
pub(crate) fn format_property_name(name: &str) -> String {
    if name.contains([',', '\'', '"', '{', '}']) {
        serde_json::to_string(name).unwrap_or_else(|_| name.to_string())
    } else {
        name.to_string()
    }
}

/// Which class a node is counted under (DevTools' internal class key).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ClassKey {
    Index(u32),
    /// An interface name from definitions other than the snapshot's own (diffs).
    Interface(String),
    /// `scriptId,line,column,className` for objects with a source location.
    Location(String),
}

impl HeapSnapshot {
    /// The node's display name.
    pub(crate) fn node_name(&self, ni: usize) -> String {
        let kind = self.raw_type(ni);
        if kind == self.nt.cons_string {
            return self.cons_string_name(ni);
        }
        if kind == self.nt.object && self.raw_name(ni) == "Object" {
            return self.plain_object_name(ni);
        }
        self.raw_name(ni).to_string()
    }

    fn cons_string_name(&self, ni: usize) -> String {
        let mut stack = vec![ni];
        let mut name = String::new();
        let mut name_len = 0;
        while let Some(current) = stack.pop() {
            if name_len >= 1024 {
                break;
            }
            if self.raw_type(current) != self.nt.cons_string {
                let part = self.raw_name(current);
                name.push_str(part);
                name_len += js_len(part);
                continue;
            }
            let mut first = 0;
            let mut second = 0;
            for ei in self.edge_indexes(current) {
                if first != 0 && second != 0 {
                    break;
                }
                if self.edge_type(ei) == self.et.internal {
                    match self.edge_name_str(ei) {
                        Some("first") => first = self.edge_to(ei),
                        Some("second") => second = self.edge_to(ei),
                        _ => {}
                    }
                }
            }
            stack.push(second);
            stack.push(first);
        }
        name
    }

    fn plain_object_name(&self, ni: usize) -> String {
        let ef = self.ef;
        let range = self.edges_range(ni);
        let mut start = String::from("{");
        let mut end = String::from("}");
        let (mut start_len, mut end_len) = (1usize, 1usize);
        let mut from_start = range.start as isize;
        let mut from_end = range.end as isize - ef as isize;
        let mut next_from_end = false;
        while from_start <= from_end {
            let ei = if next_from_end { from_end } else { from_start } as usize;
            if self.edge_type(ei) != self.et.property || self.edge_name_matches(ei, "__proto__") {
                if next_from_end {
                    from_end -= ef as isize;
                } else {
                    from_start += ef as isize;
                }
                continue;
            }
            let formatted = format_property_name(&self.edge_name(ei));
            let formatted_len = js_len(&formatted);
            if start_len > 1 && start_len + end_len + formatted_len > 100 {
                break;
            }
            if next_from_end {
                from_end -= ef as isize;
                if end_len > 1 {
                    end.insert_str(0, ", ");
                    end_len += 2;
                }
                end.insert_str(0, &formatted);
                end_len += formatted_len;
            } else {
                from_start += ef as isize;
                if start_len > 1 {
                    start.push_str(", ");
                    start_len += 2;
                }
                start.push_str(&formatted);
                start_len += formatted_len;
            }
            next_from_end = !next_from_end;
        }
        if from_start <= from_end {
            start.push_str(", …");
        }
        if end_len > 1 {
            start.push_str(", ");
        }
        start.push_str(&end);
        start
    }

    fn is_plain_js_object(&self, ni: usize) -> bool {
        self.raw_type(ni) == self.nt.object && self.raw_name(ni) == "Object"
    }

    pub(crate) fn calculate_object_names(&mut self) {
        let mut table: HashMap<String, u32> = HashMap::new();
        let mut index_for = |strings: &mut Vec<String>, text: String| -> u32 {
            *table.entry(text).or_insert_with_key(|text| {
                strings.push(text.clone());
                (strings.len() - 1) as u32
            })
        };
        let mut strings = std::mem::take(&mut self.strings);
        let hidden = index_for(&mut strings, "(system)".into());
        let code = index_for(&mut strings, "(compiled code)".into());
        let function = index_for(&mut strings, "Function".into());
        let regexp = index_for(&mut strings, "RegExp".into());
        let mut type_labels: HashMap<u32, u32> = HashMap::new();
        for ordinal in 0..self.node_count {
            let ni = ordinal * self.nf;
            let kind = self.nodes[ni + self.o_type];
            let class = if kind == self.nt.hidden {
                hidden
            } else if kind == self.nt.object || kind == self.nt.native {
                let name_index = self.nodes[ni + self.o_name];
                let name = &strings[name_index as usize];
                if name.starts_with('<') {
                    let folded = match name.find(' ') {
                        Some(space) => format!("{}>", &name[..space]),
                        None => name.clone(),
                    };
                    index_for(&mut strings, folded)
                } else if let Some(rest) = name.strip_prefix("Detached <") {
                    let folded = match rest.find(' ') {
                        Some(space) => format!("{}>", &name[..10 + space]),
                        None => name.clone(),
                    };
                    index_for(&mut strings, folded)
                } else {
                    name_index
                }
            } else if kind == self.nt.code {
                code
            } else if kind == self.nt.closure {
                function
            } else if kind == self.nt.regexp {
                regexp
            } else {
                match type_labels.get(&kind) {
                    Some(&index) => index,
                    None => {
                        let label = format!("({})", self.node_type_names[kind as usize]);
                        let index = index_for(&mut strings, label);
                        type_labels.insert(kind, index);
                        index
                    }
                }
            };
            self.class_index[ordinal] = class;
        }
        self.strings = strings;
    }

    /// The property names of a plain object that interface matching looks at.
    fn property_names(&self, ni: usize) -> Vec<String> {
        self.edge_indexes(ni)
            .filter(|&ei| self.edge_type(ei) == self.et.property)
            .map(|ei| self.edge_name(ei))
            .collect()
    }

    pub(crate) fn infer_interface_definitions(&self) -> Vec<InterfaceDefinition> {
        struct Candidate {
            name: String,
            properties: Vec<String>,
            count: usize,
        }
        let mut candidates: indexmap::IndexMap<String, Candidate> = indexmap::IndexMap::new();
        let mut total = 0usize;
        for ordinal in 0..self.node_count {
            let ni = ordinal * self.nf;
            if !self.is_plain_js_object(ni) {
                continue;
            }
            total += 1;
            let mut name = String::from("{");
            let mut name_len = 1;
            let mut properties = Vec::new();
            for ei in self.edge_indexes(ni) {
                let edge_name = self.edge_name(ei);
                if self.edge_type(ei) != self.et.property || edge_name == "__proto__" {
                    continue;
                }
                let formatted = format_property_name(&edge_name);
                let formatted_len = js_len(&formatted);
                if name_len > MIN_INTERFACE_PROPERTY_COUNT
                    && name_len + formatted_len > MAX_INTERFACE_NAME_LENGTH
                {
                    break;
                }
                if name_len != 1 {
                    name.push_str(", ");
                    name_len += 2;
                }
                name.push_str(&formatted);
                name_len += formatted_len;
                properties.push(edge_name);
            }
            if properties.is_empty() {
                continue;
            }
            name.push('}');
            match candidates.get_mut(&name) {
                Some(candidate) => candidate.count += 1,
                None => {
                    candidates.insert(
                        name.clone(),
                        Candidate {
                            name,
                            properties,
                            count: 1,
                        },
                    );
                }
            }
        }
        let mut sorted: Vec<Candidate> = candidates.into_values().collect();
        sorted.sort_by_key(|candidate| std::cmp::Reverse(candidate.count));
        let min_count =
            MIN_OBJECT_COUNT_PER_INTERFACE.max(total as f64 / MIN_OBJECT_PROPORTION_PER_INTERFACE);
        sorted
            .into_iter()
            .take_while(|candidate| candidate.count as f64 >= min_count)
            .map(|candidate| InterfaceDefinition {
                name: candidate.name,
                properties: candidate.properties,
            })
            .collect()
    }

    /// Sets the class of every plain object to the best interface it matches.
    pub(crate) fn apply_interface_definitions(&mut self, definitions: Vec<InterfaceDefinition>) {
        let matcher = InterfaceMatcher::new(&definitions);
        let mut interface_names: HashMap<String, u32> = HashMap::new();
        for ordinal in 0..self.node_count {
            let ni = ordinal * self.nf;
            if !self.is_plain_js_object(ni) {
                continue;
            }
            let class = match matcher.best_match(&self.property_names(ni)) {
                None => self.raw_name_index(ni) as u32,
                Some(name) => match interface_names.get(name) {
                    Some(&index) => index,
                    None => {
                        self.strings.push(name.to_string());
                        let index = (self.strings.len() - 1) as u32;
                        interface_names.insert(name.to_string(), index);
                        index
                    }
                },
            };
            self.class_index[ordinal] = class;
        }
        self.interface_definitions = definitions;
    }

    /// The class key of a node under the snapshot's own interfaces.
    pub(crate) fn class_key(&self, ni: usize) -> ClassKey {
        let class = self.class_index[self.ordinal(ni)];
        if self.raw_type(ni) == self.nt.object
            && let Some((script, line, column)) = self.locations.get(&(ni as u32))
        {
            return ClassKey::Location(format!(
                "{script},{line},{column},{}",
                self.strings[class as usize]
            ));
        }
        ClassKey::Index(class)
    }

    /// The class key and class name of a node under *other* interface definitions.
    pub(crate) fn class_key_with(
        &self,
        ni: usize,
        matcher: &InterfaceMatcher,
    ) -> (ClassKey, String) {
        if !self.is_plain_js_object(ni) {
            return (self.class_key(ni), self.class_name(ni).to_string());
        }
        let (key, name) = match matcher.best_match(&self.property_names(ni)) {
            None => (
                ClassKey::Index(self.raw_name_index(ni) as u32),
                self.raw_name(ni).to_string(),
            ),
            Some(name) => (ClassKey::Interface(name.to_string()), name.to_string()),
        };
        match self.locations.get(&(ni as u32)) {
            Some((script, line, column)) => (
                ClassKey::Location(format!("{script},{line},{column},{name}")),
                name,
            ),
            None => (key, name),
        }
    }

    /// The text key DevTools uses for a class in its aggregate maps.
    pub(crate) fn class_key_text(&self, key: &ClassKey) -> String {
        match key {
            ClassKey::Index(index) => format!(",{}", self.strings[*index as usize]),
            ClassKey::Interface(name) => format!(",{name}"),
            ClassKey::Location(text) => text.clone(),
        }
    }
}

/// A trie of the interfaces' sorted property names; an object matches the interface with
/// the most properties that it has all of (the earlier one on a tie).
pub(crate) struct InterfaceMatcher {
    nodes: Vec<TrieNode>,
}

struct TrieNode {
    next: HashMap<String, usize>,
    greatest_next: Option<String>,
    /// (name, property count, definition index)
    matched: Option<(String, usize, usize)>,
}

impl InterfaceMatcher {
    pub(crate) fn new(definitions: &[InterfaceDefinition]) -> InterfaceMatcher {
        let mut nodes = vec![TrieNode {
            next: HashMap::new(),
            greatest_next: None,
            matched: None,
        }];
        for (index, definition) in definitions.iter().enumerate() {
            let mut properties = definition.properties.clone();
            properties.sort_by(|a, b| js_cmp(a, b));
            let mut current = 0;
            for property in &properties {
                current = match nodes[current].next.get(property) {
                    Some(&next) => next,
                    None => {
                        nodes.push(TrieNode {
                            next: HashMap::new(),
                            greatest_next: None,
                            matched: None,
                        });
                        let created = nodes.len() - 1;
                        let node = &mut nodes[current];
                        node.next.insert(property.clone(), created);
                        if node
                            .greatest_next
                            .as_deref()
                            .is_none_or(|greatest| js_cmp(greatest, property) == Ordering::Less)
                        {
                            node.greatest_next = Some(property.clone());
                        }
                        created
                    }
                };
            }
            if nodes[current].matched.is_none() {
                nodes[current].matched = Some((definition.name.clone(), properties.len(), index));
            }
        }
        InterfaceMatcher { nodes }
    }

    pub(crate) fn best_match(&self, properties: &[String]) -> Option<&str> {
        if self.nodes.len() == 1 && self.nodes[0].matched.is_none() {
            return None;
        }
        let mut properties: Vec<&String> = properties.iter().collect();
        properties.sort_by(|a, b| js_cmp(a, b));
        // The trie node of the best match so far; None is DevTools' initial "Object" (no
        // properties, an infinite index), which any real match beats.
        let mut best: Option<usize> = None;
        let better = |best: Option<usize>, candidate: usize| -> Option<usize> {
            let Some((_, count, index)) = &self.nodes[candidate].matched else {
                return best;
            };
            match best.and_then(|b| self.nodes[b].matched.as_ref()) {
                None => Some(candidate),
                Some((_, best_count, best_index)) => {
                    if count > best_count || (count == best_count && index < best_index) {
                        Some(candidate)
                    } else {
                        best
                    }
                }
            }
        };
        best = better(best, 0);
        let mut states: indexmap::IndexSet<usize> = indexmap::IndexSet::new();
        states.insert(0);
        for property in properties {
            let snapshot: Vec<usize> = states.iter().copied().collect();
            for state in snapshot {
                let node = &self.nodes[state];
                if node
                    .greatest_next
                    .as_deref()
                    .is_none_or(|greatest| js_cmp(property, greatest) != Ordering::Less)
                {
                    states.shift_remove(&state);
                }
                if let Some(&next) = node.next.get(property.as_str()) {
                    states.insert(next);
                    best = better(best, next);
                }
            }
        }
        best.and_then(|b| self.nodes[b].matched.as_ref())
            .map(|(name, _, _)| name.as_str())
    }
}
