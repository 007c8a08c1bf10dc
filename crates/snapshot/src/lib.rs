//! Accessibility snapshots exactly as chrome-devtools-mcp 1.11.0 prints them: Puppeteer's
//! `page.accessibility.snapshot()` (in `ax_node` and `ax_tree`), the uids of
//! `TextSnapshot.create` (here) and the text of `SnapshotFormatter` (in `format`).
//!
//! Caller's side, as Puppeteer 25.14 does it: send `Accessibility.getFullAXTree` with
//! `{"frameId": <frame id>}` (no `depth`) on the frame's session and hand the reply's text
//! to [`AxTree::from_reply`], which parses it in place (see `cdp`). With `includeIframes`,
//! snapshot every frame of [`AxTree::iframe_backend_node_ids`] (`DOM.describeNode` gives its
//! `frameId`; a cross-process frame answers on its own target's session) the same way
//! (recursively), set its root's `loader_id`, and [`AxTree::attach_iframe`] it before
//! [`AxTree::serialize`]. Puppeteer's loaderId for a frame is the one of its last
//! `Page.lifecycleEvent` named `init` (`""` before one); it never prints, so any id that
//! changes exactly when the frame's document does gives the same uids.

mod ax_node;
mod ax_tree;
pub mod cdp;
mod format;
#[cfg(test)]
mod samples;
mod scope;

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub use ax_node::{AxNode, AxValue};
pub use ax_tree::AxTree;
#[cfg(test)]
pub use ax_tree::serialize_ax_tree;
pub use scope::{Found, Query};

static NEXT_SNAPSHOT_ID: AtomicU64 = AtomicU64::new(1);

