//! Nodes of Puppeteer 25.8's `cdp/Accessibility.ts`: what its `AXNode` constructor reads
//! from one CDP node, and `serialize()`, which makes the `SerializedAXNode` that
//! chrome-devtools-mcp prints.

use std::cell::Cell;

use serde_json::Value;

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
    pub(crate) fn from_json(value: &Value) -> Option<AxValue> {
        match value {
            Value::Bool(b) => Some(AxValue::Bool(*b)),
            Value::String(s) => Some(AxValue::Str(s.clone())),
            Value::Number(n) => n.as_f64().map(AxValue::Num),
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

/// JavaScript truthiness, as Puppeteer's `if (x)` checks see a JSON value.
pub(crate) fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// A role or name as a string; falsy JS values become "" because callers only test truthiness.
fn js_string(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|f| *f != 0.0 && !f.is_nan())
            .map(js_number)
            .unwrap_or_default(),
        Some(Value::Bool(true)) => "true".to_owned(),
        _ => String::new(),
    }
}

/// `payload.<key>.value`, where `payload.<key>` is a CDP `AXValue` object.
pub(super) fn ax_value<'a>(payload: &'a Value, key: &str) -> Option<&'a Value> {
    payload.get(key).and_then(|v| v.get("value"))
}

/// One raw CDP node with the flags that Puppeteer's `AXNode` constructor derives.
pub(super) struct RawNode<'a> {
    pub(super) payload: &'a Value,
    pub(super) role: String,
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
    pub(super) fn new(payload: &'a Value) -> Self {
        let role = if truthy(payload.get("role")) {
            js_string(ax_value(payload, "role"))
        } else {
            "Unknown".to_owned()
        };
        let mut node = RawNode {
            payload,
            role,
            has_name: truthy(ax_value(payload, "name")),
            has_description: truthy(ax_value(payload, "description")),
            ignored: truthy(payload.get("ignored")),
            focusable: false,
            hidden: false,
            notable: false,
            editable: false,
            richly_editable: false,
            children: Vec::new(),
            focusable_child: Cell::new(None),
        };
        let (mut busy, mut modal, mut live, mut roledescription, mut refs) =
            (false, false, false, false, false);
        for property in payload
            .get("properties")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let value = property.get("value").and_then(|v| v.get("value"));
            match property.get("name").and_then(Value::as_str) {
                Some("editable") => {
                    node.richly_editable = value.and_then(Value::as_str) == Some("richtext");
                    node.editable = true;
                }
                Some("focusable") => node.focusable = truthy(value),
                Some("hidden") => node.hidden = truthy(value),
                Some("busy") => busy = truthy(value),
                Some("live") => {
                    live = truthy(value) && value.and_then(Value::as_str) != Some("off")
                }
                Some("modal") => modal = truthy(value),
                Some("roledescription") => roledescription = truthy(value),
                Some("errormessage" | "details") => refs = true,
                _ => {}
            }
        }
        node.notable = busy || modal || live || roledescription || refs;
        node
    }

    pub(super) fn is_plain_text_field(&self) -> bool {
        !self.richly_editable
            && (self.editable || self.role == "textbox" || self.role == "searchbox")
    }

    pub(super) fn is_text_only(&self) -> bool {
        matches!(
            self.role.as_str(),
            "LineBreak" | "text" | "InlineTextBox" | "StaticText"
        )
    }

    pub(super) fn is_control(&self) -> bool {
        matches!(
            self.role.as_str(),
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
            self.role.as_str(),
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
        let payload = self.payload;
        // Lower-cased property name -> value; `Some(None)` is a present but undefined value.
        let mut props: Vec<(String, Option<&Value>)> = Vec::new();
        let mut set =
            |key: String, value: Option<&'a Value>| match props.iter_mut().find(|(k, _)| *k == key)
            {
                Some(slot) => slot.1 = value,
                None => props.push((key, value)),
            };
        for property in payload
            .get("properties")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = property.get("name").and_then(Value::as_str) {
                set(
                    name.to_lowercase(),
                    property.get("value").and_then(|v| v.get("value")),
                );
            }
        }
        for key in ["name", "value", "description"] {
            if truthy(payload.get(key)) {
                set(key.to_owned(), ax_value(payload, key));
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
            push(key, get(key).flatten().and_then(AxValue::from_json));
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
            push(key, get(key).map(|v| AxValue::Bool(truthy(v))));
        }
        for key in ["checked", "pressed"] {
            push(
                key,
                get(key).map(|v| match v.and_then(Value::as_str) {
                    Some("mixed") => AxValue::Str("mixed".to_owned()),
                    Some("true") => AxValue::Bool(true),
                    _ => AxValue::Bool(false),
                }),
            );
        }
        for key in ["level", "valuemax", "valuemin"] {
            push(key, get(key).flatten().and_then(AxValue::from_json));
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
            let value = get(key)
                .flatten()
                .filter(|v| truthy(Some(v)) && v.as_str() != Some("false"));
            push(key, value.and_then(AxValue::from_json));
        }
        AxNode {
            role: self.role.clone(),
            name: js_string(get("name").flatten()),
            properties: out,
            backend_node_id: payload.get("backendDOMNodeId").and_then(Value::as_i64),
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
