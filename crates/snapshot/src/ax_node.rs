//! Nodes of Puppeteer 25.8's `cdp/Accessibility.ts`: what its `AXNode` constructor reads
//! from one CDP node, and `serialize()`, which makes the `SerializedAXNode` that
//! chrome-devtools-mcp prints.

use std::borrow::Cow;
use std::cell::Cell;

use super::cdp::{CdpNode, JsValue};
use super::format::js_number;

/// A property value with the JavaScript type it had, which decides how it prints.
#[derive(Debug, Clone, PartialEq)]
pub enum AxValue {
    Bool(bool),
    Str(String),
    Num(f64),
}

impl AxValue {
    /// Keeps booleans, strings and numbers; the formatter ignores every other JS type.
    pub(crate) fn from_js(value: &JsValue<'_>) -> Option<AxValue> {
        match value {
            JsValue::Bool(b) => Some(AxValue::Bool(*b)),
            JsValue::Str(s) => Some(AxValue::Str(s.as_ref().to_owned())),
            JsValue::Num(n) => Some(AxValue::Num(*n)),
            _ => None,
        }
    }
}

/// A serialized accessibility node, as Puppeteer's `SerializedAXNode` plus ids.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AxNode {
    pub role: String,
    /// Empty when the node has no (truthy) name.
    pub name: String,
    /// Everything but `role` and `name`, in Puppeteer's `serialize()` order.
    pub properties: Vec<(&'static str, AxValue)>,
    pub backend_node_id: Option<i64>,
    /// The frame document's loaderId; `None` inherits the parent's (the root's comes from
    /// `Snapshot::build`). Set it on a child frame's root before attaching it.
    pub loader_id: Option<String>,
    pub children: Vec<AxNode>,
}

impl AxNode {
    /// The value of one serialized property, e.g. `"level"` or `"focused"`.
    #[cfg(test)]
    pub fn property(&self, key: &str) -> Option<&AxValue> {
        self.properties
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    /// Lets a caller graft a child frame's tree under an `Iframe` node after serializing.
    /// Prefer [`AxTree::attach_iframe`](super::AxTree::attach_iframe), which also makes the `Iframe` node interesting.
    #[cfg(test)]
    pub fn children_mut(&mut self) -> &mut Vec<AxNode> {
        &mut self.children
    }
}

/// A role or name as a string; falsy JS values become "" because callers only test truthiness.
fn js_string(value: &JsValue<'_>) -> String {
    js_str(value).into_owned()
}

/// [`js_string`], borrowed from the reply text when it is a string there (most roles are).
fn js_str<'a>(value: &JsValue<'a>) -> Cow<'a, str> {
    match value {
        JsValue::Str(s) => s.clone(),
        JsValue::Num(n) if *n != 0.0 && !n.is_nan() => Cow::Owned(js_number(*n)),
        JsValue::Bool(true) => Cow::Borrowed("true"),
        _ => Cow::Borrowed(""),
    }
}

/// The lower-cased property names that `AXNode.serialize()` reads (`name`, `value` and
/// `description` included), in the order it prints them; a node keeps no other property.
const KEYS: [&str; 31] = [
    "name",
    // Strings.
    "value",
    "description",
    "keyshortcuts",
    "roledescription",
    "valuetext",
    "url",
    // Booleans.
    "disabled",
    "expanded",
    "focused",
    "modal",
    "multiline",
    "multiselectable",
    "readonly",
    "required",
    "selected",
    "busy",
    "atomic",
    // Tristates.
    "checked",
    "pressed",
    // Numbers.
    "level",
    "valuemax",
    "valuemin",
    // Tokens.
    "autocomplete",
    "haspopup",
    "invalid",
    "orientation",
    "live",
    "relevant",
    "errormessage",
    "details",
];
const NAME: u8 = 0;
const VALUE: u8 = 1;
const DESCRIPTION: u8 = 2;
const FOCUSED: usize = 9;
const STRINGS: std::ops::Range<usize> = 1..7;
const BOOLEANS: std::ops::Range<usize> = 7..18;
const TRISTATES: std::ops::Range<usize> = 18..20;
const NUMBERS: std::ops::Range<usize> = 20..23;
const TOKENS: std::ops::Range<usize> = 23..31;

/// The index in [`KEYS`] of a property name once lower-cased as JavaScript's
/// `toLowerCase()` does (a non-ASCII name can lower-case to an ASCII key).
fn key_index(name: &str) -> Option<u8> {
    let found = if name.is_ascii() {
        KEYS.iter().position(|key| key.eq_ignore_ascii_case(name))
    } else {
        let lower = name.to_lowercase();
        KEYS.iter().position(|key| *key == lower)
    };
    found.and_then(|i| u8::try_from(i).ok())
}