/// The next snapshot id: one process-wide counter from 1, as `TextSnapshot.nextSnapshotId`.
pub fn next_snapshot_id() -> u64 {
    NEXT_SNAPSHOT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Per-page uid memory: `${loaderId}_${backendNodeId}` -> uid, kept across snapshots so a
/// node keeps its uid until its document is replaced. Keys are held as numbers (the loaderId
/// by its number in `loaders`) and uids as the pair they print from, so remembering the
/// nodes of a 4,000-element page allocates no string per node.
#[derive(Debug, Default, Clone)]
pub struct UidMap {
    /// loaderId -> its number in the keys of `map`.
    loaders: FxHashMap<Arc<str>, u64>,
    next_loader: u64,
    /// (loader number, backend id) -> the uid. A missing backend id stands for `undefined`
    /// in the reference's template string, so such nodes of one document share one uid.
    map: FxHashMap<UidKey, Uid>,
    /// Counts `Snapshot::build` passes, to tell the keys the last one met.
    pass: u64,
}

/// A remembered uid: `<snapshot>_<counter>`, and the build pass that last met its node.
#[derive(Debug, Clone, Copy)]
struct Uid {
    snapshot: u64,
    counter: u64,
    pass: u64,
}

/// A node's key in [`UidMap`]: its document's loader number and its backend id.
type UidKey = (u64, Option<i64>);

impl UidMap {
    /// The number of a loaderId, given one on first sight.
    fn loader(&mut self, loader_id: &str) -> (Arc<str>, u64) {
        if let Some((id, number)) = self.loaders.get_key_value(loader_id) {
            return (id.clone(), *number);
        }
        let (id, number) = (Arc::<str>::from(loader_id), self.next_loader);
        self.next_loader += 1;
        self.loaders.insert(id.clone(), number);
        (id, number)
    }

    /// The uid remembered for a node, if any.
    #[cfg(test)]
    pub fn get(&self, loader_id: &str, backend_node_id: Option<i64>) -> Option<String> {
        let loader = *self.loaders.get(loader_id)?;
        let uid = self.map.get(&(loader, backend_node_id))?;
        Some(format!("{}_{}", uid.snapshot, uid.counter))
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// A snapshot node with its uid (`TextSnapshotNode`).
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotNode {
    pub uid: String,
    pub role: String,
    pub name: String,
    /// Serialized properties (Puppeteer order), plus `value` = name for options.
    pub attributes: Vec<(&'static str, AxValue)>,
    pub backend_node_id: Option<i64>,
    /// The loaderId of the node's document, to tell which frame the backend id is in.
    pub loader_id: Arc<str>,
    pub children: Vec<SnapshotNode>,
}

impl SnapshotNode {
    /// The value of one attribute, e.g. `"value"` or `"focused"`.
    #[cfg(test)]
    pub fn attribute(&self, key: &str) -> Option<&AxValue> {
        self.attributes
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }
}

/// One accessibility snapshot of a page, with uids assigned.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub id: u64,
    pub root: SnapshotNode,
    pub verbose: bool,
}

/// State of one `assignIds` pass.
struct Assigner<'a> {
    snapshot_id: u64,
    counter: u64,
    uids: &'a mut UidMap,
}

/// A node whose children are still being converted, with its document's loader number.
struct Frame {
    node: SnapshotNode,
    loader: u64,
    rest: std::vec::IntoIter<AxNode>,
}

impl Assigner<'_> {
    /// Gives `node` its uid when it is first reached, so new uids count up in pre-order.
    fn open(&mut self, node: AxNode, inherited: (&Arc<str>, u64)) -> Frame {
        let (loader_id, loader) = match &node.loader_id {
            Some(own) => self.uids.loader(own),
            None => (inherited.0.clone(), inherited.1),
        };
        let key = (loader, node.backend_node_id);
        let pass = self.uids.pass;
        let uid = self.uids.map.entry(key).or_insert_with(|| {
            self.counter += 1;
            Uid {
                snapshot: self.snapshot_id,
                counter: self.counter - 1,
                pass,
            }
        });
        uid.pass = pass;
        let (snapshot, counter) = (uid.snapshot, uid.counter);
        let mut attributes = node.properties;
        // An option's AX node has no value, so its text stands in for it.
        if node.role == "option" && !node.name.is_empty() {
            let value = AxValue::Str(node.name.clone());
            match attributes.iter_mut().find(|(k, _)| *k == "value") {
                Some(slot) => slot.1 = value,
                None => attributes.push(("value", value)),
            }
        }
        let node_out = SnapshotNode {
            uid: format!("{snapshot}_{counter}"),
            role: node.role,
            name: node.name,
            attributes,
            backend_node_id: node.backend_node_id,
            loader_id,
            children: Vec::with_capacity(node.children.len()),
        };
        Frame {
            node: node_out,
            loader,
            rest: node.children.into_iter(),
        }
    }

    /// Converts the whole tree with an explicit stack, so deep pages cannot overflow ours.
    fn assign(&mut self, root: AxNode, loader_id: &str) -> SnapshotNode {
        let (root_loader, number) = self.uids.loader(loader_id);
        let mut stack: Vec<Frame> = Vec::new();
        let mut current = self.open(root, (&root_loader, number));
        loop {
            if let Some(child) = current.rest.next() {
                let next = self.open(child, (&current.node.loader_id, current.loader));
                stack.push(std::mem::replace(&mut current, next));
                continue;
            }
            match stack.pop() {
                Some(mut parent) => {
                    parent.node.children.push(current.node);
                    current = parent;
                }
                None => return current.node,
            }
        }
    }
}

/// Pre-order over the tree with children taken last-first, as `resolveCdpElementId`
/// walks it; the first hit is also the last node `assignIds` stored under a uid.
fn find_reversed(
    root: &SnapshotNode,
    hit: impl Fn(&SnapshotNode) -> bool,
) -> Option<&SnapshotNode> {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if hit(node) {
            return Some(node);
        }
        stack.extend(node.children.iter());
    }
    None
}

