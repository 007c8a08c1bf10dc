//! The engine on small hand-made snapshots whose answers can be worked out by hand.

use crate::tools::{self, ListOptions};
use crate::{LoadedSnapshot, NodeFilter, ObjectQuery};

const NODE_TYPES: [&str; 15] = [
    "hidden",
    "array",
    "string",
    "object",
    "code",
    "closure",
    "regexp",
    "number",
    "native",
    "synthetic",
    "concatenated string",
    "sliced string",
    "symbol",
    "bigint",
    "object shape",
];
const EDGE_TYPES: [&str; 7] = [
    "context", "element", "property", "internal", "hidden", "shortcut", "weak",
];

/// A snapshot written node by node: `node(type, name, id, size)` then `edge(from, type,
/// name, to)` with node positions (ordinals).
#[derive(Default)]
struct Builder {
    strings: Vec<String>,
    nodes: Vec<(usize, usize, u32, u32, u32)>,
    edges: Vec<Vec<(usize, u32, usize)>>,
}

impl Builder {
    fn string(&mut self, text: &str) -> usize {
        match self.strings.iter().position(|s| s == text) {
            Some(i) => i,
            None => {
                self.strings.push(text.to_string());
                self.strings.len() - 1
            }
        }
    }

    fn node(&mut self, kind: &str, name: &str, id: u32, size: u32) -> usize {
        self.node_with(kind, name, id, size, 0)
    }

    fn node_with(
        &mut self,
        kind: &str,
        name: &str,
        id: u32,
        size: u32,
        detachedness: u32,
    ) -> usize {
        let kind = NODE_TYPES
            .iter()
            .position(|t| *t == kind)
            .expect("node type");
        let name = self.string(name);
        self.nodes.push((kind, name, id, size, detachedness));
        self.edges.push(Vec::new());
        self.nodes.len() - 1
    }

    fn edge(&mut self, from: usize, kind: &str, name: &str, to: usize) {
        let kind_index = EDGE_TYPES
            .iter()
            .position(|t| *t == kind)
            .expect("edge type");
        let name = if kind == "element" || kind == "hidden" {
            name.parse().expect("index")
        } else {
            self.string(name) as u32
        };
        self.edges[from].push((kind_index, name, to));
    }

    fn json(&self) -> String {
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        for (i, (kind, name, id, size, detachedness)) in self.nodes.iter().enumerate() {
            nodes.extend([
                *kind as u32,
                *name as u32,
                *id,
                *size,
                self.edges[i].len() as u32,
                *detachedness,
            ]);
            for (kind, name, to) in &self.edges[i] {
                edges.extend([*kind as u32, *name, (*to * 6) as u32]);
            }
        }
        serde_json::json!({
            "snapshot": {
                "meta": {
                    "node_fields": ["type", "name", "id", "self_size", "edge_count", "detachedness"],
                    "node_types": [NODE_TYPES, "string", "number", "number", "number", "number"],
                    "edge_fields": ["type", "name_or_index", "to_node"],
                    "edge_types": [EDGE_TYPES, "string_or_number", "node"],
                },
                "node_count": self.nodes.len(),
                "edge_count": edges.len() / 3,
            },
            "nodes": nodes,
            "edges": edges,
            "strings": self.strings,
        })
        .to_string()
    }

    fn load(&self) -> LoadedSnapshot {
        LoadedSnapshot::load(self.json().as_bytes()).expect("loads")
    }
}

/// root -> (GC roots) -> window; window holds a and b; a and b both hold shared; shared
/// holds leaf.
fn diamond() -> Builder {
    let mut b = Builder::default();
    let root = b.node("synthetic", "", 1, 0);
    let window = b.node("object", "Window", 3, 10);
    let a = b.node("object", "A", 5, 100);
    let bb = b.node("object", "B", 7, 200);
    let shared = b.node("object", "Shared", 9, 1000);
    let leaf = b.node("object", "Leaf", 11, 5);
    b.edge(root, "element", "1", window);
    b.edge(window, "property", "a", a);
    b.edge(window, "property", "b", bb);
    b.edge(a, "property", "shared", shared);
    b.edge(bb, "property", "shared", shared);
    b.edge(shared, "property", "leaf", leaf);
    b
}