/// A `nodeId` as a JS `Map` key: strings and numbers never equal each other, and every
/// object is a key of its own.
#[derive(Debug, Clone, Default, Hash, PartialEq, Eq)]
pub(super) enum NodeKey<'a> {
    /// A string in canonical decimal form (what Chromium sends), kept as its number:
    /// equal strings give equal numbers and different ones different numbers.
    Digits(u64),
    Str(Cow<'a, str>),
    Num(u64),
    Bool(bool),
    Null,
    #[default]
    Undefined,
    Object(usize),
}

impl<'a> NodeKey<'a> {
    /// The key of a value; `position` tells apart the objects, which are never equal.
    pub(super) fn of(value: JsValue<'a>, position: usize) -> NodeKey<'a> {
        match value {
            JsValue::Str(s) => match canonical_decimal(&s) {
                Some(n) => NodeKey::Digits(n),
                None => NodeKey::Str(s),
            },
            // SameValueZero: -0 and 0 are one key, and so is every NaN.
            JsValue::Num(0.0) => NodeKey::Num(0),
            JsValue::Num(n) if n.is_nan() => NodeKey::Num(f64::NAN.to_bits()),
            JsValue::Num(n) => NodeKey::Num(n.to_bits()),
            JsValue::Bool(b) => NodeKey::Bool(b),
            JsValue::Null => NodeKey::Null,
            JsValue::Undefined => NodeKey::Undefined,
            JsValue::Compound => NodeKey::Object(position),
        }
    }
}

/// The number a string spells when it is `0` or digits without a leading zero that fit in
/// a u64, so that two strings map to the same number exactly when they are equal.
fn canonical_decimal(s: &str) -> Option<u64> {
    let bytes = s.as_bytes();
    let canonical = !bytes.is_empty()
        && bytes.len() <= 19
        && bytes.iter().all(u8::is_ascii_digit)
        && (bytes[0] != b'0' || bytes.len() == 1);
    canonical.then(|| s.parse().ok()).flatten()
}

/// Storage shared by the nodes of one tree, so that a node holds spans instead of lists.
#[derive(Default)]
pub(super) struct Arena<'a> {
    /// (index in [`KEYS`], value): each node's properties, next to each other.
    pub(super) props: Vec<(u8, JsValue<'a>)>,
    /// Each node's `childIds` as map keys, next to each other, until the tree is linked.
    pub(super) child_keys: Vec<NodeKey<'a>>,
}

/// Where a node's entries sit in a list of the [`Arena`] or of the tree.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Span {
    start: usize,
    len: usize,
}

impl Span {
    /// The span from `start` to the end of `list`.
    pub(super) fn since<T>(start: usize, list: &[T]) -> Span {
        Span {
            start,
            len: list.len() - start,
        }
    }

    pub(super) fn of<T>(self, list: &[T]) -> &[T] {
        &list[self.start..self.start + self.len]
    }
}

// What a node's role and properties make it, as bits of `RawNode::flags`.
const HAS_NAME: u32 = 1;
const HAS_DESCRIPTION: u32 = 1 << 1;
const IGNORED: u32 = 1 << 2;
const FOCUSABLE: u32 = 1 << 3;
const HIDDEN: u32 = 1 << 4;
/// `busy`, `modal`, a live region that is not "off", `errormessage`, `details` or a
/// `roledescription`: each makes a node interesting on its own.
const NOTABLE: u32 = 1 << 5;
const EDITABLE: u32 = 1 << 6;
const RICHLY_EDITABLE: u32 = 1 << 7;
/// The payload's role value is exactly `Iframe`.
const IFRAME: u32 = 1 << 8;
const TEXT_ONLY_ROLE: u32 = 1 << 9;
const CONTROL_ROLE: u32 = 1 << 10;
const LANDMARK_ROLE: u32 = 1 << 11;
/// Roles whose children are only presentational.
const LEAF_ROLE: u32 = 1 << 12;
const TEXT_FIELD_ROLE: u32 = 1 << 13;
const HEADING_ROLE: u32 = 1 << 14;
const IGNORED_ROLE: u32 = 1 << 15;
const ROOT_WEB_AREA_ROLE: u32 = 1 << 16;

/// The role bits, decided once per node instead of at every test.
fn role_flags(role: &str) -> u32 {
    match role {
        "LineBreak" | "text" | "InlineTextBox" | "StaticText" => TEXT_ONLY_ROLE,
        "textbox" | "searchbox" => CONTROL_ROLE | TEXT_FIELD_ROLE,
        "scrollbar" | "slider" => CONTROL_ROLE | LEAF_ROLE,
        "button" | "checkbox" | "ColorWell" | "combobox" | "DisclosureTriangle" | "listbox"
        | "menu" | "menubar" | "menuitem" | "menuitemcheckbox" | "menuitemradio" | "radio"
        | "spinbutton" | "switch" | "tab" | "tree" | "treeitem" => CONTROL_ROLE,
        "banner" | "complementary" | "contentinfo" | "form" | "main" | "navigation" | "region"
        | "search" => LANDMARK_ROLE,
        "doc-cover" | "graphics-symbol" | "img" | "image" | "Meter" | "separator"
        | "progressbar" => LEAF_ROLE,
        "heading" => HEADING_ROLE,
        "Ignored" => IGNORED_ROLE,
        "RootWebArea" => ROOT_WEB_AREA_ROLE,
        _ => 0,
    }
}

