//! Chromium's `Accessibility.getFullAXTree` reply, parsed in one pass straight from the
//! message text into the few fields Puppeteer reads: no `serde_json::Value` tree, no
//! buffered untagged enums, and strings borrowed from the text unless they hold escapes.
//!
//! Parsing is lenient the way Puppeteer's JavaScript is: a field of an unexpected type
//! reads as its JavaScript truthiness (an object without `value`, a list that is empty),
//! never as an error, so odd input gives an odd snapshot instead of none.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A JSON value as Puppeteer's code sees it: scalars kept, objects and arrays only known to
/// be there (they are truthy and never printed).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum JsValue<'a> {
    /// The key is absent (`undefined`).
    #[default]
    Undefined,
    Null,
    Bool(bool),
    Num(f64),
    Str(Cow<'a, str>),
    /// An object or an array.
    Compound,
}

impl JsValue<'_> {
    /// JavaScript truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            JsValue::Undefined | JsValue::Null => false,
            JsValue::Bool(b) => *b,
            JsValue::Num(n) => *n != 0.0 && !n.is_nan(),
            JsValue::Str(s) => !s.is_empty(),
            JsValue::Compound => true,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            JsValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An integral number (a backend node id).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            // Exact: integral and within i64, as serde_json's `as_i64` would accept.
            JsValue::Num(n) if n.fract() == 0.0 && n.abs() < 9.2e18 => Some(*n as i64),
            _ => None,
        }
    }
}

struct JsValueVisitor;

