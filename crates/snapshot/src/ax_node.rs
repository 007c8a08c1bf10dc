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
    pub properties: Vec<(String, AxValue)>,
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
            .find(|(k, _)| k == key)
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

/// One raw CDP node with the flags that Puppeteer's `AXNode` constructor derives.
pub(super) struct RawNode<'a> {
    pub(super) payload: CdpNode<'a>,
    pub(super) role: Cow<'a, str>,
    pub(super) has_name: bool,
    pub(super) has_description: bool,
    pub(super) ignored: bool,
    pub(super) focusable: bool,
    pub(super) hidden: bool,
    /// `busy`, `modal`, a live region that is not "off", `errormessage`, `details` or a
    /// `roledescription`: each makes a node interesting on its own.
    pub(super) notable: bool,
    pub(super) editable: bool,
    pub(super) richly_editable: bool,
    pub(super) children: Vec<usize>,
    pub(super) focusable_child: Cell<Option<bool>>,
}

impl<'a> RawNode<'a> {
    pub(super) fn new(payload: CdpNode<'a>) -> Self {
        let role = if payload.role.present {
            js_str(&payload.role.value)
        } else {
            Cow::Borrowed("Unknown")
        };
        let mut node = RawNode {
            role,
            has_name: payload.name.value.truthy(),
            has_description: payload.description.value.truthy(),
            ignored: payload.ignored.truthy(),
            focusable: false,
            hidden: false,
            notable: false,
            editable: false,
            richly_editable: false,
            children: Vec::new(),
            focusable_child: Cell::new(None),
            payload,
        };
        let (mut busy, mut modal, mut live, mut roledescription, mut refs) =
            (false, false, false, false, false);
        for property in &node.payload.properties.0 {
            let value = &property.value.value;
            match property.name.as_str() {
                Some("editable") => {
                    node.richly_editable = value.as_str() == Some("richtext");
                    node.editable = true;
                }
                Some("focusable") => node.focusable = value.truthy(),
                Some("hidden") => node.hidden = value.truthy(),
                Some("busy") => busy = value.truthy(),
                Some("live") => live = value.truthy() && value.as_str() != Some("off"),
                Some("modal") => modal = value.truthy(),
                Some("roledescription") => roledescription = value.truthy(),
                Some("errormessage" | "details") => refs = true,
                _ => {}
            }
        }
        node.notable = busy || modal || live || roledescription || refs;
        node
    }

    /// The `backendDOMNodeId`, when it is a number.
    pub(super) fn backend_node_id(&self) -> Option<i64> {
        self.payload.backend_dom_node_id.as_i64()
    }

    /// Whether the payload's role value is exactly `Iframe`.
    pub(super) fn is_iframe(&self) -> bool {
        self.payload.role.value.as_str() == Some("Iframe")
    }

    pub(super) fn is_plain_text_field(&self) -> bool {
        !self.richly_editable
            && (self.editable || self.role == "textbox" || self.role == "searchbox")
    }

    pub(super) fn is_text_only(&self) -> bool {
        matches!(
            self.role.as_ref(),
            "LineBreak" | "text" | "InlineTextBox" | "StaticText"
        )
    }

    pub(super) fn is_control(&self) -> bool {
        matches!(
            self.role.as_ref(),
            "button"
                | "checkbox"
                | "ColorWell"
                | "combobox"
                | "DisclosureTriangle"
                | "listbox"
                | "menu"
                | "menubar"
                | "menuitem"
                | "menuitemcheckbox"
                | "menuitemradio"
                | "radio"
                | "scrollbar"
                | "searchbox"
                | "slider"
                | "spinbutton"
                | "switch"
                | "tab"
                | "textbox"
                | "tree"
                | "treeitem"
        )
    }

    pub(super) fn is_landmark(&self) -> bool {
        matches!(
            self.role.as_ref(),
            "banner"
                | "complementary"
                | "contentinfo"
                | "form"
                | "main"
                | "navigation"
                | "region"
                | "search"
        )
    }

    /// `AXNode.serialize()`: the fixed property list, each with Puppeteer's coercion.
    pub(super) fn serialize(&self) -> AxNode {
        let payload = &self.payload;
        // Lower-cased property name -> value, in the order they were set; a later
        // property of the same name replaces the value, as a JS `Map` does.
        fn set<'p>(
            props: &mut Vec<(Cow<'p, str>, &'p JsValue<'p>)>,
            key: Cow<'p, str>,
            value: &'p JsValue<'p>,
        ) {
            match props.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => props.push((key, value)),
            }
        }
        let mut props: Vec<(Cow<'_, str>, &JsValue<'_>)> = Vec::new();
        for property in &payload.properties.0 {
            if let Some(name) = property.name.as_str() {
                let key = if name.bytes().any(|b| b.is_ascii_uppercase()) || !name.is_ascii() {
                    Cow::Owned(name.to_lowercase())
                } else {
                    Cow::Borrowed(name)
                };
                set(&mut props, key, &property.value.value);
            }
        }
        for (key, field) in [
            ("name", &payload.name),
            ("value", &payload.value),
            ("description", &payload.description),
        ] {
            if field.present {
                set(&mut props, Cow::Borrowed(key), &field.value);
            }
        }
        let get = |key: &str| props.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
        let mut out = Vec::new();
        let mut push =
            |key: &str, value: Option<AxValue>| out.extend(value.map(|v| (key.to_owned(), v)));

        let strings = [
            "value",
            "description",
            "keyshortcuts",
            "roledescription",
            "valuetext",
            "url",
        ];
        for key in strings {
            push(key, get(key).and_then(AxValue::from_js));
        }
        let booleans = [
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
        ];
        for key in booleans {
            // A RootWebArea reports whether its frame has focus, so Puppeteer drops it.
            if key == "focused" && self.role == "RootWebArea" {
                continue;
            }
            push(key, get(key).map(|v| AxValue::Bool(v.truthy())));
        }
        for key in ["checked", "pressed"] {
            push(
                key,
                get(key).map(|v| match v.as_str() {
                    Some("mixed") => AxValue::Str("mixed".to_owned()),
                    Some("true") => AxValue::Bool(true),
                    _ => AxValue::Bool(false),
                }),
            );
        }
        for key in ["level", "valuemax", "valuemin"] {
            push(key, get(key).and_then(AxValue::from_js));
        }
        let tokens = [
            "autocomplete",
            "haspopup",
            "invalid",
            "orientation",
            "live",
            "relevant",
            "errormessage",
            "details",
        ];
        for key in tokens {
            let value = get(key).filter(|v| v.truthy() && v.as_str() != Some("false"));
            push(key, value.and_then(AxValue::from_js));
        }
        AxNode {
            role: self.role.clone().into_owned(),
            name: get("name").map(js_string).unwrap_or_default(),
            properties: out,
            backend_node_id: self.backend_node_id(),
            loader_id: None,
            children: Vec::new(),
        }
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
        let keys: Vec<&str> = root.properties.iter().map(|(k, _)| k.as_str()).collect();
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