/// One raw CDP node: what Puppeteer's `AXNode` constructor derives from it, and the spans
/// of its properties and children in the tree's shared lists.
pub(super) struct RawNode<'a> {
    /// Its `nodeId`, until the tree is linked.
    pub(super) key: NodeKey<'a>,
    pub(super) role: Cow<'a, str>,
    pub(super) backend_node_id: Option<i64>,
    flags: u32,
    /// Its entries in [`Arena::props`].
    pub(super) props: Span,
    /// Its `childIds` in [`Arena::child_keys`]; once linked, its children's indexes.
    pub(super) children: Span,
    pub(super) focusable_child: Cell<Option<bool>>,
}

impl<'a> RawNode<'a> {
    /// The node of `payload`, the `position`th of the reply, keeping its properties and
    /// child ids in `arena`.
    pub(super) fn new(payload: CdpNode<'a>, position: usize, arena: &mut Arena<'a>) -> Self {
        let role = if payload.role.present {
            js_str(&payload.role.value)
        } else {
            Cow::Borrowed("Unknown")
        };
        let mut flags = role_flags(&role);
        for (set, flag) in [
            (payload.role.value.as_str() == Some("Iframe"), IFRAME),
            (payload.name.value.truthy(), HAS_NAME),
            (payload.description.value.truthy(), HAS_DESCRIPTION),
            (payload.ignored.truthy(), IGNORED),
        ] {
            flags |= if set { flag } else { 0 };
        }
        let (mut focusable, mut hidden, mut editable, mut richly_editable) =
            (false, false, false, false);
        let (mut busy, mut modal, mut live, mut roledescription, mut refs) =
            (false, false, false, false, false);
        let start = arena.props.len();
        for property in payload.properties.0 {
            let value = property.value.value;
            let Some(name) = property.name.as_str() else {
                continue;
            };
            // The constructor reads these names as they are; `serialize()` lower-cases.
            match name {
                "editable" => {
                    richly_editable = value.as_str() == Some("richtext");
                    editable = true;
                }
                "focusable" => focusable = value.truthy(),
                "hidden" => hidden = value.truthy(),
                "busy" => busy = value.truthy(),
                "live" => live = value.truthy() && value.as_str() != Some("off"),
                "modal" => modal = value.truthy(),
                "roledescription" => roledescription = value.truthy(),
                "errormessage" | "details" => refs = true,
                _ => {}
            }
            if let Some(key) = key_index(name) {
                put(&mut arena.props, start, key, value);
            }
        }
        for (key, field) in [
            (NAME, payload.name),
            (VALUE, payload.value),
            (DESCRIPTION, payload.description),
        ] {
            if field.present {
                put(&mut arena.props, start, key, field.value);
            }
        }
        for (set, flag) in [
            (focusable, FOCUSABLE),
            (hidden, HIDDEN),
            (editable, EDITABLE),
            (richly_editable, RICHLY_EDITABLE),
            (busy || modal || live || roledescription || refs, NOTABLE),
        ] {
            flags |= if set { flag } else { 0 };
        }
        let first_child = arena.child_keys.len();
        arena.child_keys.extend(
            payload
                .child_ids
                .0
                .into_iter()
                // An object never equals another object, so it names no node.
                .filter(|id| !matches!(id, JsValue::Compound))
                .map(|id| NodeKey::of(id, 0)),
        );
        RawNode {
            key: NodeKey::of(payload.node_id, position),
            role,
            backend_node_id: payload.backend_dom_node_id.as_i64(),
            flags,
            props: Span::since(start, &arena.props),
            children: Span::since(first_child, &arena.child_keys),
            focusable_child: Cell::new(None),
        }
    }

    fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    pub(super) fn has_name(&self) -> bool {
        self.has(HAS_NAME)
    }

    pub(super) fn has_description(&self) -> bool {
        self.has(HAS_DESCRIPTION)
    }

    /// Ignored by Chromium, or of the role `Ignored`.
    pub(super) fn ignored(&self) -> bool {
        self.has(IGNORED) || self.has(IGNORED_ROLE)
    }

    pub(super) fn focusable(&self) -> bool {
        self.has(FOCUSABLE)
    }