impl<'de> Visitor<'de> for JsValueVisitor {
    type Value = JsValue<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(JsValue::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(JsValue::Num(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(JsValue::Num(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(JsValue::Num(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(JsValue::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(JsValue::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(JsValue::Str(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(JsValue::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(JsValue::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(JsValue::Compound)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(JsValue::Compound)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for JsValue<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsValueVisitor)
    }
}

/// A CDP `AXValue` field such as `role` or `name`: whether the field itself is truthy (it
/// is an object when Chromium sends it) and its `value`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AxField<'a> {
    pub present: bool,
    pub value: JsValue<'a>,
}

#[derive(Deserialize)]
struct AxFieldObject<'a> {
    #[serde(default, borrow)]
    value: JsValue<'a>,
}

impl<'de: 'a, 'a> Deserialize<'de> for AxField<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl<'de> Visitor<'de> for FieldVisitor {
            type Value = AxField<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an AXValue object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let object = AxFieldObject::deserialize(MapAccessDeserializer::new(map))?;
                Ok(AxField {
                    present: true,
                    value: object.value,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                JsValueVisitor.visit_seq(seq).map(not_an_object)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(not_an_object(JsValue::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(not_an_object(JsValue::Num(v as f64)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(not_an_object(JsValue::Num(v as f64)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(not_an_object(JsValue::Num(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(not_an_object(JsValue::Bool(!v.is_empty())))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(AxField::default())
            }
        }
        deserializer.deserialize_any(FieldVisitor)
    }
}

/// A field that is not an object: present when truthy, and without a `value`.
fn not_an_object(own: JsValue<'_>) -> AxField<'_> {
    AxField {
        present: own.truthy(),
        value: JsValue::Undefined,
    }
}

/// One entry of a node's `properties`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AxProperty<'a> {
    pub name: JsValue<'a>,
    pub value: AxField<'a>,
}

#[derive(Deserialize)]
struct AxPropertyObject<'a> {
    #[serde(default, borrow)]
    name: JsValue<'a>,
    #[serde(default, borrow)]
    value: AxField<'a>,
}

impl<'de: 'a, 'a> Deserialize<'de> for AxProperty<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PropertyVisitor;
        impl<'de> Visitor<'de> for PropertyVisitor {
            type Value = AxProperty<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an AXProperty object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let object = AxPropertyObject::deserialize(MapAccessDeserializer::new(map))?;
                Ok(AxProperty {
                    name: object.name,
                    value: object.value,
                })
            }
        }
        // Anything else is skipped as a property without a name.
        deserializer
            .deserialize_any(Lenient::<_, true>(PropertyVisitor))
            .map(Option::unwrap_or_default)
    }
}

/// A list that reads as empty when the field is not an array.
#[derive(Debug, Clone, PartialEq)]
pub struct List<T>(pub Vec<T>);

impl<T> Default for List<T> {
    fn default() -> Self {
        List(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
            type Value = Vec<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq))
            }
        }
        deserializer
            .deserialize_any(Lenient::<_, false>(ListVisitor(std::marker::PhantomData)))
            .map(|list| List(list.unwrap_or_default()))
    }
}

/// Wraps a visitor of objects (`MAP`) or of arrays (`!MAP`) so that every other JSON
/// value is skipped as `None`.
struct Lenient<V, const MAP: bool>(V);

macro_rules! skip {
    ($($method:ident($($arg:ty)?)),*) => {$(
        fn $method<E: de::Error>(self $(, _: $arg)?) -> Result<Self::Value, E> {
            Ok(None)
        }
    )*};
}

impl<'de, V: Visitor<'de>, const MAP: bool> Visitor<'de> for Lenient<V, MAP> {
    type Value = Option<V::Value>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.0.expecting(f)
    }
    skip!(
        visit_bool(bool),
        visit_i64(i64),
        visit_u64(u64),
        visit_f64(f64),
        visit_str(&str),
        visit_unit(),
        visit_none()
    );
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        if MAP {
            JsValueVisitor.visit_seq(seq).map(|_| None)
        } else {
            self.0.visit_seq(seq).map(Some)
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        if MAP {
            self.0.visit_map(map).map(Some)
        } else {
            JsValueVisitor.visit_map(map).map(|_| None)
        }
    }
}

/// One raw CDP `AXNode`: the fields Puppeteer's `AXNode` reads.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CdpNode<'a> {
    #[serde(default, borrow)]
    pub node_id: JsValue<'a>,
    #[serde(default, borrow)]
    pub ignored: JsValue<'a>,
    #[serde(default, borrow)]
    pub role: AxField<'a>,
    #[serde(default, borrow)]
    pub name: AxField<'a>,
    #[serde(default, borrow)]
    pub description: AxField<'a>,
    #[serde(default, borrow)]
    pub value: AxField<'a>,
    #[serde(default, borrow)]
    pub properties: List<AxProperty<'a>>,
    #[serde(default, borrow)]
    pub child_ids: List<JsValue<'a>>,
    #[serde(rename = "backendDOMNodeId", default, borrow)]
    pub backend_dom_node_id: JsValue<'a>,
}

/// An entry of `nodes`: a node, or something else that Puppeteer would skip.
struct MaybeNode<'a>(Option<CdpNode<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeNode<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NodeVisitor;
        impl<'de> Visitor<'de> for NodeVisitor {
            type Value = CdpNode<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an AXNode object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                CdpNode::deserialize(MapAccessDeserializer::new(map))
            }
        }
        deserializer
            .deserialize_any(Lenient::<_, true>(NodeVisitor))
            .map(MaybeNode)
    }
}

#[derive(Deserialize)]
struct ErrorObject {
    #[serde(default)]
    message: String,
}

/// Reads a whole reply (`{"id":…,"result":{"nodes":[…]}}` or `{"id":…,"error":{…}}`),
/// handing each node to `map` as soon as it is read: `Err` carries the protocol error.
struct ReplySeed<'m, F> {
    capacity: usize,
    map: &'m mut F,
}

impl<'de, T, F: FnMut(CdpNode<'de>) -> T> de::DeserializeSeed<'de> for ReplySeed<'_, F> {
    type Value = Result<Vec<T>, String>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, T, F: FnMut(CdpNode<'de>) -> T> Visitor<'de> for ReplySeed<'_, F> {
    type Value = Result<Vec<T>, String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a CDP reply")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut nodes, mut error) = (None, None);
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "result" if nodes.is_none() => {
                    let seed = ResultSeed {
                        capacity: self.capacity,
                        map: &mut *self.map,
                    };
                    nodes = Some(map.next_value_seed(seed)?);
                }
                "error" if error.is_none() => error = map.next_value::<Option<ErrorObject>>()?,
                "result" | "error" => {
                    return Err(de::Error::custom(format!("duplicate field `{key}`")));
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(match error {
            Some(error) => Err(error.message),
            None => Ok(nodes.unwrap_or_default()),
        })
    }
}

/// `result`: null or an object whose `nodes` list is read; every other key is skipped.
struct ResultSeed<'m, F> {
    capacity: usize,
    map: &'m mut F,
}

impl<'de, T, F: FnMut(CdpNode<'de>) -> T> de::DeserializeSeed<'de> for ResultSeed<'_, F> {
    type Value = Vec<T>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, T, F: FnMut(CdpNode<'de>) -> T> Visitor<'de> for ResultSeed<'_, F> {
    type Value = Vec<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a getFullAXTree result")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut nodes = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "nodes" if nodes.is_none() => {
                    let seed = NodesSeed {
                        capacity: self.capacity,
                        map: &mut *self.map,
                    };
                    nodes = Some(map.next_value_seed(seed)?);
                }
                "nodes" => return Err(de::Error::custom("duplicate field `nodes`")),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(nodes.unwrap_or_default())
    }
}

