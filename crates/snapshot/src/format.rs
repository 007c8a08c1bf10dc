//! Port of chrome-devtools-mcp's `SnapshotFormatter`: the text and JSON forms of a snapshot.

use serde_json::{Map, Value};

use super::{AxValue, Snapshot, SnapshotNode};

/// Capability words printed whenever the boolean exists, even when it is false.
fn capability(key: &str) -> Option<&'static str> {
    match key {
        "disabled" => Some("disableable"),
        "expanded" => Some("expandable"),
        "focused" => Some("focusable"),
        "selected" => Some("selectable"),
        _ => None,
    }
}

/// Attributes in `Object.keys(node).sort()` order, which is what the formatter walks.
fn sorted(node: &SnapshotNode) -> Vec<&(&'static str, AxValue)> {
    let mut attrs: Vec<_> = node.attributes.iter().collect();
    attrs.sort_by(|a, b| a.0.cmp(b.0));
    attrs
}

/// `SnapshotFormatter.toString()` of 1.11.0: one line per node, children indented by two
/// spaces; a named node whose children only repeat its name as text hides them.
pub(super) fn to_text(snapshot: &Snapshot) -> String {
    subtree_text(&snapshot.root, snapshot.verbose, usize::MAX)
}

/// [`to_text`] of one node's subtree, `max_depth` levels below it at most, indented from 0.
pub(super) fn subtree_text(root: &SnapshotNode, verbose: bool, max_depth: usize) -> String {
    let mut out = String::new();
    // An explicit stack, so that deep pages cannot overflow ours.
    let mut stack = vec![(root, 0)];
    while let Some((node, depth)) = stack.pop() {
        write_line(&mut out, node, depth);
        if depth < max_depth && (verbose || !has_redundant_text_children(node)) {
            stack.extend(node.children.iter().rev().map(|c| (c, depth + 1)));
        }
    }
    out
}

/// `#hasRedundantTextChildren`: every child is a childless `StaticText`, and their texts
/// joined equal the node's name, whitespace ignored.
fn has_redundant_text_children(node: &SnapshotNode) -> bool {
    if node.name.is_empty() || node.children.is_empty() {
        return false;
    }
    if node
        .children
        .iter()
        .any(|child| child.role != "StaticText" || !child.children.is_empty())
    {
        return false;
    }
    let mut name = node.name.chars().filter(|c| !js_whitespace(*c));
    let joined = node.children.iter().flat_map(|child| child.name.chars());
    for c in joined.filter(|c| !js_whitespace(*c)) {
        if name.next() != Some(c) {
            return false;
        }
    }
    name.next().is_none()
}

/// What JavaScript's `\s` matches (WhiteSpace and LineTerminator), which differs from
/// `char::is_whitespace` in U+FEFF and U+0085.
fn js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

pub(super) fn write_line(out: &mut String, node: &SnapshotNode, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
    out.push_str("uid=");
    out.push_str(&node.uid);
    // Text nodes print without their role since 1.11.0.
    if !node.role.is_empty() && node.role != "StaticText" {
        out.push(' ');
        out.push_str(if node.role == "none" {
            "ignored"
        } else {
            &node.role
        });
    }
    if !node.name.is_empty() {
        out.push_str(" \"");
        out.push_str(&node.name);
        out.push('"');
    }
    let option = node.role == "option";
    for (key, value) in sorted(node) {
        match value {
            AxValue::Bool(b) => {
                // An option's `selected` no longer adds `selectable`.
                if let Some(cap) = capability(key).filter(|cap| !(option && *cap == "selectable")) {
                    out.push(' ');
                    out.push_str(cap);
                }
                if *b {
                    out.push(' ');
                    out.push_str(key);
                }
            }
            // An option's value is its text, which the name already shows.
            AxValue::Str(s) if option && *key == "value" && *s == node.name => {}
            AxValue::Str(s) => {
                out.push(' ');
                out.push_str(key);
                out.push_str("=\"");
                out.push_str(s);
                out.push('"');
            }
            AxValue::Num(n) => {
                out.push(' ');
                out.push_str(key);
                out.push_str("=\"");
                out.push_str(&js_number(*n));
                out.push('"');
            }
        }
    }
    out.push('\n');
}

/// `SnapshotFormatter.toJSON()`: `{id, role?, name?, ...attributes, children?}`.
pub(super) fn to_json(snapshot: &Snapshot) -> Value {
    // Post-order with an explicit stack: (node's object, children left, finished children).
    type Frame<'a> = (
        Map<String, Value>,
        std::slice::Iter<'a, SnapshotNode>,
        Vec<Value>,
    );
    let open = |node: &SnapshotNode| (attributes_json(node), Vec::new());
    let (map, done) = open(&snapshot.root);
    let mut current: Frame = (map, snapshot.root.children.iter(), done);
    let mut stack: Vec<Frame> = Vec::new();
    loop {
        if let Some(child) = current.1.next() {
            let (map, done) = open(child);
            stack.push(std::mem::replace(
                &mut current,
                (map, child.children.iter(), done),
            ));
            continue;
        }
        let (mut map, _, children) = current;
        if !children.is_empty() {
            map.insert("children".into(), Value::Array(children));
        }
        match stack.pop() {
            Some(mut parent) => {
                parent.2.push(Value::Object(map));
                current = parent;
            }
            None => return Value::Object(map),
        }
    }
}