    pub(super) fn hidden(&self) -> bool {
        self.has(HIDDEN)
    }

    pub(super) fn notable(&self) -> bool {
        self.has(NOTABLE)
    }

    pub(super) fn richly_editable(&self) -> bool {
        self.has(RICHLY_EDITABLE)
    }

    /// Whether the payload's role value is exactly `Iframe`.
    pub(super) fn is_iframe(&self) -> bool {
        self.has(IFRAME)
    }

    pub(super) fn is_plain_text_field(&self) -> bool {
        !self.has(RICHLY_EDITABLE) && (self.has(EDITABLE) || self.has(TEXT_FIELD_ROLE))
    }

    pub(super) fn is_text_only(&self) -> bool {
        self.has(TEXT_ONLY_ROLE)
    }

    pub(super) fn is_control(&self) -> bool {
        self.has(CONTROL_ROLE)
    }

    pub(super) fn is_landmark(&self) -> bool {
        self.has(LANDMARK_ROLE)
    }

    /// A role whose children are only presentational.
    pub(super) fn has_leaf_role(&self) -> bool {
        self.has(LEAF_ROLE)
    }

    pub(super) fn is_heading(&self) -> bool {
        self.has(HEADING_ROLE)
    }

    /// `AXNode.serialize()`: the fixed property list, each with Puppeteer's coercion.
    /// `props` are this node's entries of [`Arena::props`].
    pub(super) fn serialize(&self, props: &[(u8, JsValue<'a>)]) -> AxNode {
        let mut slots: [Option<&JsValue<'a>>; KEYS.len()] = [None; KEYS.len()];
        for (key, value) in props {
            slots[usize::from(*key)] = Some(value);
        }
        let mut out = Vec::new();
        let mut push = |key: usize, value: Option<AxValue>| {
            out.extend(value.map(|v| (KEYS[key], v)));
        };
        for key in STRINGS {
            push(key, slots[key].and_then(AxValue::from_js));
        }
        for key in BOOLEANS {
            // A RootWebArea reports whether its frame has focus, so Puppeteer drops it.
            if key == FOCUSED && self.has(ROOT_WEB_AREA_ROLE) {
                continue;
            }
            push(key, slots[key].map(|v| AxValue::Bool(v.truthy())));
        }
        for key in TRISTATES {
            push(
                key,
                slots[key].map(|v| match v.as_str() {
                    Some("mixed") => AxValue::Str("mixed".to_owned()),
                    Some("true") => AxValue::Bool(true),
                    _ => AxValue::Bool(false),
                }),
            );
        }
        for key in NUMBERS {
            push(key, slots[key].and_then(AxValue::from_js));
        }
        for key in TOKENS {
            let value = slots[key].filter(|v| v.truthy() && v.as_str() != Some("false"));
            push(key, value.and_then(AxValue::from_js));
        }
        AxNode {
            role: self.role.clone().into_owned(),
            name: slots[usize::from(NAME)].map(js_string).unwrap_or_default(),
            properties: out,
            backend_node_id: self.backend_node_id,
            loader_id: None,
            children: Vec::new(),
        }
    }
}

/// Sets `key` among the entries from `start`, replacing its value when it is already there,
/// as a JS `Map` does.
fn put<'a>(props: &mut Vec<(u8, JsValue<'a>)>, start: usize, key: u8, value: JsValue<'a>) {
    match props[start..].iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => props.push((key, value)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::samples::ax;
    use super::super::serialize_ax_tree;
    use super::*;

    #[test]
    fn properties_follow_serialize_order_and_coercions() {
        let mut node = ax(
            "1",
            "checkbox",
            "c",
            json!({"required": true, "Level": 2, "checked": "mixed", "pressed": "false", "invalid": "false",
                   "hasPopup": "menu", "disabled": false, "busy": 1, "keyshortcuts": "Alt+K", "focused": true}),
            &[],
            Some(5),
        );
        node["description"] = json!({"type": "computedString", "value": "d"});
        let root = serialize_ax_tree(&[node], true).expect("root");
        let keys: Vec<&str> = root.properties.iter().map(|(k, _)| *k).collect();
        let want = [
            "description",
            "keyshortcuts",
            "disabled",
            "focused",
            "required",
            "busy",
            "checked",
            "pressed",
            "level",
            "haspopup",
        ];
        assert_eq!(keys, want);
        assert_eq!(
            root.property("checked"),
            Some(&AxValue::Str("mixed".into()))
        );
        assert_eq!(root.property("pressed"), Some(&AxValue::Bool(false)));
        assert_eq!(root.property("busy"), Some(&AxValue::Bool(true)));
        assert_eq!(root.property("level"), Some(&AxValue::Num(2.0)));
        assert_eq!(root.backend_node_id, Some(5));
    }
}