fn text(lines: Vec<String>) -> String {
    lines.join("\n")
}

#[test]
fn retained_sizes_follow_the_dominator_tree() {
    let loaded = diamond().load();
    let s = &loaded.snapshot;
    let retained = |id: f64| s.retained_size(s.node_index_for_id(id).expect("node"));
    // Shared is reachable through a and through b: only the window dominates it.
    assert_eq!(retained(9.0), 1005);
    assert_eq!(retained(5.0), 100);
    assert_eq!(retained(7.0), 200);
    assert_eq!(retained(3.0), 1315);
    assert_eq!(retained(1.0), 1315);
    let chain = text(tools::dominators(&loaded, 11.0, None).expect("chain"));
    assert!(
        chain.ends_with("11,Leaf,0.0\u{a0}kB,0.0\u{a0}kB\n9,Shared,1.0\u{a0}kB,1.0\u{a0}kB\n3,Window,0.0\u{a0}kB,1.3\u{a0}kB\n1,,0.0\u{a0}kB,1.3\u{a0}kB"),
        "{chain}"
    );
}

#[test]
fn weak_and_shortcut_edges_do_not_retain() {
    let mut b = diamond();
    let cache = b.node("object", "Cache", 13, 50);
    let window = 1;
    b.edge(window, "weak", "cache", cache);
    let shortcut_target = b.node("object", "Target", 15, 7);
    b.edge(2, "property", "target", shortcut_target);
    b.edge(window, "shortcut", "fast", shortcut_target);
    let loaded = b.load();
    let s = &loaded.snapshot;
    let cache = s.node_index_for_id(13.0).expect("cache");
    // Only a weak retainer: parked under the root, retained by nobody else.
    assert_eq!(s.dominators_of(cache).len(), 2);
    assert_eq!(s.distance(cache), crate::snapshot::NO_DISTANCE);
    let target = s.node_index_for_id(15.0).expect("target");
    // The shortcut from the window is ignored: A (not the window) dominates the target.
    assert_eq!(s.dominators_of(target)[1].node_id, 5);
    assert_eq!(s.retained_size(s.node_index_for_id(5.0).expect("a")), 107);
}

#[test]
fn detached_dom_is_propagated_renamed_and_filtered() {
    let mut b = diamond();
    let div = b.node_with("native", "HTMLDivElement", 21, 80, 2);
    let span = b.node("native", "HTMLSpanElement", 23, 40);
    let text_node = b.node("native", "Text", 25, 30);
    let attached = b.node_with("native", "HTMLBodyElement", 27, 60, 1);
    b.edge(div, "element", "0", span);
    b.edge(span, "element", "0", text_node);
    b.edge(1, "property", "leak", div);
    b.edge(1, "property", "body", attached);
    let loaded = b.load();
    let s = &loaded.snapshot;
    let span = s.node_index_for_id(23.0).expect("span");
    assert_eq!(s.detachedness_of(span), crate::snapshot::DETACHED);
    assert_eq!(s.node_name(span), "Detached HTMLSpanElement");
    let details = text(
        tools::details(
            &loaded,
            Some(&NodeFilter::RetainedByDetachedDom),
            ListOptions::default(),
        )
        .expect("details"),
    );
    // Cutting the edges into detached nodes strands the whole detached tree.
    assert!(details.contains("Objects: 3"), "{details}");
    assert!(
        details.contains(",Detached HTMLDivElement,1,0.1\u{a0}kB,0.2\u{a0}kB"),
        "{details}"
    );
    let query = ObjectQuery {
        is_detached: Some(true),
        ..Default::default()
    };
    let found = text(tools::query(&loaded, &query, ListOptions::default()).expect("query"));
    assert_eq!(
        found,
        "## Heap Snapshot Data\nnodeId,nodeName,type,distance,selfSize,retainedSize\n\
         21,Detached HTMLDivElement,native,2,0.1\u{a0}kB,0.2\u{a0}kB\n\
         23,Detached HTMLSpanElement,native,3,0.0\u{a0}kB,0.1\u{a0}kB\n\
         25,Detached Text,native,4,0.0\u{a0}kB,0.0\u{a0}kB\n\
         Showing 1-3 of 3 (Page 1 of 1)."
    );
    let info = text(tools::object_details(&loaded, 27.0, None).expect("info"));
    assert!(info.contains("detachedness: attached"), "{info}");
}

