//! Less than the whole page: the subtree under one uid, a few levels deep, and the nodes whose
//! role or name matches a query with the path to each. Uids are those of the full snapshot the
//! pass assigned, so any of them can be the next action's target.

use super::format::{subtree_text, write_line};
use super::{Snapshot, SnapshotNode};

/// What `find_in_page` looks for, in a node's role or name.
pub enum Query {
    /// A case-insensitive substring (see [`Query::text`]); boxed, the finder is large.
    Text(Box<TextQuery>),
    /// A regular expression (linear-time engine; the caller bounds its size).
    Regex(regex::Regex),
}

/// A case-insensitive substring, lowered and compiled once: the query comes from a model or a
/// plugin and may be megabytes long, so no per-node work may depend on its length (lowering
/// it once per node held a session for 30 s on a 20,000-node page with a 24 MB query).
pub struct TextQuery {
    lowered: String,
    finder: memchr::memmem::Finder<'static>,
}

impl TextQuery {
    fn matches(&self, node: &SnapshotNode) -> bool {
        // A needle longer than the haystack is refused by the finder without scanning.
        let name = node.name.to_lowercase();
        self.finder.find(name.as_bytes()).is_some() || node.role.to_lowercase() == self.lowered
    }
}

/// A model's pattern compiles to at most this much: a bigger one is refused, not slow.
const MAX_PATTERN_BYTES: usize = 1 << 20;

impl Query {
    /// A case-insensitive substring query.
    pub fn text(text: &str) -> Query {
        let lowered = text.to_lowercase();
        let finder = memchr::memmem::Finder::new(lowered.as_bytes()).into_owned();
        Query::Text(Box::new(TextQuery { lowered, finder }))
    }

    /// A regular expression query, refused with a message when it does not compile (or would
    /// compile too large).
    pub fn regex(pattern: &str) -> Result<Query, String> {
        regex::RegexBuilder::new(pattern)
            .size_limit(MAX_PATTERN_BYTES)
            .dfa_size_limit(MAX_PATTERN_BYTES)
            .build()
            .map(Query::Regex)
            .map_err(|error| {
                format!("The pattern {pattern:?} is not a valid regular expression: {error}")
            })
    }

    fn matches(&self, node: &SnapshotNode) -> bool {
        match self {
            Query::Text(text) => text.matches(node),
            Query::Regex(regex) => regex.is_match(&node.name) || regex.is_match(&node.role),
        }
    }
}

/// One matching node: its own line (as the snapshot prints it) and its ancestors' lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub uid: String,
    pub line: String,
    /// From the root down to the node's parent: uid, role and name of each.
    pub path: Vec<String>,
    /// The siblings that follow it, up to [`NEXT_SIBLINGS`], labelled as the path is: a
    /// table cell's row, a heading's first lines, a label's field, without another call.
    pub next: Vec<String>,
}

/// How many following siblings a match lists.
pub const NEXT_SIBLINGS: usize = 3;

fn line_of(node: &SnapshotNode) -> String {
    let mut line = String::new();
    write_line(&mut line, node, 0);
    line.trim_end().to_string()
}

/// An ancestor in a path: uid, role and (up to 40 characters of) name, no attributes.
fn label_of(node: &SnapshotNode) -> String {
    let mut label = format!("uid={}", node.uid);
    if !node.role.is_empty() && node.role != "StaticText" {
        label.push(' ');
        label.push_str(&node.role);
    }
    if !node.name.is_empty() {
        let name: String = node.name.chars().take(40).collect();
        let cut = if name.len() < node.name.len() {
            "…"
        } else {
            ""
        };
        label.push_str(&format!(" \"{name}{cut}\""));
    }
    label
}

impl Snapshot {
    /// The text of the subtree under `uid` (the whole page when `None`), at most `depth` levels
    /// below it (all when `None`).
    pub fn scoped_text(&self, uid: Option<&str>, depth: Option<u32>) -> Result<String, String> {
        let root = match uid {
            None => &self.root,
            Some(uid) => self.find(uid).ok_or_else(|| {
                format!("No element with uid {uid} in the page's latest snapshot. Take a snapshot to get current uids.")
            })?,
        };
        let depth = depth.map_or(usize::MAX, |depth| depth as usize);
        Ok(subtree_text(root, self.verbose, depth))
    }

