//! Port of Puppeteer 25.8's `cdp/Accessibility.ts` snapshot: links the flat node list of
//! CDP `Accessibility.getFullAXTree` into a tree, keeps the "interesting" nodes and
//! serializes them, so that snapshots match chrome-devtools-mcp node for node.

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

use super::ax_node::{Arena, AxNode, NodeKey, RawNode, Span};
use super::cdp::{CdpNode, JsValue, ReplyError, read_full_ax_tree, read_full_ax_tree_cbor};

/// Deepest raw nesting that is walked. Blink's HTML parser stops nesting at 512, so real
/// pages stay far below; the cap only keeps hostile input from exhausting the stack.
const MAX_DEPTH: usize = 1000;

/// Node positions by `nodeId`. Chromium numbers its nodes from 1 upwards, so the ids nearly
/// always fit a table indexed by the number; any other set of keys (strings, numbers, ids far
/// apart) goes through a hash map. The table is at most four slots per node plus 1,024.
enum Index<'a> {
    /// Position by id; `usize::MAX` where no node has that id.
    Table(Vec<usize>),
    Hashed(FxHashMap<NodeKey<'a>, usize>),
}

impl<'a> Index<'a> {
    fn for_nodes(nodes: &[RawNode<'a>]) -> Index<'a> {
        let mut largest = 0;
        let numbered = nodes.iter().all(|node| match node.key {
            NodeKey::Digits(id) => {
                largest = largest.max(id);
                true
            }
            _ => false,
        });
        let limit = (nodes.len() as u64).saturating_mul(4).saturating_add(1024);
        match usize::try_from(largest) {
            Ok(largest) if numbered && (largest as u64) < limit => {
                Index::Table(vec![usize::MAX; largest + 1])
            }
            _ => Index::Hashed(FxHashMap::with_capacity_and_hasher(
                nodes.len(),
                Default::default(),
            )),
        }
    }

    /// The position already given to `key`, or `None` after giving it `position`.
    fn get_or_insert(&mut self, key: NodeKey<'a>, position: usize) -> Option<usize> {
        match self {
            Index::Table(table) => {
                // Every key is a number within the table (checked in `for_nodes`).
                let NodeKey::Digits(id) = key else {
                    return None;
                };
                let slot = &mut table[id as usize];
                match *slot {
                    usize::MAX => {
                        *slot = position;
                        None
                    }
                    at => Some(at),
                }
            }
            Index::Hashed(map) => match map.entry(key) {
                Entry::Occupied(at) => Some(*at.get()),
                Entry::Vacant(at) => {
                    at.insert(position);
                    None
                }
            },
        }
    }

    fn get(&self, key: &NodeKey<'a>) -> Option<usize> {
        match (self, key) {
            (Index::Table(table), NodeKey::Digits(id)) => usize::try_from(*id)
                .ok()
                .and_then(|id| table.get(id))
                .copied()
                .filter(|&at| at != usize::MAX),
            (Index::Table(_), _) => None,
            (Index::Hashed(map), key) => map.get(key).copied(),
        }
    }
}

/// The unserialized tree, kept so that child frames can be attached before serializing
/// (an attached frame makes its `Iframe` node interesting, as in Puppeteer).
pub struct AxTree<'a> {
    nodes: Vec<RawNode<'a>>,
    /// The nodes' properties, each node's entries at its `props` span.
    props: Vec<(u8, JsValue<'a>)>,
    /// The nodes' children (indexes in `nodes`), each node's at its `children` span.
    children: Vec<usize>,
    iframes: FxHashMap<usize, AxNode>,
}

impl<'a> AxTree<'a> {
    /// The tree of a whole `Accessibility.getFullAXTree` reply message, parsed in place:
    /// `Ok(None)` when it has no nodes.
    pub fn from_reply(text: &'a str) -> Result<Option<AxTree<'a>>, ReplyError> {
        AxTree::read(|node| read_full_ax_tree(text, node))
    }

    /// [`AxTree::from_reply`] for the reply as the browser's CBOR pipe carries it.
    pub fn from_cbor_reply(message: &'a [u8]) -> Result<Option<AxTree<'a>>, ReplyError> {
        AxTree::read(|node| read_full_ax_tree_cbor(message, node))
    }

    /// The tree of the nodes `read` hands, each to the function it is given, in order.
    fn read(
        read: impl FnOnce(
            &mut dyn FnMut(CdpNode<'a>) -> RawNode<'a>,
        ) -> Result<Vec<RawNode<'a>>, ReplyError>,
    ) -> Result<Option<AxTree<'a>>, ReplyError> {
        let mut arena = Arena::default();
        let mut position = 0;
        let nodes = read(&mut |payload| {
            position += 1;
            RawNode::new(payload, position, &mut arena)
        })?;
        Ok(AxTree::link(nodes, arena))
    }

    /// The tree of parsed CDP nodes.
    pub fn from_nodes(payloads: Vec<CdpNode<'a>>) -> Option<AxTree<'a>> {
        let mut arena = Arena::default();
        let nodes = payloads
            .into_iter()
            .enumerate()
            .map(|(position, payload)| RawNode::new(payload, position, &mut arena))
            .collect();
        AxTree::link(nodes, arena)
    }

    /// Links nodes by `childIds`, like `AXNode.createTree`: a repeated `nodeId` keeps its
    /// first position but its last payload, and the root is the first node. Works in place:
    /// `nodes[..unique]` holds the nodes kept so far, and a replaced payload is swapped out
    /// behind them.
    fn link(mut nodes: Vec<RawNode<'a>>, arena: Arena<'a>) -> Option<AxTree<'a>> {
        let mut index = Index::for_nodes(&nodes);
        let mut unique = 0;
        for read in 0..nodes.len() {
            match index.get_or_insert(std::mem::take(&mut nodes[read].key), unique) {
                Some(at) => nodes.swap(at, read),
                None => {
                    if unique != read {
                        nodes.swap(unique, read);
                    }
                    unique += 1;
                }
            }
        }
        nodes.truncate(unique);
        let mut children = Vec::with_capacity(arena.child_keys.len());
        for node in &mut nodes {
            let start = children.len();
            let keys = node.children.of(&arena.child_keys);
            children.extend(keys.iter().filter_map(|key| index.get(key)));
            node.children = Span::since(start, &children);
        }
        (!nodes.is_empty()).then(|| AxTree {
            nodes,
            props: arena.props,
            children,
            iframes: FxHashMap::default(),
        })
    }

    /// The indexes of node `i`'s children.
    fn children_of(&self, i: usize) -> &[usize] {
        self.nodes[i].children.of(&self.children)
    }

    /// `backendDOMNodeId`s of the `Iframe` nodes reachable from the root, whose frames
    /// Puppeteer snapshots with the same options when `includeIframes` is set.
    pub fn iframe_backend_node_ids(&self) -> Vec<i64> {
        let mut ids = Vec::new();
        let iframes = |i: usize, _| {
            let node = &self.nodes[i];
            if node.is_iframe() {
                ids.extend(node.backend_node_id.filter(|&id| id != 0));
            }
            true
        };
        self.walk(iframes, |_, _| false);
        ids
    }

    /// Sets the snapshot of the frame shown by the `Iframe` node with this backend id; it
    /// becomes that node's last child. Returns false when no such node exists.
    pub fn attach_iframe(&mut self, backend_node_id: i64, frame: AxNode) -> bool {
        let found = self
            .nodes
            .iter()
            .position(|n| n.is_iframe() && n.backend_node_id == Some(backend_node_id));
        match found {
            Some(i) => {
                self.iframes.insert(i, frame);
                true
            }
            None => false,
        }
    }

    /// The serialized tree, as `Accessibility.snapshot({interestingOnly})`. When the root
    /// itself is not interesting, this is its first interesting descendant, as in Puppeteer.
    pub fn serialize(mut self, interesting_only: bool) -> Option<AxNode> {
        let interesting = interesting_only.then(|| self.collect_interesting());
        let mut iframes = std::mem::take(&mut self.iframes);
        self.serialize_tree(interesting.as_deref(), &mut iframes)
            .into_iter()
            .next()
    }

    /// Pre-order walk from the root with an explicit stack (deep pages must not overflow
    /// ours), visiting each node once so that cyclic input ends. `visit(i, flag)` says
    /// whether to enter the children, and `pass(i, flag)` gives them their flag.
    fn walk(&self, mut visit: impl FnMut(usize, bool) -> bool, pass: impl Fn(usize, bool) -> bool) {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![(0, false, 0)];
        while let Some((i, flag, depth)) = stack.pop() {
            if depth > MAX_DEPTH || std::mem::replace(&mut seen[i], true) || !visit(i, flag) {
                continue;
            }
            let flag = pass(i, flag);
            stack.extend(
                self.children_of(i)
                    .iter()
                    .rev()
                    .map(|&c| (c, flag, depth + 1)),
            );
        }
    }

    fn has_focusable_child(&self, i: usize, depth: usize) -> bool {
        let node = &self.nodes[i];
        if let Some(known) = node.focusable_child.get() {
            return known;
        }
        // Cached as false first, as Puppeteer does, which also ends cycles.
        node.focusable_child.set(Some(false));
        if depth > MAX_DEPTH {
            return false;
        }
        let found = self
            .children_of(i)
            .iter()
            .any(|&c| self.nodes[c].focusable() || self.has_focusable_child(c, depth + 1));
        node.focusable_child.set(Some(found));
        found
    }

    fn is_leaf(&self, i: usize) -> bool {
        let node = &self.nodes[i];
        if self.children_of(i).is_empty()
            || node.is_plain_text_field()
            || node.is_text_only()
            || node.has_leaf_role()
        {
            return true;
        }
        if self.has_focusable_child(i, 0) {
            return false;
        }
        node.is_heading() && node.has_name()
    }

    fn is_interesting(&self, i: usize, inside_control: bool) -> bool {
        let node = &self.nodes[i];
        if node.ignored() || node.hidden() {
            return false;
        }
        if node.is_landmark() || node.focusable() || node.richly_editable() || node.notable() {
            return true;
        }
        if node.is_control() {
            return true;
        }
        // A non-focusable child of a control is not interesting.
        if inside_control {
            return false;
        }
        self.is_leaf(i) && (node.has_name() || node.has_description())
    }

    /// `collectInterestingNodes`: stops below leaves, and tells children whether they
    /// sit inside a control.
    fn collect_interesting(&self) -> Vec<bool> {
        let mut set = vec![false; self.nodes.len()];
        let has_iframes = !self.iframes.is_empty();
        self.walk(
            |i, inside| {
                set[i] = self.is_interesting(i, inside)
                    || (has_iframes && self.iframes.contains_key(&i));
                !self.is_leaf(i)
            },
            |i, inside| inside || self.nodes[i].is_control(),
        );
        set
    }

    /// `serializeTree`, post-order with an explicit stack: a node that is not interesting
    /// hands its serialized children up to its parent in its place. Serialized nodes wait
    /// on one shared stack (`done`) until their parent takes them.
    fn serialize_tree(
        &self,
        interesting: Option<&[bool]>,
        iframes: &mut FxHashMap<usize, AxNode>,
    ) -> Vec<AxNode> {
        struct Frame {
            i: usize,
            next: usize,
            depth: usize,
            /// Where this node's serialized descendants start in `done`.
            first: usize,
        }
        let mut seen = vec![false; self.nodes.len()];
        seen[0] = true;
        let mut done: Vec<AxNode> = Vec::new();
        let mut stack: Vec<Frame> = Vec::new();
        let mut current = Frame {
            i: 0,
            next: 0,
            depth: 0,
            first: 0,
        };
        loop {
            if let Some(&c) = self.children_of(current.i).get(current.next) {
                current.next += 1;
                if current.depth < MAX_DEPTH && !std::mem::replace(&mut seen[c], true) {
                    let child = Frame {
                        i: c,
                        next: 0,
                        depth: current.depth + 1,
                        first: done.len(),
                    };
                    stack.push(std::mem::replace(&mut current, child));
                }
                continue;
            }
            if interesting.is_none_or(|set| set[current.i]) {
                let raw = &self.nodes[current.i];
                let mut node = raw.serialize(raw.props.of(&self.props));
                node.children = done.drain(current.first..).collect();
                node.children.extend(iframes.remove(&current.i));
                done.push(node);
            }
            match stack.pop() {
                Some(parent) => current = parent,
                None => return done,
            }
        }
    }
}

/// Builds the serialized tree from raw `nodes` written as JSON values (tests' inputs).
#[cfg(test)]
pub fn serialize_ax_tree(nodes: &[serde_json::Value], interesting_only: bool) -> Option<AxNode> {
    let text = serde_json::to_string(nodes).ok()?;
    let parsed = super::cdp::parse_nodes(&text).ok()?;
    AxTree::from_nodes(parsed)?.serialize(interesting_only)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::AxValue;
    use super::super::samples::{ax, sample_nodes};
    use super::*;

    fn outline(node: &AxNode, depth: usize, out: &mut Vec<String>) {
        out.push(format!("{}{} {}", " ".repeat(depth), node.role, node.name));
        for child in &node.children {
            outline(child, depth + 1, out);
        }
    }

    fn roles(root: Option<AxNode>) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(root) = root {
            outline(&root, 0, &mut out);
        }
        out
    }

    #[test]
    fn interesting_only_keeps_what_puppeteer_keeps() {
        let want = [
            "RootWebArea Demo",
            " heading Title",
            " StaticText Hello world",
            " button OK",
            " textbox Name",
            " combobox ",
            "  option One",
            "  option Two",
            " link More",
            "  StaticText More",
            " checkbox Agree",
            " StaticText Nested",
        ];
        assert_eq!(roles(serialize_ax_tree(&sample_nodes(), true)), want);
        assert_eq!(
            roles(serialize_ax_tree(&sample_nodes(), false)).len(),
            sample_nodes().len()
        );
    }

    #[test]
    fn root_web_area_drops_focused_and_uninteresting_root_yields_first_child() {
        let root = serialize_ax_tree(&sample_nodes(), true).expect("root");
        assert_eq!(root.property("focused"), None);
        let nodes = [
            ax("1", "generic", "", json!({}), &["2", "3"], None),
            ax("2", "button", "A", json!({}), &[], None),
            ax("3", "button", "B", json!({}), &[], None),
        ];
        assert_eq!(roles(serialize_ax_tree(&nodes, true)), ["button A"]);
    }

    #[test]
    fn attached_iframe_is_kept_with_the_frame_as_last_child() {
        let nodes = [
            ax(
                "1",
                "RootWebArea",
                "Top",
                json!({"focusable": true}),
                &["2"],
                Some(1),
            ),
            ax("2", "Iframe", "", json!({}), &[], Some(7)),
        ];
        assert_eq!(roles(serialize_ax_tree(&nodes, true)), ["RootWebArea Top"]);
        let text = serde_json::to_string(&nodes).expect("nodes");
        let parsed = crate::cdp::parse_nodes(&text).expect("parsed");
        let mut tree = AxTree::from_nodes(parsed).expect("tree");
        assert_eq!(tree.iframe_backend_node_ids(), [7]);
        let frame = AxNode {
            role: "RootWebArea".into(),
            loader_id: Some("child".into()),
            ..AxNode::default()
        };
        assert!(tree.attach_iframe(7, frame));
        assert!(!tree.attach_iframe(8, AxNode::default()));
        assert_eq!(
            roles(tree.serialize(true)),
            ["RootWebArea Top", " Iframe ", "  RootWebArea "]
        );
    }

    #[test]
    fn the_reply_read_from_cbor_gives_the_tree_its_json_gives() {
        let mut replies = Vec::new();
        let form: Value =
            serde_json::from_str(include_str!("testdata/form.json")).expect("capture");
        let steps: Value =
            serde_json::from_str(include_str!("testdata/sequence.json")).expect("capture");
        let frames = form["frames"].as_array().into_iter().flatten();
        for capture in std::iter::once(&form)
            .chain(frames)
            .chain(steps.as_array().into_iter().flatten())
        {
            replies.push(json!({ "id": 1, "result": { "nodes": capture["nodes"] } }));
        }
        replies.push(json!({ "id": 2, "result": { "nodes": sample_nodes() } }));
        replies.push(json!({ "id": 3, "result": { "nodes": [{"nodeId": 1}, null, {"nodeId": "2", "role": 5}] } }));
        replies.push(json!({ "id": 4, "result": null }));
        replies.push(json!({ "id": 5, "error": { "code": -32000, "message": "Frame not found" } }));
        assert!(replies.len() > 5);
        for reply in replies {
            let text = reply.to_string();
            let cbor = devtools_cbor::from_json(&reply).expect("encodes");
            for interesting in [true, false] {
                let from_text = AxTree::from_reply(&text)
                    .map(|tree| tree.and_then(|t| t.serialize(interesting)));
                let from_cbor = AxTree::from_cbor_reply(&cbor)
                    .map(|tree| tree.and_then(|t| t.serialize(interesting)));
                assert_eq!(from_cbor, from_text, "{text:.200}");
            }
        }
    }

    #[test]
    fn malformed_input_never_panics() {
        let odd = [
            json!([]),
            json!([null, 3, "x"]),
            json!([{"nodeId": 1}]),
            json!([{"properties": "nope", "childIds": "1", "role": 5, "name": {"value": {}}}]),
            json!([{"nodeId": "1", "role": {}, "properties": [{"value": 1}, {"name": 2}, {"name": "level"}], "childIds": [null, 7]}]),
            json!([{"nodeId": "1", "childIds": ["2"]}, {"nodeId": "2", "childIds": ["1", "2"]}]),
            json!([{"nodeId": "1", "childIds": ["1"], "properties": [{"name": "focusable", "value": {"value": true}}]}]),
            json!([{"nodeId": "1", "role": {"value": "a"}}, {"nodeId": "1", "role": {"value": "b"}}]),
        ];
        for nodes in odd {
            let nodes = nodes.as_array().cloned().unwrap_or_default();
            for interesting in [true, false] {
                let _ = serialize_ax_tree(&nodes, interesting);
            }
        }
        let dup = [
            ax("1", "a", "", json!({}), &[], None),
            ax("1", "b", "", json!({}), &[], None),
        ];
        assert_eq!(roles(serialize_ax_tree(&dup, false)), ["b "]);
    }

    #[test]
    fn node_ids_match_as_js_map_keys_do() {
        // "01" is not "1", and the string "7" is not the number 7: the digit keys kept as
        // numbers must not merge what a JS Map keeps apart.
        let mut root = ax("1", "generic", "root", json!({}), &[], None);
        root["childIds"] = json!(["01", "7", 8, "18446744073709551616"]);
        let mut numbered = ax("7", "button", "number seven", json!({}), &[], None);
        numbered["nodeId"] = json!(7);
        let nodes = [
            root,
            ax("01", "button", "zero one", json!({}), &[], None),
            numbered,
            ax("7", "button", "string seven", json!({}), &[], None),
            ax("8", "button", "string eight", json!({}), &[], None),
            ax(
                "18446744073709551616",
                "button",
                "beyond u64",
                json!({}),
                &[],
                None,
            ),
        ];
        let want = [
            "generic root",
            " button zero one",
            " button string seven",
            " button beyond u64",
        ];
        let reply = json!({"id": 1, "result": {"nodes": nodes}}).to_string();
        let tree = AxTree::from_reply(&reply).expect("parsed").expect("tree");
        assert_eq!(roles(tree.serialize(false)), want);
    }

    #[test]
    fn ids_far_apart_link_as_ids_in_sequence_do() {
        // Ids in sequence are looked up in a table; ids far apart in a hash map.
        for far in ["3", "5000000"] {
            let nodes = [
                ax("1", "generic", "root", json!({}), &[far, "2"], None),
                ax("2", "button", "two", json!({}), &[], None),
                ax(far, "button", "far", json!({}), &[], None),
                ax("2", "button", "two again", json!({}), &[], None),
            ];
            let want = ["generic root", " button far", " button two again"];
            assert_eq!(roles(serialize_ax_tree(&nodes, false)), want, "{far}");
        }
    }

    #[test]
    fn property_names_are_lower_cased_as_javascript_does() {
        // U+212A KELVIN SIGN lower-cases to an ASCII "k" in JavaScript and in Rust.
        let props = json!({"\u{212A}eyShortcuts": "Alt+K", "LEVEL": 3, "Level": 4});
        let nodes = [ax("1", "heading", "h", props, &[], Some(1))];
        let root = serialize_ax_tree(&nodes, false).expect("root");
        assert_eq!(
            root.properties,
            [
                ("keyshortcuts", AxValue::Str("Alt+K".into())),
                ("level", AxValue::Num(4.0)),
            ]
        );
    }

    #[test]
    fn repeated_node_ids_keep_the_first_place_and_the_last_payload() {
        let nodes = [
            ax("1", "generic", "Old root", json!({}), &["2", "3"], None),
            ax("2", "button", "first", json!({}), &[], None),
            ax("4", "button", "dropped", json!({}), &[], None),
            ax(
                "1",
                "generic",
                "New root",
                json!({}),
                &["2", "3", "4"],
                None,
            ),
            ax("3", "button", "c", json!({}), &[], None),
            ax("2", "button", "last", json!({}), &[], None),
            ax("4", "button", "d", json!({}), &[], None),
        ];
        let want = ["generic New root", " button last", " button c", " button d"];
        assert_eq!(roles(serialize_ax_tree(&nodes, false)), want);
        // The reply reader builds the same tree in place.
        let reply = json!({"id": 3, "result": {"nodes": nodes}}).to_string();
        let tree = AxTree::from_reply(&reply).expect("parsed").expect("tree");
        assert_eq!(roles(tree.serialize(false)), want);
    }

    #[test]
    fn very_deep_trees_fit_a_small_stack() {
        let depth = 5000;
        let nodes: Vec<Value> = (0..depth)
            .map(|i| {
                let child = (i + 1).to_string();
                let children: Vec<&str> = if i + 1 < depth {
                    vec![child.as_str()]
                } else {
                    vec![]
                };
                ax(
                    &i.to_string(),
                    "generic",
                    "",
                    json!({"focusable": i % 2 == 0}),
                    &children,
                    Some(i),
                )
            })
            .collect();
        let run = move || {
            for interesting in [true, false] {
                let _ = serialize_ax_tree(&nodes, interesting);
            }
        };
        let joined = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(run)
            .map(|h| h.join().is_ok());
        assert_eq!(joined.ok(), Some(true));
    }
}