/// `nodes`: a list read into one allocation of `capacity`; a value that is not a list reads
/// as empty, and entries that are not objects are dropped, as Puppeteer's loop skips them.
struct NodesSeed<'m, F> {
    capacity: usize,
    map: &'m mut F,
}

impl<'de, T, F: FnMut(CdpNode<'de>) -> T> de::DeserializeSeed<'de> for NodesSeed<'_, F> {
    type Value = Vec<T>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer
            .deserialize_any(Lenient::<_, false>(self))
            .map(Option::unwrap_or_default)
    }
}

impl<'de, T, F: FnMut(CdpNode<'de>) -> T> Visitor<'de> for NodesSeed<'_, F> {
    type Value = Vec<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of AXNodes")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut nodes = Vec::with_capacity(self.capacity);
        while let Some(node) = seq.next_element::<MaybeNode<'de>>()? {
            nodes.extend(node.0.map(&mut *self.map));
        }
        Ok(nodes)
    }
}

/// How many nodes a reply holds: one `"nodeId"` key each (a page's own strings cannot add
/// to it, their quotes arrive escaped). It only sizes the list, and at most one node per 16
/// bytes of text is reserved (every node Chromium sends is larger) whatever the text holds.
fn node_capacity(text: &str) -> usize {
    let keys = memchr::memmem::find_iter(text.as_bytes(), b"\"nodeId\"").count();
    keys.min(text.len() / 16)
}

/// Why a reply gave no nodes.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyError {
    /// The browser answered with an error (its message).
    Protocol(String),
    /// The text is not a JSON reply.
    Malformed(String),
}

impl fmt::Display for ReplyError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            ReplyError::Protocol(message) => f.write_str(message),
            ReplyError::Malformed(error) => {
                write!(
                    f,
                    "The browser sent an unreadable accessibility tree: {error}"
                )
            }
        }
    }
}

impl std::error::Error for ReplyError {}

/// The `nodes` of a whole reply message (`{"id":…,"result":{"nodes":[…]}}`), borrowing
/// from `text`. Entries that are not objects are dropped, as Puppeteer's loop skips them.
pub fn parse_full_ax_tree(text: &str) -> Result<Vec<CdpNode<'_>>, ReplyError> {
    read_full_ax_tree(text, |node| node)
}

/// [`parse_full_ax_tree`] with each node turned into `T` as soon as it is read, into a list
/// sized once: a 10,000-node reply is neither copied while the list grows nor held twice.
pub fn read_full_ax_tree<'a, T>(
    text: &'a str,
    mut map: impl FnMut(CdpNode<'a>) -> T,
) -> Result<Vec<T>, ReplyError> {
    let seed = ReplySeed {
        capacity: node_capacity(text),
        map: &mut map,
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let reply = de::DeserializeSeed::deserialize(seed, &mut deserializer)
        .and_then(|reply| deserializer.end().map(|()| reply))
        .map_err(|error| ReplyError::Malformed(error.to_string()))?;
    reply.map_err(ReplyError::Protocol)
}

/// [`read_full_ax_tree`] over the reply as the browser's CBOR pipe carries it: the same
/// visitors, with text borrowed from the message and every field Puppeteer does not read
/// (the names' sources, the internal roles) skipped by its length instead of scanned.
pub fn read_full_ax_tree_cbor<'a, T>(
    message: &'a [u8],
    mut map: impl FnMut(CdpNode<'a>) -> T,
) -> Result<Vec<T>, ReplyError> {
    let seed = ReplySeed {
        capacity: cbor_node_capacity(message),
        map: &mut map,
    };
    let reply = devtools_cbor::from_message_seed(message, seed)
        .map_err(|error| ReplyError::Malformed(error.to_string()))?;
    reply.map_err(ReplyError::Protocol)
}

/// [`node_capacity`] for a CBOR message: one `nodeId` key (a 6-byte text string's head and
/// bytes) per node; a page's text could only add to it through strings of that exact form,
/// and the reservation is capped the same way.
fn cbor_node_capacity(message: &[u8]) -> usize {
    let keys = memchr::memmem::find_iter(message, b"\x66nodeId").count();
    keys.min(message.len() / 16)
}

/// The `nodes` array alone (`[{…}, …]`), as tests and captures hold it.
pub fn parse_nodes(text: &str) -> Result<Vec<CdpNode<'_>>, ReplyError> {
    let nodes: List<MaybeNode> =
        serde_json::from_str(text).map_err(|error| ReplyError::Malformed(error.to_string()))?;
    Ok(nodes.0.into_iter().filter_map(|node| node.0).collect())
}