fn attributes_json(node: &SnapshotNode) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("id".into(), Value::String(node.uid.clone()));
    if !node.role.is_empty() {
        map.insert("role".into(), Value::String(node.role.clone()));
    }
    if !node.name.is_empty() {
        map.insert("name".into(), Value::String(node.name.clone()));
    }
    for (key, value) in sorted(node) {
        match value {
            AxValue::Bool(b) => {
                if let Some(cap) = capability(key) {
                    map.insert(cap.into(), Value::Bool(true));
                }
                if *b {
                    map.insert((*key).to_owned(), Value::Bool(true));
                }
            }
            AxValue::Str(s) => {
                map.insert((*key).to_owned(), Value::String(s.clone()));
            }
            AxValue::Num(n) => {
                map.insert((*key).to_owned(), json_number(*n));
            }
        }
    }
    map
}

/// A number as `JSON.stringify` writes it: integral values without a fraction, and
/// NaN or infinities as null.
fn json_number(n: f64) -> Value {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if n.fract() == 0.0 && n.abs() <= SAFE {
        // Exact: an integral f64 within 2^53 converts to i64 without loss.
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

/// `Number.prototype.toString()`: shortest round-trip digits, `1` rather than `1.0`, and
/// exponent form below 1e-6 or from 1e21 on.
pub(crate) fn js_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_owned();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    if n == 0.0 {
        return "0".to_owned();
    }
    if n < 0.0 {
        return format!("-{}", js_number(-n));
    }
    // Rust's `{:e}` gives the same shortest digits as JS, as `d.ddde<exp>`.
    let sci = format!("{n:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = digits.len() as i64;
    // The decimal point sits after `point` digits: n = 0.digits * 10^point.
    let point = exp.parse::<i64>().unwrap_or(0) + 1;
    if k <= point && point <= 21 {
        format!("{digits}{}", "0".repeat((point - k) as usize))
    } else if 0 < point && point <= 21 {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    } else if -6 < point && point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else {
        let e = point - 1;
        let sign = if e < 0 { '-' } else { '+' };
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        format!("{first}{dot}{rest}e{sign}{}", e.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(
        uid: &str,
        role: &str,
        name: &str,
        attrs: Vec<(&'static str, AxValue)>,
    ) -> SnapshotNode {
        SnapshotNode {
            uid: uid.into(),
            role: role.into(),
            name: name.into(),
            attributes: attrs,
            backend_node_id: None,
            loader_id: "".into(),
            children: Vec::new(),
        }
    }

    #[test]
    fn js_numbers_print_like_javascript() {
        let cases = [
            (1.0, "1"),
            (-3.0, "-3"),
            (0.5, "0.5"),
            (2.5, "2.5"),
            (-0.0, "0"),
            (100.0, "100"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1.0000000200408773e21, "1.0000000200408773e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (9.999999974752427e-7, "9.999999974752427e-7"),
            (1.5e-10, "1.5e-10"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
        ];
        for (n, want) in cases {
            assert_eq!(js_number(n), want, "{n}");
        }
    }

    #[test]
    fn line_format_matches_chrome_devtools_mcp() {
        let mut root = node(
            "1_0",
            "RootWebArea",
            "My test page",
            vec![("url", AxValue::Str("about:blank".into()))],
        );
        let textbox = node(
            "1_2",
            "textbox",
            "username",
            vec![
                ("value", AxValue::Str("mcp".into())),
                ("focused", AxValue::Bool(true)),
            ],
        );
        let button = node(
            "1_3",
            "button",
            "",
            vec![
                ("disabled", AxValue::Bool(false)),
                ("level", AxValue::Num(2.0)),
            ],
        );
        let ignored = node(
            "1_4",
            "none",
            "",
            vec![("checked", AxValue::Str("mixed".into()))],
        );
        root.children = vec![
            node("1_1", "StaticText", "username", vec![]),
            textbox,
            button,
            ignored,
        ];
        let snapshot = Snapshot {
            id: 1,
            root,
            verbose: false,
        };
        assert_eq!(
            to_text(&snapshot),
            "uid=1_0 RootWebArea \"My test page\" url=\"about:blank\"\n  uid=1_1 \"username\"\n  \
             uid=1_2 textbox \"username\" focusable focused value=\"mcp\"\n  uid=1_3 button disableable level=\"2\"\n  \
             uid=1_4 ignored checked=\"mixed\"\n"
        );
        let json = to_json(&snapshot);
        assert_eq!(
            json["children"][1],
            serde_json::json!({"id": "1_2", "role": "textbox", "name": "username", "focusable": true, "focused": true, "value": "mcp"})
        );
        assert_eq!(
            json["children"][2],
            serde_json::json!({"id": "1_3", "role": "button", "disableable": true, "level": 2})
        );
        assert_eq!(json["children"][3]["role"], "none");
        assert!(json["children"][0].get("children").is_none());
    }
}