impl Snapshot {
    /// Assigns uids `<snapshot_id>_<n>` like `TextSnapshot.create`: a node seen before
    /// under the same loaderId and backend id keeps its uid, and `uids` then forgets every
    /// key this snapshot did not contain (those its pass did not mark). `loader_id` applies to nodes without their own.
    pub fn build(
        root: AxNode,
        loader_id: &str,
        snapshot_id: u64,
        verbose: bool,
        uids: &mut UidMap,
    ) -> Snapshot {
        uids.pass += 1;
        let mut assigner = Assigner {
            snapshot_id,
            counter: 0,
            uids,
        };
        let root = assigner.assign(root, loader_id);
        let pass = uids.pass;
        uids.map.retain(|_, uid| uid.pass == pass);
        let live: FxHashSet<u64> = uids.map.keys().map(|(loader, _)| *loader).collect();
        uids.loaders.retain(|_, number| live.contains(number));
        Snapshot {
            id: snapshot_id,
            root,
            verbose,
        }
    }

    /// Text exactly as `SnapshotFormatter.toString()`.
    pub fn to_text(&self) -> String {
        format::to_text(self)
    }

    /// Structured form as `SnapshotFormatter.toJSON()`.
    pub fn to_json(&self) -> serde_json::Value {
        format::to_json(self)
    }

    /// The node with this uid, to act on it. When nodes share a uid (those without a
    /// backend id), the last one stored by `assignIds` (post-order) wins, as in `idToNode`.
    pub fn find(&self, uid: &str) -> Option<&SnapshotNode> {
        find_reversed(&self.root, |n| n.uid == uid)
    }