    /// Every node matching `query`, in document order, with its path from the root. A text
    /// node under an element that matched is left out: its text is in that element's name,
    /// and the element is what an action targets.
    pub fn find_all(&self, query: &Query) -> Vec<Found> {
        let mut found = Vec::new();
        // An explicit stack of (node, depth, whether its parent matched) and the ancestors'
        // lines, so deep pages cannot overflow ours.
        let mut path: Vec<String> = Vec::new();
        let no_siblings: &[SnapshotNode] = &[];
        let mut stack = vec![(&self.root, 0usize, false, no_siblings)];
        while let Some((node, depth, parent_matched, following)) = stack.pop() {
            path.truncate(depth);
            let matched = query.matches(node) && !node.uid.is_empty();
            let repeats_parent = parent_matched && node.role == "StaticText";
            if matched && !repeats_parent {
                found.push(Found {
                    uid: node.uid.clone(),
                    line: line_of(node),
                    path: path.clone(),
                    next: following.iter().take(NEXT_SIBLINGS).map(label_of).collect(),
                });
            }
            path.push(label_of(node));
            let children = node.children.iter().enumerate().rev();
            stack.extend(
                children.map(|(at, child)| (child, depth + 1, matched, &node.children[at + 1..])),
            );
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples::sample_nodes;
    use crate::{UidMap, serialize_ax_tree};
    use serde_json::json;

    fn sample() -> Snapshot {
        let root = serialize_ax_tree(&sample_nodes(), true).expect("root");
        Snapshot::build(root, "L", 1, false, &mut UidMap::default())
    }

    #[test]
    fn a_scope_is_the_subtree_with_the_full_snapshots_uids() {
        let snapshot = sample();
        let full = snapshot.to_text();
        assert_eq!(snapshot.scoped_text(None, None).expect("full"), full);
        let combo = snapshot.scoped_text(Some("1_5"), None).expect("combobox");
        assert_eq!(
            combo,
            "uid=1_5 combobox expandable haspopup=\"menu\" value=\"One\"\n  uid=1_6 option \"One\" selected\n  uid=1_7 option \"Two\"\n"
        );
        let shallow = snapshot.scoped_text(None, Some(0)).expect("root only");
        assert_eq!(shallow.lines().count(), 1, "{shallow}");
        let error = snapshot
            .scoped_text(Some("9_9"), None)
            .expect_err("unknown");
        assert!(error.contains("No element with uid 9_9"), "{error}");
    }

    #[test]
    fn find_gives_uids_and_paths() {
        let snapshot = sample();
        let found = snapshot.find_all(&Query::text("two"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].uid, "1_7");
        assert_eq!(found[0].line, "uid=1_7 option \"Two\"");
        assert_eq!(found[0].path.len(), 2);
        assert!(found[0].path[1].starts_with("uid=1_5 combobox"));
        // The last option has no sibling after it; the first has the second.
        assert!(found[0].next.is_empty(), "{:?}", found[0].next);
        let one = snapshot.find_all(&Query::text("one"));
        let option = one
            .iter()
            .find(|found| found.uid == "1_6")
            .expect("option One");
        assert_eq!(option.next, ["uid=1_7 option \"Two\""]);
        let buttons = snapshot.find_all(&Query::Regex(
            regex::Regex::new("^(button|link)$").expect("regex"),
        ));
        let uids: Vec<&str> = buttons.iter().map(|found| found.uid.as_str()).collect();
        assert_eq!(uids, ["1_3", "1_8"]);
    }

    #[test]
    fn find_leaves_out_the_text_of_an_element_it_lists() {
        use crate::samples::ax;
        let nodes = vec![
            ax(
                "1",
                "RootWebArea",
                "Book",
                json!({"focusable": true}),
                &["9"],
                Some(1),
            ),
            ax("9", "none", "", json!({}), &["2", "6"], Some(9)),
            // A link with a focusable child prints its children (Puppeteer's leaf rule).
            ax(
                "2",
                "link",
                "5.2. Slicing Strings",
                json!({"focusable": true}),
                &["3", "4"],
                Some(2),
            ),
            ax(
                "3",
                "button",
                "5.2.",
                json!({"focusable": true}),
                &[],
                Some(3),
            ),
            ax(
                "4",
                "StaticText",
                "Slicing Strings",
                json!({}),
                &[],
                Some(4),
            ),
            ax("6", "generic", "", json!({}), &["5"], Some(6)),
            ax(
                "5",
                "StaticText",
                "On slicing strings",
                json!({}),
                &[],
                Some(5),
            ),
        ];
        let root = serialize_ax_tree(&nodes, true).expect("root");
        let snapshot = Snapshot::build(root, "L", 1, false, &mut UidMap::default());
        let full = snapshot.to_text();
        assert!(full.contains("  uid=1_3 \"Slicing Strings\""), "{full}");
        let found = snapshot.find_all(&Query::text("slicing strings"));
        let lines: Vec<&str> = found.iter().map(|found| found.line.as_str()).collect();
        // The link, not its own text; the paragraph's text, whose parent does not match.
        assert_eq!(
            lines,
            [
                "uid=1_1 link \"5.2. Slicing Strings\"",
                "uid=1_4 \"On slicing strings\""
            ],
            "{full}"
        );
    }

    /// A DoS guard, not a speed claim: the old matcher lowered the query once per node, so an
    /// 8 MB query over 20,000 nodes lowered 160 GB (about 25 s here); the cost per node must not
    /// depend on the query's length. The bound is far above what the fixed code needs (ms).
    #[test]
    fn a_huge_query_costs_one_pass_over_the_page() {
        use crate::samples::ax;
        let count = 20_000;
        let ids: Vec<String> = (2..count + 2).map(|id| id.to_string()).collect();
        let children: Vec<&str> = ids.iter().map(String::as_str).collect();
        let mut nodes = vec![ax(
            "1",
            "RootWebArea",
            "Big",
            json!({"focusable": true}),
            &children,
            Some(1),
        )];
        for (index, id) in ids.iter().enumerate() {
            let name = format!("Item number {index}");
            nodes.push(ax(
                id,
                "button",
                &name,
                json!({}),
                &[],
                Some(index as i64 + 2),
            ));
        }
        let root = serialize_ax_tree(&nodes, true).expect("root");
        let snapshot = Snapshot::build(root, "L", 1, false, &mut UidMap::default());
        let query = Query::text(&"Item number 1".repeat(640_000));
        let started = std::time::Instant::now();
        let found = snapshot.find_all(&query);
        let spent = started.elapsed();
        assert!(found.is_empty());
        assert!(spent < std::time::Duration::from_secs(5), "took {spent:?}");
        let found = snapshot.find_all(&Query::text("ITEM NUMBER 19999"));
        assert_eq!(found.len(), 1, "{found:?}");
    }
}