#[test]
fn console_retained_objects_are_found() {
    let mut b = diamond();
    let holder = b.node("synthetic", "(Console roots)", 31, 0);
    let kept = b.node("object", "ConsoleKept", 33, 300);
    let inner = b.node("array", "", 35, 700);
    b.edge(0, "element", "2", holder);
    b.edge(holder, "internal", "1 / DevTools console", kept);
    b.edge(kept, "internal", "elements", inner);
    let loaded = b.load();
    let details = text(
        tools::details(
            &loaded,
            Some(&NodeFilter::RetainedByConsole),
            ListOptions::default(),
        )
        .expect("details"),
    );
    // The array store's size moves onto its only owner (DevTools' shallow sizes).
    assert!(details.contains("Objects: 1"), "{details}");
    assert!(
        details.contains("ConsoleKept,1,1.0\u{a0}kB,1.0\u{a0}kB"),
        "{details}"
    );
    let paths = text(tools::retaining_paths(&loaded, 9.0, None, None, None, None).expect("paths"));
    assert!(
        paths.ends_with("### Retaining Paths\n<- @7 B via property shared (distance: 2)\n<- @5 A via property shared (distance: 2)"),
        "{paths}"
    );
}

#[test]
fn plain_objects_are_named_by_their_properties() {
    let mut b = diamond();
    let mut objects = Vec::new();
    for id in [41, 43, 45] {
        let object = b.node("object", "Object", id, 16);
        let x = b.node("number", "heap number", id + 100, 8);
        b.edge(object, "property", "x", x);
        b.edge(object, "property", "y", x);
        b.edge(1, "property", &format!("o{id}"), object);
        objects.push(object);
    }
    let loaded = b.load();
    let s = &loaded.snapshot;
    let first = objects[0] * 6;
    assert_eq!(s.node_name(first), "{x, y}");
    assert_eq!(s.class_name(first), "{x, y}");
    let details = text(tools::details(&loaded, None, ListOptions::default()).expect("details"));
    assert!(
        details.contains("\n6,{x, y},3,0.0\u{a0}kB,0.1\u{a0}kB\n7,(number),3,"),
        "{details}"
    );
}

#[test]
fn edges_sort_and_filter_like_devtools() {
    let loaded = diamond().load();
    let edges = text(
        tools::edges(
            &loaded,
            3.0,
            crate::EdgeSort::RetainedSize,
            None,
            true,
            ListOptions::default(),
        )
        .expect("edges"),
    );
    assert_eq!(
        edges,
        "## Heap Snapshot Data\nname,type,nodeId,nodeName,selfSize,retainedSize\n\
         b,property,7,B,0.2\u{a0}kB,0.2\u{a0}kB\na,property,5,A,0.1\u{a0}kB,0.1\u{a0}kB\n\
         Showing 1-2 of 2 (Page 1 of 1)."
    );
    let by_name = text(
        tools::edges(
            &loaded,
            3.0,
            crate::EdgeSort::Name,
            Some(150),
            true,
            ListOptions::default(),
        )
        .expect("edges"),
    );
    assert!(
        by_name.contains("\nb,property,7,B,0.2\u{a0}kB,0.2\u{a0}kB\nShowing 1-1 of 1"),
        "{by_name}"
    );
    let retainers =
        text(tools::retainers(&loaded, 9.0, ListOptions::default()).expect("retainers"));
    assert!(
        retainers.contains("shared,property,7,B") && retainers.contains("shared,property,5,A"),
        "{retainers}"
    );
    let error = tools::retainers(&loaded, 999.0, ListOptions::default()).expect_err("unknown id");
    assert_eq!(error.to_string(), "Node with ID 999 not found");
}