    /// The uid of the node with this backend id, as `resolveCdpElementId` (the elements a
    /// DevTools issue names).
    pub fn uid_of_backend_node(&self, backend_node_id: i64) -> Option<&str> {
        find_reversed(&self.root, |n| n.backend_node_id == Some(backend_node_id))
            .map(|n| n.uid.as_str())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::samples::{ax, sample_nodes};
    use super::*;

    fn snapshot(nodes: &[serde_json::Value], loader: &str, id: u64, uids: &mut UidMap) -> Snapshot {
        let root = serialize_ax_tree(nodes, true).expect("root");
        Snapshot::build(root, loader, id, false, uids)
    }

    const SAMPLE: &str = r#"uid=1_0 RootWebArea "Demo" url="about:blank"
  uid=1_1 heading "Title" level="1"
  uid=1_2 "Hello world"
  uid=1_3 button "OK"
  uid=1_4 textbox "Name" focusable focused value="abc"
  uid=1_5 combobox expandable haspopup="menu" value="One"
    uid=1_6 option "One" selected
    uid=1_7 option "Two"
  uid=1_8 link "More" url="https://example.com/"
  uid=1_10 checkbox "Agree" checked
  uid=1_11 "Nested"
"#;

    #[test]
    fn sample_page_prints_exact_lines() {
        let s = snapshot(&sample_nodes(), "L1", 1, &mut UidMap::default());
        assert_eq!(s.to_text(), SAMPLE);
        assert_eq!(s.find("1_4").and_then(|n| n.backend_node_id), Some(9));
        assert_eq!(
            s.find("1_6").and_then(|n| n.attribute("value")),
            Some(&AxValue::Str("One".into()))
        );
        assert_eq!(s.uid_of_backend_node(14), Some("1_8"));
        assert!(s.find("9_9").is_none());
        assert_eq!(
            s.to_json()["children"][3],
            json!({"id": "1_4", "role": "textbox", "name": "Name", "focusable": true, "focused": true, "value": "abc"})
        );
    }

    #[test]
    fn verbose_prints_ignored_nodes_and_shares_uids_without_backend_ids() {
        let root = serialize_ax_tree(&sample_nodes(), false).expect("root");
        let s = Snapshot::build(root, "L1", 3, true, &mut UidMap::default());
        let text = s.to_text();
        let head: Vec<&str> = text.lines().take(6).collect();
        let want = [
            "uid=3_0 RootWebArea \"Demo\" url=\"about:blank\"",
            "  uid=3_1 ignored",
            "    uid=3_2 heading \"Title\" level=\"1\"",
            "      uid=3_3 \"Title\"",
            "        uid=3_4 InlineTextBox \"Title\"",
            "    uid=3_5 \"Hello world\"",
        ];
        assert_eq!(head, want);
        assert_eq!(s.find("3_4").map(|n| n.name.as_str()), Some("Title"));
    }

    #[test]
    fn uids_are_stable_per_loader_and_pruned() {
        let mut uids = UidMap::default();
        let first = snapshot(&sample_nodes(), "L1", 1, &mut uids);
        assert_eq!(uids.len(), 12);
        // Same document, one node gone and one new: old uids stay, the new one counts from 0.
        let mut nodes = sample_nodes();
        nodes[1]["childIds"] = json!(["3", "5", "21"]);
        nodes.push(ax(
            "21",
            "button",
            "New",
            json!({"focusable": true}),
            &[],
            Some(21),
        ));
        let second = snapshot(&nodes, "L1", 2, &mut uids);
        let want = "uid=1_0 RootWebArea \"Demo\" url=\"about:blank\"\n  uid=1_1 heading \"Title\" level=\"1\"\n  \
                    uid=1_2 \"Hello world\"\n  uid=2_0 button \"New\"\n";
        assert_eq!(second.to_text(), want);
        assert_eq!(uids.len(), 4);
        assert_eq!(uids.get("L1", Some(9)), None);
        assert_eq!(uids.get("L1", Some(21)).as_deref(), Some("2_0"));
        // The sample again: pruned nodes get new uids in snapshot 3.
        let third = snapshot(&sample_nodes(), "L1", 3, &mut uids);
        assert_eq!(
            third.find("1_2").map(|n| n.name.as_str()),
            Some("Hello world")
        );
        assert_eq!(third.uid_of_backend_node(7), Some("3_0"));
        // A new document: every uid is new.
        let fourth = snapshot(&sample_nodes(), "L2", 4, &mut uids);
        assert_eq!(fourth.to_text(), SAMPLE.replace("uid=1_", "uid=4_"));
        assert_eq!(uids.len(), 12);
        assert_ne!(first, fourth);
    }

    #[test]
    fn child_frame_nodes_use_their_own_loader() {
        let mut frame =
            serialize_ax_tree(&[ax("1", "button", "In", json!({}), &[], Some(1))], true)
                .expect("frame");
        frame.loader_id = Some("F".into());
        let mut root = serialize_ax_tree(
            &[ax(
                "1",
                "RootWebArea",
                "Top",
                json!({"focusable": true}),
                &[],
                Some(1),
            )],
            true,
        )
        .expect("root");
        root.children_mut().push(frame);
        let mut uids = UidMap::default();
        let s = Snapshot::build(root, "M", 1, false, &mut uids);
        assert_eq!(
            s.to_text(),
            "uid=1_0 RootWebArea \"Top\"\n  uid=1_1 button \"In\"\n"
        );
        assert_eq!(s.find("1_1").map(|n| &*n.loader_id), Some("F"));
        assert_eq!(
            (uids.get("M", Some(1)), uids.get("F", Some(1))),
            (Some("1_0".into()), Some("1_1".into()))
        );
        assert!(next_snapshot_id() < next_snapshot_id());
    }

    #[test]
    fn deep_snapshots_fit_a_small_stack() {
        let nodes: Vec<serde_json::Value> = (0..3000)
            .map(|i: i64| {
                let child = (i + 1).to_string();
                ax(
                    &i.to_string(),
                    "group",
                    "g",
                    json!({"focusable": true}),
                    &[child.as_str()],
                    Some(i),
                )
            })
            .collect();
        let run = move || {
            let root = serialize_ax_tree(&nodes, false).expect("root");
            let s = Snapshot::build(root, "L", 1, true, &mut UidMap::default());
            (
                s.to_text().lines().count(),
                s.to_json().is_object(),
                s.find("1_1000").is_some(),
            )
        };
        let joined = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(run)
            .map(|h| h.join().ok());
        assert_eq!(joined.ok().flatten(), Some((1001, true, true)));
    }
}