/// What a CDP message is, read without looking into its `result` or `params` (they are
/// skipped, not parsed): the reader of a connection routes replies by `id` with this.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    #[serde(default)]
    pub id: Option<u64>,
    #[serde(default)]
    pub method: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
}

impl Envelope {
    pub fn read(text: &str) -> Option<Envelope> {
        serde_json::from_str(text).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_borrow_from_the_text_and_unescape_when_needed() {
        let text = r#"{"id":7,"result":{"nodes":[
            {"nodeId":"1","ignored":false,"role":{"type":"role","value":"button"},
             "name":{"type":"computedString","value":"Say \"hi\""},
             "properties":[{"name":"focusable","value":{"type":"booleanOrUndefined","value":true}}],
             "childIds":["2"],"backendDOMNodeId":5,"frameId":"F"},
            3, null,
            {"nodeId":"2","role":5,"properties":"nope","childIds":{"a":1},"name":{"value":{"x":[1]}}}
        ]},"sessionId":"S"}"#;
        let nodes = parse_full_ax_tree(text).expect("nodes");
        assert_eq!(nodes.len(), 2);
        let first = &nodes[0];
        assert!(matches!(
            first.role.value,
            JsValue::Str(Cow::Borrowed("button"))
        ));
        assert_eq!(first.name.value.as_str(), Some("Say \"hi\""));
        assert_eq!(first.properties.0[0].name.as_str(), Some("focusable"));
        assert_eq!(first.properties.0[0].value.value, JsValue::Bool(true));
        assert_eq!(first.child_ids.0, [JsValue::Str(Cow::Borrowed("2"))]);
        assert_eq!(first.backend_dom_node_id.as_i64(), Some(5));
        let odd = &nodes[1];
        assert!(odd.role.present && odd.role.value == JsValue::Undefined);
        assert!(odd.properties.0.is_empty() && odd.child_ids.0.is_empty());
        assert_eq!(odd.name.value, JsValue::Compound);
        assert_eq!(
            Envelope::read(text),
            Some(Envelope {
                id: Some(7),
                method: None,
                session_id: Some("S".into())
            })
        );
    }

    #[test]
    fn the_list_is_sized_from_the_text_but_never_beyond_it() {
        let text = r#"{"id":1,"result":{"nodes":[{"nodeId":"1"},{"nodeId":"2"}]}}"#;
        assert_eq!(node_capacity(text), 2);
        // A page's text arrives escaped and is not counted; a hostile text is bounded.
        let escaped =
            r#"{"id":1,"result":{"nodes":[{"nodeId":"1","name":{"value":"\"nodeId\""}}]}}"#;
        assert_eq!(node_capacity(escaped), 1);
        let many = "\"nodeId\"".repeat(100);
        assert!(node_capacity(&many) <= many.len() / 16);
        let nodes = read_full_ax_tree(text, |node| node.node_id).expect("nodes");
        assert_eq!(nodes.len(), 2);
    }

    #[test]
    fn errors_and_garbage_are_reported() {
        assert_eq!(
            parse_full_ax_tree(r#"{"id":1,"error":{"code":-32000,"message":"No frame"}}"#),
            Err(ReplyError::Protocol("No frame".into()))
        );
        assert!(matches!(
            parse_full_ax_tree("{\"id\":1,"),
            Err(ReplyError::Malformed(_))
        ));
        assert_eq!(parse_full_ax_tree(r#"{"id":1,"result":{}}"#), Ok(vec![]));
        assert_eq!(parse_full_ax_tree(r#"{"id":1,"result":null}"#), Ok(vec![]));
        assert_eq!(
            parse_full_ax_tree(r#"{"id":1,"result":{"nodes":{"a":1}}}"#),
            Ok(vec![])
        );
        assert!(matches!(
            parse_full_ax_tree(r#"{"id":1,"result":{"nodes":[]},"result":{"nodes":[]}}"#),
            Err(ReplyError::Malformed(_))
        ));
        assert!(matches!(
            parse_full_ax_tree(r#"{"id":1,"result":{"nodes":[]}} trailing"#),
            Err(ReplyError::Malformed(_))
        ));
        assert_eq!(Envelope::read("3"), None);
    }
}