#[test]
fn a_diff_lists_new_and_deleted_objects() {
    let base = diamond().load();
    let mut later = diamond();
    let extra = later.node("object", "Shared", 51, 400);
    later.edge(1, "property", "extra", extra);
    let current = later.load();
    let diff = text(tools::compare(&base, &current, None, ListOptions::default()).expect("diff"));
    assert!(
        diff.contains("Total: # new: 1, # deleted: 0, # delta: +1, alloc size: +0.4\u{a0}kB"),
        "{diff}"
    );
    assert!(
        diff.contains("0,Shared,1,0,1,0.4\u{a0}kB,0.0\u{a0}kB,0.4\u{a0}kB"),
        "{diff}"
    );
    let detail =
        text(tools::compare(&base, &current, Some(0.0), ListOptions::default()).expect("detail"));
    assert!(
        detail.contains("  + @51 (self_size: 0.4\u{a0}kB)"),
        "{detail}"
    );
    let error =
        tools::compare(&base, &current, Some(5.0), ListOptions::default()).expect_err("index");
    assert_eq!(
        error.to_string(),
        "Invalid classIndex: 5. Total classes with changes: 1"
    );
}

#[test]
fn broken_snapshots_are_refused_with_a_reason() {
    let mut broken = diamond();
    broken.edge(0, "property", "nowhere", 99);
    let bad_target = broken.json();
    for (text, wanted) in [
        (bad_target.as_str(), "edge"),
        (
            "{\"snapshot\":{\"meta\":{\"node_fields\":[],\"node_types\":[],\"edge_fields\":[],\"edge_types\":[]}},\"nodes\":[],\"strings\":[]}",
            "field",
        ),
        ("[1,2,3]", "unexpected"),
        ("", "end of file"),
    ] {
        let error = LoadedSnapshot::load(text.as_bytes())
            .err()
            .expect("refused");
        assert!(error.to_string().contains(wanted), "{wanted}: {error}");
    }
}

/// root -> window -> a chain of `links` objects; the id of the last.
fn chain(links: u32) -> (Builder, f64) {
    let mut b = Builder::default();
    let root = b.node("synthetic", "", 1, 0);
    let window = b.node("object", "Window", 3, 10);
    b.edge(root, "element", "1", window);
    let mut previous = window;
    for step in 0..links {
        let next = b.node("object", "Link", 5 + 2 * step, 8);
        b.edge(previous, "property", "next", next);
        previous = next;
    }
    (b, f64::from(5 + 2 * (links - 1)))
}

/// Retaining paths of the chain's last link, walked on a thread whose stack a recursion of
/// the depth bound would overflow.
fn paths_on_a_small_stack(links: u32) -> String {
    let (b, last) = chain(links);
    let loaded = b.load();
    std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(move || {
            tools::retaining_paths(&loaded, last, Some(1e12), Some(1e12), None, None).map(text)
        })
        .expect("thread")
        .join()
        .expect("no stack overflow")
        .expect("paths")
}

/// Chains deeper than any call stack: the walk, its text and the drop of its tree use stacks
/// of their own, and the depth bound holds whatever `maxDepth` asks.
#[test]
fn a_long_retaining_chain_never_recurses() {
    let deep = paths_on_a_small_stack(20_000);
    assert!(!deep.contains("<- @"), "past the bound: no complete path");
    assert!(deep.contains("limits were reached: depth"), "{deep}");
    let within = paths_on_a_small_stack(900);
    let steps = within.lines().filter(|line| line.contains("<- @")).count();
    assert_eq!(steps, 899, "{}", &within[..within.len().min(2000)]);
    let last_step = format!(
        "{}<- @5 Link via property next (distance: 2)",
        "  ".repeat(898)
    );
    assert!(
        within.ends_with(&last_step),
        "{}",
        &within[within.len() - 200..]
    );
}

#[test]
fn numbers_are_the_summary_as_data() {
    let loaded = diamond().load();
    let numbers = loaded.snapshot.numbers();
    assert_eq!(numbers.node_count as usize, loaded.snapshot.node_count);
    assert_eq!(numbers.total_size, loaded.snapshot.total_size());
    assert!(!numbers.classes.is_empty());
    let sizes: Vec<u64> = numbers.classes.iter().map(|c| c.retained_size).collect();
    let mut sorted = sizes.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(sizes, sorted, "largest retained size first");
    let shared = numbers
        .classes
        .iter()
        .find(|class| class.name == "Shared")
        .expect("the Shared class");
    assert_eq!((shared.count, shared.retained_size), (1, 1005));
}
