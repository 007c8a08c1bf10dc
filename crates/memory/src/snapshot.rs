//! The loaded snapshot: the flat node and edge arrays, their field layout, and the accessors
//! every analysis uses. Nodes are addressed by *node index* (ordinal times the node field
//! count) and edges by *edge index* (ordinal times the edge field count), as in the DevTools
//! frontend, so results line up with its numbers and ids.

use crate::HeapError;
use crate::parse::RawSnapshot;
use std::collections::HashMap;

/// Node and edge type ids resolved from the header; `NONE` when a type is absent.
pub(crate) const NONE: u32 = u32::MAX;

/// DOM link states, as stored per node.
pub const UNKNOWN: u8 = 0;
pub const ATTACHED: u8 = 1;
pub const DETACHED: u8 = 2;

/// Native-context attribution markers (otherwise a native context's ordinal).
pub(crate) const NO_NATIVE_CONTEXT: i32 = -1;
pub(crate) const SHARED_NATIVE_CONTEXT: i32 = -2;

/// Distance of nodes reached only from system roots, and of unreachable ones.
pub(crate) const NO_DISTANCE: i32 = -5;
pub(crate) const BASE_SYSTEM_DISTANCE: i32 = 100_000_000;

#[derive(Debug, Clone, Copy)]
pub(crate) struct NodeTypes {
    pub hidden: u32,
    pub array: u32,
    pub object: u32,
    pub native: u32,
    pub string: u32,
    pub cons_string: u32,
    pub sliced_string: u32,
    pub code: u32,
    pub synthetic: u32,
    pub closure: u32,
    pub regexp: u32,
    pub number: u32,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct EdgeTypes {
    pub element: u32,
    pub hidden: u32,
    pub internal: u32,
    pub shortcut: u32,
    pub weak: u32,
    pub invisible: u32,
    pub property: u32,
    pub context: u32,
}

/// Node flags (DevTools' `nodeFlags`).
pub(crate) const FLAG_CAN_BE_QUERIED: u8 = 1;
pub(crate) const FLAG_DETACHED_DOM: u8 = 2;
pub(crate) const FLAG_PAGE_OBJECT: u8 = 4;

/// The statistics block of `get_heapsnapshot_summary`.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Statistics {
    pub total: f64,
    pub native: NativeStatistics,
    pub v8heap: V8Statistics,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NativeStatistics {
    pub total: f64,
    pub typed_arrays: f64,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct V8Statistics {
    pub total: f64,
    pub code: f64,
    pub js_arrays: f64,
    pub strings: f64,
    pub system: f64,
}

#[derive(Debug, Clone)]
pub struct NativeContextInfo {
    pub node_id: u32,
    pub node_name: String,
    pub attributed_size: u64,
    pub retained_size: u64,
    pub self_size: u64,
}

#[derive(Debug, Clone, Default)]
pub struct NativeContextSizes {
    pub native_contexts: Vec<NativeContextInfo>,
    pub shared_size: u64,
    pub no_attribution_size: u64,
}

/// One inferred "interface" (a common shape of plain objects), named `{a, b, c}`.
#[derive(Debug, Clone)]
pub(crate) struct InterfaceDefinition {
    pub name: String,
    pub properties: Vec<String>,
}

/// A fully analysed snapshot. Immutable once built; queries only read it.
pub struct HeapSnapshot {
    pub(crate) nodes: Vec<u32>,
    pub(crate) edges: Vec<u32>,
    pub(crate) strings: Vec<String>,
    pub(crate) nf: usize,
    pub(crate) ef: usize,
    pub(crate) o_type: usize,
    pub(crate) o_name: usize,
    pub(crate) o_id: usize,
    pub(crate) o_self: usize,
    pub(crate) o_edge_count: usize,
    pub(crate) o_detachedness: Option<usize>,
    pub(crate) e_type: usize,
    pub(crate) e_name: usize,
    pub(crate) e_to: usize,
    pub(crate) node_type_names: Vec<String>,
    pub(crate) edge_type_names: Vec<String>,
    pub(crate) nt: NodeTypes,
    pub(crate) et: EdgeTypes,
    pub(crate) node_count: usize,
    pub(crate) root: usize,
    pub(crate) extra_native_bytes: f64,
    /// Edge index of each node's first edge; one extra entry at the end.
    pub(crate) first_edge: Vec<u32>,
    pub(crate) first_retainer: Vec<u32>,
    /// Node index of the retainer, per retainer slot.
    pub(crate) retaining_nodes: Vec<u32>,
    /// Edge index of the retaining edge, per retainer slot.
    pub(crate) retaining_edges: Vec<u32>,
    pub(crate) detachedness: Vec<u8>,
    pub(crate) class_index: Vec<u32>,
    pub(crate) flags: Vec<u8>,
    pub(crate) distances: Vec<i32>,
    /// Dominator ordinal per node ordinal.
    pub(crate) dominators: Vec<u32>,
    pub(crate) retained: Vec<u64>,
    pub(crate) first_dominated: Vec<u32>,
    /// Node indexes, grouped by dominator.
    pub(crate) dominated: Vec<u32>,
    pub(crate) native_attribution: Vec<i32>,
    pub(crate) native_context_ordinals: Vec<u32>,
    pub(crate) native_context_sizes: NativeContextSizes,
    pub(crate) statistics: Statistics,
    /// Node index -> (script id, line, column).
    pub(crate) locations: HashMap<u32, (i64, i64, i64)>,
    pub(crate) interface_definitions: Vec<InterfaceDefinition>,
    pub(crate) raw_scopes: RawScopes,
}

/// The scope tables of newer V8 snapshots, for the closure-context analysis.
#[derive(Debug, Default)]
pub(crate) struct RawScopes {
    pub scope_fields: Vec<String>,
    pub var_fields: Vec<String>,
    pub use_fields: Vec<String>,
    pub scopes: Vec<i64>,
    pub vars: Vec<i64>,
    pub uses: Vec<i64>,
}

fn type_names(types: &[serde_json::Value], offset: usize) -> Vec<String> {
    match types.get(offset) {
        Some(serde_json::Value::Array(names)) => names
            .iter()
            .map(|name| name.as_str().unwrap_or_default().to_string())
            .collect(),
        _ => Vec::new(),
    }
}

fn index_of(names: &[String], wanted: &str) -> u32 {
    names
        .iter()
        .position(|name| name == wanted)
        .map_or(NONE, |i| i as u32)
}

fn field(fields: &[String], name: &str) -> Result<usize, HeapError> {
    fields
        .iter()
        .position(|field| field == name)
        .ok_or_else(|| HeapError::Format(format!("the snapshot has no `{name}` field")))
}

impl HeapSnapshot {
    /// Checks the layout and every cross reference, so that later accessors cannot go out of
    /// bounds, then runs the analyses.
    pub fn from_raw(raw: RawSnapshot) -> Result<HeapSnapshot, HeapError> {
        Self::from_raw_checked(raw, &|| Ok(()))
    }

    /// [`HeapSnapshot::from_raw`], calling `check` between the analyses (it stops the load
    /// when the caller has gone).
    pub(crate) fn from_raw_checked(
        raw: RawSnapshot,
        check: &dyn Fn() -> Result<(), HeapError>,
    ) -> Result<HeapSnapshot, HeapError> {
        let meta = &raw.header.meta;
        let nf = meta.node_fields.len();
        let ef = meta.edge_fields.len();
        let o_type = field(&meta.node_fields, "type")?;
        let o_name = field(&meta.node_fields, "name")?;
        let o_id = field(&meta.node_fields, "id")?;
        let o_self = field(&meta.node_fields, "self_size")?;
        let o_edge_count = field(&meta.node_fields, "edge_count")?;
        let o_detachedness = meta.node_fields.iter().position(|f| f == "detachedness");
        let e_type = field(&meta.edge_fields, "type")?;
        let e_name = field(&meta.edge_fields, "name_or_index")?;
        let e_to = field(&meta.edge_fields, "to_node")?;
        if nf == 0 || !raw.nodes.len().is_multiple_of(nf) || raw.nodes.is_empty() {
            return Err(HeapError::Format(
                "the nodes array does not match the node fields".into(),
            ));
        }
        if !raw.edges.len().is_multiple_of(ef) {
            return Err(HeapError::Format(
                "the edges array does not match the edge fields".into(),
            ));
        }
        let node_type_names = type_names(&meta.node_types, o_type);
        let mut edge_type_names = type_names(&meta.edge_types, e_type);
        edge_type_names.push("invisible".into());
        let node_count = raw.nodes.len() / nf;
        let root = raw.header.root_index.unwrap_or(0) as usize;
        if !root.is_multiple_of(nf) || root >= raw.nodes.len() {
            return Err(HeapError::Format("the root index is out of range".into()));
        }
        let nt = NodeTypes {
            hidden: index_of(&node_type_names, "hidden"),
            array: index_of(&node_type_names, "array"),
            object: index_of(&node_type_names, "object"),
            native: index_of(&node_type_names, "native"),
            string: index_of(&node_type_names, "string"),
            cons_string: index_of(&node_type_names, "concatenated string"),
            sliced_string: index_of(&node_type_names, "sliced string"),
            code: index_of(&node_type_names, "code"),
            synthetic: index_of(&node_type_names, "synthetic"),
            closure: index_of(&node_type_names, "closure"),
            regexp: index_of(&node_type_names, "regexp"),
            number: index_of(&node_type_names, "number"),
        };
        let et = EdgeTypes {
            element: index_of(&edge_type_names, "element"),
            hidden: index_of(&edge_type_names, "hidden"),
            internal: index_of(&edge_type_names, "internal"),
            shortcut: index_of(&edge_type_names, "shortcut"),
            weak: index_of(&edge_type_names, "weak"),
            invisible: index_of(&edge_type_names, "invisible"),
            property: index_of(&edge_type_names, "property"),
            context: index_of(&edge_type_names, "context"),
        };
        // Cross references.
        let strings_len = raw.strings.len() as u64;
        let mut edge_total: u64 = 0;
        for ordinal in 0..node_count {
            let base = ordinal * nf;
            if u64::from(raw.nodes[base + o_name]) >= strings_len {
                return Err(HeapError::Format(format!(
                    "node {ordinal} names string {} of {strings_len}",
                    raw.nodes[base + o_name]
                )));
            }
            if raw.nodes[base + o_type] as usize >= node_type_names.len() {
                return Err(HeapError::Format(format!(
                    "node {ordinal} has an unknown type"
                )));
            }
            edge_total += u64::from(raw.nodes[base + o_edge_count]);
        }
        if edge_total * ef as u64 != raw.edges.len() as u64 {
            return Err(HeapError::Format(format!(
                "the nodes declare {edge_total} edges but the edges array holds {}",
                raw.edges.len() / ef.max(1)
            )));
        }
        for (ordinal, edge) in raw.edges.chunks_exact(ef).enumerate() {
            let to = edge[e_to] as usize;
            if !to.is_multiple_of(nf) || to >= raw.nodes.len() {
                return Err(HeapError::Format(format!(
                    "edge {ordinal} points to node index {to}, which does not exist"
                )));
            }
            let kind = edge[e_type];
            if kind as usize >= edge_type_names.len() - 1 {
                return Err(HeapError::Format(format!(
                    "edge {ordinal} has an unknown type"
                )));
            }
            let numeric = kind == et.element || kind == et.hidden;
            if !numeric && u64::from(edge[e_name]) >= strings_len {
                return Err(HeapError::Format(format!(
                    "edge {ordinal} names string {} of {strings_len}",
                    edge[e_name]
                )));
            }
        }
        let mut locations = HashMap::new();
        if let Some(fields) = &meta.location_fields
            && !fields.is_empty()
        {
            let at = |name: &str| fields.iter().position(|f| f == name);
            if let (Some(oi), Some(si), Some(li), Some(ci)) = (
                at("object_index"),
                at("script_id"),
                at("line"),
                at("column"),
            ) {
                for chunk in raw.locations.chunks_exact(fields.len()) {
                    locations.insert(chunk[oi] as u32, (chunk[si], chunk[li], chunk[ci]));
                }
            }
        }
        let raw_scopes = RawScopes {
            scope_fields: meta.scope_fields.clone().unwrap_or_default(),
            var_fields: meta.scope_context_var_fields.clone().unwrap_or_default(),
            use_fields: meta.scope_use_fields.clone().unwrap_or_default(),
            scopes: raw.scopes,
            vars: raw.scope_context_vars,
            uses: raw.scope_uses,
        };
        let mut snapshot = HeapSnapshot {
            nodes: raw.nodes,
            edges: raw.edges,
            strings: raw.strings,
            nf,
            ef,
            o_type,
            o_name,
            o_id,
            o_self,
            o_edge_count,
            o_detachedness,
            e_type,
            e_name,
            e_to,
            node_type_names,
            edge_type_names,
            nt,
            et,
            node_count,
            root,
            extra_native_bytes: raw.header.extra_native_bytes.unwrap_or(0.0),
            first_edge: Vec::new(),
            first_retainer: Vec::new(),
            retaining_nodes: Vec::new(),
            retaining_edges: Vec::new(),
            detachedness: Vec::new(),
            class_index: Vec::new(),
            flags: Vec::new(),
            distances: Vec::new(),
            dominators: Vec::new(),
            retained: Vec::new(),
            first_dominated: Vec::new(),
            dominated: Vec::new(),
            native_attribution: Vec::new(),
            native_context_ordinals: Vec::new(),
            native_context_sizes: NativeContextSizes::default(),
            statistics: Statistics::default(),
            locations,
            interface_definitions: Vec::new(),
            raw_scopes,
        };
        snapshot.initialize(check)?;
        Ok(snapshot)
    }

    /// Bytes held by the loaded snapshot (arrays and strings), for the host's memory cap.
    pub fn memory_bytes(&self) -> usize {
        let u32s = self.nodes.len()
            + self.edges.len()
            + self.first_edge.len()
            + self.first_retainer.len()
            + self.retaining_nodes.len()
            + self.retaining_edges.len()
            + self.class_index.len()
            + self.dominators.len()
            + self.first_dominated.len()
            + self.dominated.len()
            + self.native_attribution.len()
            + self.distances.len();
        let strings: usize = self.strings.iter().map(|s| s.capacity() + 24).sum();
        u32s * 4 + self.retained.len() * 8 + self.detachedness.len() * 2 + strings
    }

    // --- nodes ---

    pub(crate) fn ordinal(&self, node_index: usize) -> usize {
        node_index / self.nf
    }

    pub(crate) fn raw_type(&self, ni: usize) -> u32 {
        self.nodes[ni + self.o_type]
    }

    pub(crate) fn raw_name_index(&self, ni: usize) -> usize {
        self.nodes[ni + self.o_name] as usize
    }

    pub(crate) fn raw_name(&self, ni: usize) -> &str {
        &self.strings[self.raw_name_index(ni)]
    }

    pub fn node_id(&self, ni: usize) -> u32 {
        self.nodes[ni + self.o_id]
    }

    pub(crate) fn self_size(&self, ni: usize) -> u64 {
        u64::from(self.nodes[ni + self.o_self])
    }

    pub(crate) fn type_name(&self, ni: usize) -> &str {
        &self.node_type_names[self.raw_type(ni) as usize]
    }

    pub(crate) fn edges_range(&self, ni: usize) -> std::ops::Range<usize> {
        let ordinal = self.ordinal(ni);
        self.first_edge[ordinal] as usize..self.first_edge[ordinal + 1] as usize
    }

    /// Edge indexes of a node's outgoing edges.
    pub(crate) fn edge_indexes(&self, ni: usize) -> impl Iterator<Item = usize> + use<> {
        self.edges_range(ni).step_by(self.ef)
    }

    pub(crate) fn retainer_slots(&self, ni: usize) -> std::ops::Range<usize> {
        let ordinal = self.ordinal(ni);
        self.first_retainer[ordinal] as usize..self.first_retainer[ordinal + 1] as usize
    }

    pub(crate) fn retained_size(&self, ni: usize) -> u64 {
        self.retained[self.ordinal(ni)]
    }

    pub(crate) fn distance(&self, ni: usize) -> i32 {
        self.distances[self.ordinal(ni)]
    }

    pub fn detachedness_of(&self, ni: usize) -> u8 {
        self.detachedness[self.ordinal(ni)]
    }

    pub(crate) fn class_name(&self, ni: usize) -> &str {
        &self.strings[self.class_index[self.ordinal(ni)] as usize]
    }

    pub(crate) fn is_synthetic(&self, ni: usize) -> bool {
        self.raw_type(ni) == self.nt.synthetic
    }

    pub(crate) fn is_root(&self, ni: usize) -> bool {
        ni == self.root
    }

    pub(crate) fn is_user_root(&self, ni: usize) -> bool {
        !self.is_synthetic(ni)
    }

    pub(crate) fn is_document_dom_trees_root(&self, ni: usize) -> bool {
        self.is_synthetic(ni) && self.raw_name(ni) == "(Document DOM trees)"
    }

    pub(crate) fn is_context_object(&self, ni: usize) -> bool {
        let name = self.raw_name(ni);
        name == "system / Context" || name.starts_with("system / Context / ")
    }

    pub(crate) fn is_native_context(&self, ordinal: usize) -> bool {
        let name = self.raw_name(ordinal * self.nf);
        name == "system / NativeContext"
            || name.starts_with("system / NativeContext / ")
            || name == "Detached system / NativeContext"
            || name.starts_with("Detached system / NativeContext / ")
    }

    pub(crate) fn edge_count_of(&self, ni: usize) -> usize {
        self.edges_range(ni).len() / self.ef
    }

    pub(crate) fn retainer_count_of(&self, ni: usize) -> usize {
        self.retainer_slots(ni).len()
    }

    /// The node index with this snapshot object id (the first, as DevTools' linear scan).
    pub fn node_index_for_id(&self, id: f64) -> Option<usize> {
        if id.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&id) {
            return None;
        }
        let id = id as u32;
        (0..self.node_count)
            .map(|ordinal| ordinal * self.nf)
            .find(|&ni| self.node_id(ni) == id)
    }

    // --- edges ---

    pub(crate) fn edge_type(&self, ei: usize) -> u32 {
        self.edges[ei + self.e_type]
    }

    pub(crate) fn edge_type_name(&self, ei: usize) -> &str {
        &self.edge_type_names[self.edge_type(ei) as usize]
    }

    pub(crate) fn edge_to(&self, ei: usize) -> usize {
        self.edges[ei + self.e_to] as usize
    }

    pub(crate) fn edge_name_or_index(&self, ei: usize) -> u32 {
        self.edges[ei + self.e_name]
    }

    fn edge_has_string_name_raw(&self, ei: usize) -> bool {
        let kind = self.edge_type(ei);
        kind != self.et.element && kind != self.et.hidden
    }

    /// The edge's name as DevTools prints it: element and hidden edges by index, shortcut
    /// edges with a numeric name as the number.
    pub(crate) fn edge_name(&self, ei: usize) -> String {
        if !self.edge_has_string_name_raw(ei) {
            return self.edge_name_or_index(ei).to_string();
        }
        let name = &self.strings[self.edge_name_or_index(ei) as usize];
        if self.edge_type(ei) == self.et.shortcut
            && let Some(number) = parse_int_prefix(name)
        {
            return number;
        }
        name.clone()
    }

    /// The edge name without allocating, for the common comparisons.
    pub(crate) fn edge_name_str(&self, ei: usize) -> Option<&str> {
        if self.edge_has_string_name_raw(ei) && self.edge_type(ei) != self.et.shortcut {
            Some(&self.strings[self.edge_name_or_index(ei) as usize])
        } else {
            None
        }
    }

    pub(crate) fn edge_has_string_name(&self, ei: usize) -> bool {
        if self.edge_type(ei) != self.et.shortcut {
            return self.edge_has_string_name_raw(ei);
        }
        parse_int_prefix(&self.strings[self.edge_name_or_index(ei) as usize]).is_none()
    }

    pub(crate) fn edge_name_matches(&self, ei: usize, wanted: &str) -> bool {
        match self.edge_name_str(ei) {
            Some(name) => name == wanted,
            None => self.edge_name(ei) == wanted,
        }
    }

    /// The target of the first edge named `name` (any type).
    pub(crate) fn edge_target(&self, ni: usize, name: &str) -> Option<usize> {
        self.edge_indexes(ni)
            .find(|&ei| self.edge_name_matches(ei, name))
            .map(|ei| self.edge_to(ei))
    }

    /// The target of the first *internal* edge named `name`.
    pub(crate) fn internal_edge_target(&self, ni: usize, name: &str) -> Option<usize> {
        self.edge_indexes(ni)
            .find(|&ei| {
                self.edge_type(ei) == self.et.internal
                    && self.strings[self.edge_name_or_index(ei) as usize] == name
            })
            .map(|ei| self.edge_to(ei))
    }

    // --- numbers as V8 encodes them ---

    pub(crate) fn value_as_int(&self, ni: usize) -> Option<i64> {
        if self.raw_type(ni) != self.nt.number || self.raw_name(ni) != "int" {
            return None;
        }
        let value = self.internal_edge_target(ni, "value")?;
        js_parse_int(self.raw_name(value))
    }

    pub(crate) fn value_as_bool(&self, ni: usize) -> Option<bool> {
        if self.raw_type(ni) != self.nt.number || self.raw_name(ni) != "bool" {
            return None;
        }
        let value = self.internal_edge_target(ni, "value")?;
        match self.raw_name(value) {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    pub(crate) fn string_length(&self, ni: usize) -> Option<i64> {
        self.internal_edge_target(ni, "length")
            .and_then(|n| self.value_as_int(n))
    }

    pub(crate) fn string_hash(&self, ni: usize) -> Option<i64> {
        self.internal_edge_target(ni, "hash")
            .and_then(|n| self.value_as_int(n))
    }

    pub(crate) fn is_truncated_string(&self, ni: usize) -> bool {
        self.internal_edge_target(ni, "truncated")
            .and_then(|n| self.value_as_bool(n))
            == Some(true)
    }

    pub(crate) fn is_flat_cons_string(&self, ni: usize) -> bool {
        if self.raw_type(ni) != self.nt.cons_string {
            return false;
        }
        self.edge_indexes(ni).any(|ei| {
            self.edge_type(ei) == self.et.internal
                && matches!(self.edge_name_str(ei), Some("first" | "second"))
                && self.node_name(self.edge_to(ei)).is_empty()
        })
    }

    pub fn node_count(&self) -> usize {
        self.node_count
    }
}

/// `parseInt(text, 10)` rendered back as a string, when it is a number.
fn parse_int_prefix(text: &str) -> Option<String> {
    js_parse_int(text).map(|n| n.to_string())
}

/// JavaScript's `parseInt(text, 10)` for the values that occur (small integers).
pub(crate) fn js_parse_int(text: &str) -> Option<i64> {
    let trimmed = text.trim_start();
    let (negative, digits) = match trimmed.as_bytes().first() {
        Some(b'-') => (true, &trimmed[1..]),
        Some(b'+') => (false, &trimmed[1..]),
        _ => (false, trimmed),
    };
    let end = digits
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    if end == 0 {
        return None;
    }
    let mut value: i64 = 0;
    for b in digits[..end].bytes() {
        value = value.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    Some(if negative { -value } else { value })
}
